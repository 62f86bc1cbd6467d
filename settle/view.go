package settle

import (
	"context"
	"fmt"
	"math/big"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"

	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/settle/batch"
)

// The channel view keeps each batch-settlement channel's on-chain state (ReadChannel's answer)
// in memory, so that a voucher's reservation does not read the chain on every call. Every
// ReadChannel feeds it, the daemon's own deposits, claims and refunds included (each is
// followed by a read); the contract's events remove a channel's entry, so that its next voucher
// reads the chain again. docs/gas.md ("The channel view") says why this keeps every guarantee:
// in short, an entry is only used while the view has processed the contract's logs recently
// (Options.ViewLag) and up to a block late enough that a withdrawal it has not seen could not
// finalize before the call's claim lands; and a voucher the entry would refuse is checked
// against a fresh read first. Nothing is written to disk: a restart starts empty.

// Defaults of the view's poll and lag bound.
const (
	DefaultViewPoll = time.Second
	DefaultViewLag  = 10 * time.Second
	// viewMaxRange is the most blocks one poll asks logs for; further behind (the RPC was
	// down), the view starts over from the head: dropping every entry is always safe.
	viewMaxRange = 1000
)

// channelEvents are the contract's events that change a channel (their first indexed topic is
// the channel id): balance, claimed total, pending withdrawal or refund nonce.
var channelEvents = func() map[common.Hash]bool {
	m, events := map[common.Hash]bool{}, settlementABI.GetABI().Events
	for _, name := range []string{"ChannelCreated", "ChannelClosed", "Deposited", "Claimed", "Refunded", "WithdrawInitiated", "WithdrawFinalized"} {
		m[events[name].ID] = true
	}
	return m
}()

type channelView struct {
	mu      sync.Mutex
	entries map[common.Hash]*Onchain
	// gens counts each channel's invalidations and epoch the view's resets: a read stores its
	// answer only if neither moved while it was asked, so an event processed during the read
	// is never overwritten by what the chain said before it.
	gens     map[common.Hash]uint64
	epoch    uint64
	head     uint64      // the last block whose logs are processed (0: none yet)
	headHash common.Hash // its hash: a different one at that height is a reorg
	headTime uint64      // its timestamp
	polledAt time.Time   // when the head was last confirmed (the facilitator's clock)
}

func newChannelView() *channelView {
	return &channelView{entries: map[common.Hash]*Onchain{}, gens: map[common.Hash]uint64{}}
}

// readStamp is what the view was at when a read of id began.
type readStamp struct{ gen, epoch uint64 }

func (v *channelView) stamp(id common.Hash) readStamp {
	v.mu.Lock()
	defer v.mu.Unlock()
	return readStamp{v.gens[id], v.epoch}
}

// store keeps a read's answer unless the channel changed (or the view was reset) since stamp.
func (v *channelView) store(id common.Hash, on *Onchain, s readStamp) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.gens[id] == s.gen && v.epoch == s.epoch {
		v.entries[id] = on
	}
}

// lookup answers a channel's state from memory when the view may be trusted for a call whose
// charge must be claimable within need of now: the logs were processed lately (lag), and a
// withdrawal the view has not seen, initiated after its head block, could not finalize within
// need (delay is the channel's withdrawal delay). nil: read the chain.
func (v *channelView) lookup(id common.Hash, now time.Time, lag, need time.Duration, delay uint64) *Onchain {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.polledAt.IsZero() || now.Sub(v.polledAt) > lag {
		return nil
	}
	if time.Unix(int64(v.headTime+delay), 0).Before(now.Add(need)) {
		return nil
	}
	return v.entries[id]
}

// forget drops a channel's entry: its next voucher reads the chain.
func (v *channelView) forget(id common.Hash) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.entries, id)
	v.gens[id]++
}

// syncView processes the settlement contract's logs from the view's head to the chain's: each
// channel event (and each removed log, should the node report one) drops its channel's entry.
// A different block at the processed height means a reorg replaced blocks the view had
// processed: every entry is dropped, since which logs went away is not known.
func (f *Facilitator) syncView(ctx context.Context) error {
	v := f.view
	started := f.o.Now()
	hdr, err := f.o.Backend.HeaderByNumber(ctx, nil)
	if err != nil {
		return fmt.Errorf("channel view: read head: %w", err)
	}
	v.mu.Lock()
	head, headHash := v.head, v.headHash
	v.mu.Unlock()
	n := hdr.Number.Uint64()
	restart := head == 0 || n < head || n-head > viewMaxRange
	if !restart {
		at := hdr
		if n != head {
			if at, err = f.o.Backend.HeaderByNumber(ctx, new(big.Int).SetUint64(head)); err != nil {
				return fmt.Errorf("channel view: read block %d: %w", head, err)
			}
		}
		restart = at.Hash() != headHash
	}
	if restart {
		v.mu.Lock()
		if head != 0 {
			f.log.Info("channel view starts over", obs.KeyFromBlock, head, obs.KeyHeadBlock, n)
		}
		v.entries = map[common.Hash]*Onchain{}
		v.epoch++
		v.head, v.headHash, v.headTime, v.polledAt = n, hdr.Hash(), hdr.Time, started
		v.mu.Unlock()
		return nil
	}
	if n > head {
		logs, err := f.o.Backend.FilterLogs(ctx, ethereum.FilterQuery{FromBlock: new(big.Int).SetUint64(head + 1), ToBlock: hdr.Number,
			Addresses: []common.Address{batch.SettlementAddress}})
		if err != nil {
			return fmt.Errorf("channel view: read logs %d-%d: %w", head+1, n, err)
		}
		for _, l := range logs {
			if len(l.Topics) > 1 && (channelEvents[l.Topics[0]] || l.Removed) {
				v.forget(l.Topics[1])
			}
		}
	}
	v.mu.Lock()
	v.head, v.headHash, v.headTime, v.polledAt = n, hdr.Hash(), hdr.Time, started
	v.mu.Unlock()
	return nil
}

// pollEvery runs poll (one poll of a view) every interval until ctx ends; a failed poll is
// logged as msg and leaves the view to age past its lag bound, and its readers read the chain
// meanwhile.
func (f *Facilitator) pollEvery(ctx context.Context, interval time.Duration, poll func(context.Context) error, msg string) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := poll(ctx); err != nil && ctx.Err() == nil {
			f.log.Warn(msg, keyErr, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
