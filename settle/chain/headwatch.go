package chain

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"
)

// headReadTimeout bounds one read of the head: it serves every wait at once, none of whose
// contexts it can take.
const headReadTimeout = 10 * time.Second

// maxBlocksRead is how many new blocks one rise of the head has read for their receipts; a
// head further ahead (a watch that was stopped, a node catching up) costs each wait a lookup
// instead, fewer requests than the blocks.
const maxBlocksRead = 8

// BlockReceiptsReader is the endpoint's eth_getBlockReceipts (ethclient's BlockReceipts). A
// Backend without it, or an endpoint that refuses it, leaves each wait to look up its own
// receipts when the head rises.
type BlockReceiptsReader interface {
	BlockReceipts(ctx context.Context, blockNrOrHash rpc.BlockNumberOrHash) ([]*types.Receipt, error)
}

// headWatch reads the chain's head for all of a Sender's waits at once: one read per poll
// interval however many transactions are in flight, and a wait asks for its receipts only
// when the head has risen since it last asked. Without it, each wait asked for its receipts
// every interval, which at 64 settlements in flight is over a hundred requests a second to a
// hosted endpoint that answers about fifty (docs/gas.md).
//
// When the head rises, the watch also reads the receipts of each new block, one request a
// block, and keeps those of the transactions the waits await: a wait then needs no lookup of
// its own but at its first look and on its deadlines, or when the head moved over blocks the
// watch did not read (a gap).
type headWatch struct {
	b     Backend
	every time.Duration
	log   *slog.Logger
	kick  chan struct{} // a read wanted before the next tick

	mu    sync.Mutex
	waits int                // waits joined
	stop  context.CancelFunc // ends the reading goroutine; nil while none runs
	head  uint64             // the highest head number read (0: none yet)
	// latest is the newest header the watch or a send read, at latestAt (nil after a failed
	// read of the watch): sends price their fees from it rather than reading a header each.
	latest   *types.Header
	latestAt time.Time
	moved    chan struct{} // closed, and replaced, when head rises or a read fails
	// blocks reads a block's receipts; nil when the backend has no such method or the
	// endpoint refused it.
	blocks   BlockReceiptsReader
	failing  bool                           // the last block read failed (logged once a run of failures)
	cold     bool                           // no read yet in this run: the blocks since the last are not read
	gaps     uint64                         // counts the rises of the head over blocks not read, and failed reads
	awaited  map[common.Hash]int            // the hashes waits await, by how many waits
	receipts map[common.Hash]*types.Receipt // receipts of awaited hashes found in the blocks read
}

func newHeadWatch(b Backend, every time.Duration, log *slog.Logger) *headWatch {
	blocks, _ := b.(BlockReceiptsReader)
	return &headWatch{b: b, every: every, log: log, kick: make(chan struct{}, 1), moved: make(chan struct{}),
		blocks: blocks, awaited: map[common.Hash]int{}, receipts: map[common.Hash]*types.Receipt{}}
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
		w.cold = true
		go w.run(ctx)
	}
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.waits--; w.waits == 0 {
			w.stop()
			w.stop = nil
		}
	}
}

// await adds hashes to those whose receipts the blocks read are searched for. A block read
// before a hash is awaited is not searched again: the wait's own lookup after await covers it.
func (w *headWatch) await(hashes ...common.Hash) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, h := range hashes {
		w.awaited[h]++
	}
}

// forget undoes await.
func (w *headWatch) forget(hashes ...common.Hash) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, h := range hashes {
		if w.awaited[h]--; w.awaited[h] <= 0 {
			delete(w.awaited, h)
			delete(w.receipts, h)
		}
	}
}

// found is a receipt of one of hashes the blocks read so far held, or nil.
func (w *headWatch) found(hashes []common.Hash) *types.Receipt {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, h := range hashes {
		if r := w.receipts[h]; r != nil {
			return r
		}
	}
	return nil
}

// state is the highest head read so far, a channel closed when that changes (or a read
// fails, so that waits on a node whose head cannot be read look for receipts as they did
// before the watch), and the count of gaps: a wait that saw another count looks for its own
// receipts, the blocks read not covering the time since it last did.
func (w *headWatch) state() (head uint64, moved <-chan struct{}, gaps uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.head, w.moved, w.gaps
}

// fresh is the header of the head if it was read within the last poll interval, or nil.
func (w *headWatch) fresh() *types.Header {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.latest == nil || time.Since(w.latestAt) >= w.every {
		return nil
	}
	return w.latest
}

// saw keeps h, the head a send read, for the fees of the sends after it.
func (w *headWatch) saw(h *types.Header) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.keepLatest(h)
}

// keepLatest makes h the latest header unless a newer one is still fresh. Called with w.mu held.
func (w *headWatch) keepLatest(h *types.Header) {
	if w.latest == nil || h.Number.Cmp(w.latest.Number) >= 0 || time.Since(w.latestAt) >= w.every {
		w.latest, w.latestAt = h, time.Now()
	}
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
	var blocks [][]*types.Receipt
	if err == nil {
		w.mu.Lock()
		prev, reader, cold := w.head, w.blocks, w.cold
		w.cold = false
		w.mu.Unlock()
		if n := h.Number.Uint64(); reader != nil && !cold && n > prev && n-prev <= maxBlocksRead {
			blocks = w.readBlocks(ctx, reader, prev, h)
		}
	}
	if ctx.Err() != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.log.Warn("head not read; waits look for their receipts", keyErr, err)
		w.latest = nil
		w.gaps++
	} else if n := h.Number.Uint64(); n > w.head {
		w.head = n
		w.keepLatest(h)
		if blocks == nil {
			w.gaps++
		}
		for _, rs := range blocks {
			for _, r := range rs {
				if w.awaited[r.TxHash] > 0 {
					w.receipts[r.TxHash] = r
				}
			}
		}
	} else {
		if n == w.head { // still the head: fresh for the fees
			w.keepLatest(h)
		}
		return
	}
	close(w.moved)
	w.moved = make(chan struct{})
}

// readBlocks reads the receipts of the blocks after prev up to head, the head by its hash (a
// load-balanced endpoint's node that lags answers "not found" rather than another block), or
// nil if any could not be read.
func (w *headWatch) readBlocks(ctx context.Context, reader BlockReceiptsReader, prev uint64, head *types.Header) [][]*types.Receipt {
	n := head.Number.Uint64()
	blocks := make([][]*types.Receipt, 0, n-prev)
	for num := prev + 1; num <= n; num++ {
		at := rpc.BlockNumberOrHashWithNumber(rpc.BlockNumber(num))
		if num == n {
			at = rpc.BlockNumberOrHashWithHash(head.Hash(), false)
		}
		rctx, cancel := context.WithTimeout(ctx, headReadTimeout)
		rs, err := reader.BlockReceipts(rctx, at)
		cancel()
		if err != nil {
			w.blockReadFailed(ctx, err)
			return nil
		}
		blocks = append(blocks, rs)
	}
	w.mu.Lock()
	w.failing = false
	w.mu.Unlock()
	return blocks
}

// methodNotFound is JSON-RPC's code for a method the endpoint does not serve.
const methodNotFound = -32601

func (w *headWatch) blockReadFailed(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var re rpc.Error
	if errors.As(err, &re) && re.ErrorCode() == methodNotFound {
		w.blocks = nil
		w.log.Warn("endpoint refuses eth_getBlockReceipts; each wait looks up its own receipts", keyErr, err)
		return
	}
	if !w.failing {
		w.log.Warn("block receipts not read; waits look up their own", keyErr, err)
	}
	w.failing = true
}
