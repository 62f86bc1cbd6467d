package chain

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/core/types"
)

// headReadTimeout bounds one read of the head: it serves every wait at once, none of whose
// contexts it can take.
const headReadTimeout = 10 * time.Second

// headWatch reads the chain's head for all of a Sender's waits at once: one read per poll
// interval however many transactions are in flight, and a wait asks for its receipts only
// when the head has risen since it last asked. Without it, each wait asked for its receipts
// every interval, which at 64 settlements in flight is over a hundred requests a second to a
// hosted endpoint that answers about fifty (docs/gas.md).
type headWatch struct {
	b     Backend
	every time.Duration
	log   *slog.Logger
	kick  chan struct{} // a read wanted before the next tick

	mu    sync.Mutex
	waits int                // waits joined
	stop  context.CancelFunc // ends the reading goroutine; nil while none runs
	head  uint64             // the highest head number read (0: none yet)
	// latest is the header of head while the watch runs and its last read succeeded (nil
	// otherwise): sends price their fees from it rather than reading a header each.
	latest *types.Header
	moved  chan struct{} // closed, and replaced, when head rises or a read fails
}

func newHeadWatch(b Backend, every time.Duration, log *slog.Logger) *headWatch {
	return &headWatch{b: b, every: every, log: log, kick: make(chan struct{}, 1), moved: make(chan struct{})}
}

// join registers a wait; the head is read while any wait is joined, at once when the first
// one joins. The returned func leaves.
func (w *headWatch) join() (leave func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.waits++
	if w.stop == nil {
		ctx, cancel := context.WithCancel(context.Background())
		w.stop = cancel
		go w.run(ctx)
	}
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.waits--; w.waits == 0 {
			w.stop()
			w.stop = nil
			w.latest = nil // no longer read: not fresh for the next send
		}
	}
}

// state is the highest head read so far and a channel closed when that changes (or a read
// fails, so that waits on a node whose head cannot be read look for receipts as they did
// before the watch).
func (w *headWatch) state() (head uint64, moved <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.head, w.moved
}

// fresh is the header of the head while the watch reads it (at most a poll interval and a read
// old), or nil when no wait runs or the last read failed.
func (w *headWatch) fresh() *types.Header {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.latest
}

// poke asks for a read now rather than at the next tick: a wait holding a receipt of a block
// past the head it knows confirms it without waiting an interval. Pokes meanwhile share it.
func (w *headWatch) poke() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

func (w *headWatch) run(ctx context.Context) {
	t := time.NewTicker(w.every)
	defer t.Stop()
	for {
		w.read(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-w.kick:
		}
	}
}

func (w *headWatch) read(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, headReadTimeout)
	h, err := w.b.HeaderByNumber(rctx, nil)
	cancel()
	if ctx.Err() != nil {
		return // no wait is left to tell
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.log.Warn("head not read; waits look for their receipts", keyErr, err)
		w.latest = nil
	} else if n := h.Number.Uint64(); n > w.head {
		w.head = n
		w.latest = h
	} else {
		return
	}
	close(w.moved)
	w.moved = make(chan struct{})
}
