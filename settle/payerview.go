package settle

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/settle/chain"
	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/usdc"
	"github.com/peage/appliance/settle/x402"
)

// The payer view spares the exact scheme's paid call most of its reads of the token. An exact
// call used to read the payer's nonce state and balance when it was reserved, and both again
// when it completed, to deliver optimistically only what is still collectable. Both facts
// change on chain only through the token's events from the payer: a nonce becomes used with
// AuthorizationUsed or AuthorizationCanceled, and FiatToken lowers a balance only with a
// Transfer from its holder. So the view processes those events (the payers it follows, their
// logs only) and:
//
//   - a reservation registers its nonce with the view, then reads the nonce state at the
//     view's head block, so that the read and the events processed after it meet without a gap;
//     the balance comes from the view's entry for the payer (a whole read, dropped by any
//     Transfer from the payer), read at the head when missing;
//   - a completion asks the chain for its head block only, brings the view up to it (one log
//     query for every completion waiting, at most, when a block came), and decides from the
//     view: the nonce unused if no event of it was processed since its read, the balance from
//     the entry. Its verdict is the one the two reads at the head would give.
//
// The view is trusted for a reservation only within Options.ViewLag of its last poll, and for
// a completion only at the chain's current head, in the epoch its nonce was registered in,
// and when every log query since covered its payer; anything else reads the chain as before.
// A reorg (the processed block replaced) starts it over. A balance the view finds short is
// read again before the call is refused: a Transfer to the payer is not followed. Nothing is
// written to disk: a restart starts empty, and releases every reservation anyway.
// docs/gas.md ("The payer view") says why every guarantee holds.

var (
	tokenEvents           = usdc.NewTestUSDC().GetABI().Events
	eventTransfer         = tokenEvents["Transfer"].ID
	eventAuthorizationUse = tokenEvents["AuthorizationUsed"].ID
	eventAuthorizationEnd = tokenEvents["AuthorizationCanceled"].ID
)

// maxViewPayers bounds the payers the view follows (each is a topic of its log query); past
// it, a new payer's calls read the chain. A payer with no call in flight is followed for
// viewIdle after its last call.
const (
	maxViewPayers = 512
	viewIdle      = time.Minute
)

type nonceKey struct {
	payer common.Address
	nonce common.Hash
}

// nonceWatch is a reserved nonce the view follows from the block its state was read at.
type nonceWatch struct {
	epoch uint64
	used  bool // an AuthorizationUsed or AuthorizationCanceled of it was processed
	// blind: a log query covered blocks after its read without asking for its payer's logs
	// (the payer came while the query was under way).
	blind bool
}

// balanceEntry is a payer's balance read at the view's head or before, with no Transfer from
// the payer processed since.
type balanceEntry struct {
	bal  *big.Int
	used time.Time // the last call that asked for it
}

type payerView struct {
	mu       sync.Mutex
	balances map[common.Address]*balanceEntry
	watches  map[nonceKey]*nonceWatch
	payers   map[common.Address]int // watched nonces per payer
	epoch    uint64
	head     uint64      // the last block whose logs are processed (0: none yet)
	headHash common.Hash // its hash: a different one at that height is a reorg
	polledAt time.Time   // when the head was last confirmed (the facilitator's clock)

	syncMu sync.Mutex // one log query at a time
	heads  headRounds
}

// headRounds shares the completions' reads of the chain's head: a completion joins the next
// round, which starts once the running one ends, so the head it is answered with was read
// after it arrived (until then the payer could cancel the nonce), and a dozen completions
// arriving during one round cost one read of the head and one log query in the next.
type headRounds struct {
	mu      sync.Mutex
	next    *headRound
	running bool
}

type headRound struct {
	done    chan struct{}
	waiting int    // completions that joined it
	head    uint64 // the chain's head the view was brought up to
	err     error
}

// headRoundTimeout bounds one round's reads (it serves many calls, none of whose contexts
// it can take).
const headRoundTimeout = 10 * time.Second

func newPayerView() *payerView {
	return &payerView{balances: map[common.Address]*balanceEntry{}, watches: map[nonceKey]*nonceWatch{}, payers: map[common.Address]int{}}
}

// viewStamp is the view a read was made at: its answer is stored only if the view has not
// moved since.
type viewStamp struct{ epoch, head uint64 }

// fresh reports whether the view polled within lag of now. Called with v.mu held.
func (v *payerView) fresh(now time.Time, lag time.Duration) bool {
	return !v.polledAt.IsZero() && now.Sub(v.polledAt) <= lag && v.head != 0
}

// follows reports whether the view follows payer, or has room to. Called with v.mu held.
func (v *payerView) follows(payer common.Address) bool {
	if v.payers[payer] > 0 || v.balances[payer] != nil {
		return true
	}
	return len(v.payers)+len(v.balances) < maxViewPayers
}

// watch registers a reservation's nonce and returns the block to read its state at; nil when
// the view may not be trusted (the read is then at the latest block and nothing is watched).
func (v *payerView) watch(k nonceKey, now time.Time, lag time.Duration) *big.Int {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.fresh(now, lag) || !v.follows(k.payer) {
		return nil
	}
	// A nonce already watched (the same payment presented twice at once) keeps its watch,
	// which has followed it since an earlier read; the refused copy's unwatch then drops it,
	// and the first call's completion reads the chain.
	if _, ok := v.watches[k]; !ok {
		v.payers[k.payer]++
		v.watches[k] = &nonceWatch{epoch: v.epoch}
	}
	return new(big.Int).SetUint64(v.head)
}

// unwatch forgets a nonce whose call is over (completed, released, expired or refused).
func (v *payerView) unwatch(k nonceKey) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, ok := v.watches[k]; !ok {
		return
	}
	delete(v.watches, k)
	if v.payers[k.payer]--; v.payers[k.payer] <= 0 {
		delete(v.payers, k.payer)
	}
}

// balance is the payer's entry, or the stamp to read it at (nil).
func (v *payerView) balance(payer common.Address, now time.Time) (*big.Int, viewStamp) {
	v.mu.Lock()
	defer v.mu.Unlock()
	e := v.balances[payer]
	if e == nil {
		return nil, viewStamp{v.epoch, v.head}
	}
	e.used = now
	return e.bal, viewStamp{v.epoch, v.head}
}

// store keeps a balance read at s unless the view moved since, or has no room for the payer.
func (v *payerView) store(payer common.Address, bal *big.Int, s viewStamp, now time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.epoch == s.epoch && v.head == s.head && v.follows(payer) {
		v.balances[payer] = &balanceEntry{bal: bal, used: now}
	}
}

// payerReads is what a reservation asks the chain through the view (exact.Reader).
type payerReads struct {
	f *Facilitator
	// viewBalance: the balance came from the view or was read at its head, not at the latest
	// block (a short one is read again before a refusal).
	viewBalance bool
}

// AuthorizationState registers the nonce with the view, then reads its state at the view's
// head (or at the latest block when the view is not trusted).
func (r *payerReads) AuthorizationState(ctx context.Context, tok, authorizer common.Address, nonce common.Hash) (bool, error) {
	at := r.f.payers.watch(nonceKey{authorizer, nonce}, r.f.o.Now(), r.f.o.ViewLag)
	return chain.Reader{B: r.f.o.Backend, Block: at}.AuthorizationState(ctx, tok, authorizer, nonce)
}

// BalanceOf answers the view's entry for a followed payer, else reads it at the view's head
// (stored for the next call) or, the view not trusted, at the latest block.
func (r *payerReads) BalanceOf(ctx context.Context, tok, owner common.Address) (*big.Int, error) {
	v := r.f.payers
	v.mu.Lock()
	trusted := v.fresh(r.f.o.Now(), r.f.o.ViewLag)
	v.mu.Unlock()
	if !trusted {
		return r.f.reader.BalanceOf(ctx, tok, owner)
	}
	r.viewBalance = true
	if b, _ := v.balance(owner, r.f.o.Now()); b != nil {
		return b, nil
	}
	return r.f.readBalanceAt(ctx, owner)
}

func (r *payerReads) IsValidSignature(ctx context.Context, wallet common.Address, digest common.Hash, sig []byte) (bool, error) {
	return r.f.reader.IsValidSignature(ctx, wallet, digest, sig)
}

// readBalanceAt reads the payer's balance at the view's head and stores it in the view.
func (f *Facilitator) readBalanceAt(ctx context.Context, payer common.Address) (*big.Int, error) {
	v := f.payers
	v.mu.Lock()
	s := viewStamp{v.epoch, v.head}
	v.mu.Unlock()
	b, err := chain.Reader{B: f.o.Backend, Block: new(big.Int).SetUint64(s.head)}.BalanceOf(ctx, f.o.Asset, payer)
	if err != nil {
		return nil, err
	}
	v.store(payer, b, s, f.o.Now())
	return b, nil
}

// errViewBehind: the chain's head is behind the view's (another query went further, or the
// chain went back): the view cannot say what that head holds.
var errViewBehind = errors.New("payer view: the chain's head is behind the view's")

// collectableFromView is collectable's verdict from the view brought up to the chain's head;
// decided false when the view cannot decide (the caller then reads the chain).
func (f *Facilitator) collectableFromView(ctx context.Context, rec *ledger.Record) (ok, decided bool) {
	k := nonceKey{common.HexToAddress(rec.Payer), common.HexToHash(rec.Nonce)}
	head, err := f.payersAtHead(ctx)
	if err != nil {
		return false, false
	}
	v := f.payers
	v.mu.Lock()
	w := v.watches[k]
	if w == nil || w.epoch != v.epoch || w.blind || v.head < head {
		v.mu.Unlock()
		return false, false
	}
	used := w.used
	var bal *big.Int
	if e := v.balances[k.payer]; e != nil {
		bal = e.bal
	}
	v.mu.Unlock()
	if used {
		if _, err := f.fail(rec.ID, x402.ReasonNonceUsed); err != nil {
			f.log.Error("ledger update failed", keyPayment, rec.ID, keyErr, err)
		}
		return false, true
	}
	open := f.ledger.Open(rec.Payer)
	if bal == nil || (bal.IsUint64() && bal.Uint64() < open) {
		// Missing, or short: a Transfer to the payer is not followed, so a short entry is read
		// again before the call goes the synchronous way.
		var err error
		if bal, err = f.readBalanceAt(ctx, k.payer); err != nil {
			return false, true
		}
	}
	return !bal.IsUint64() || bal.Uint64() >= open, true
}

// syncPayers brings the view up to hdr, the chain's head: the token's logs of the followed
// payers from the view's head to hdr, each Transfer from a payer dropping its balance, each
// AuthorizationUsed or AuthorizationCanceled marking its nonce if watched. A block at the
// view's height other than the one it processed is a reorg: the view starts over (epoch),
// since which logs went away is not known. own: hdr was read under syncMu by the caller (the
// poller), so a head behind the view's is the chain going back, not a slower caller.
func (f *Facilitator) syncPayers(ctx context.Context, hdr *types.Header, own bool) error {
	v := f.payers
	if !own {
		v.syncMu.Lock()
		defer v.syncMu.Unlock()
	}
	started := f.o.Now()
	v.mu.Lock()
	head, headHash := v.head, v.headHash
	followed := make([]common.Address, 0, len(v.payers)+len(v.balances))
	for p := range v.payers {
		followed = append(followed, p)
	}
	for p, e := range v.balances {
		if v.payers[p] == 0 && started.Sub(e.used) > viewIdle {
			delete(v.balances, p) // idle: its next call reads it again
		} else if v.payers[p] == 0 {
			followed = append(followed, p)
		}
	}
	v.mu.Unlock()
	n, hash := hdr.Number.Uint64(), hdr.Hash()
	if n == head && hash == headHash {
		v.mu.Lock()
		v.polledAt = started
		v.mu.Unlock()
		return nil
	}
	if n < head && !own {
		return errViewBehind
	}
	restart := head == 0 || n <= head || n-head > viewMaxRange
	if !restart && !(n == head+1 && hdr.ParentHash == headHash) {
		at, err := f.o.Backend.HeaderByNumber(ctx, new(big.Int).SetUint64(head))
		if err != nil {
			return fmt.Errorf("payer view: read block %d: %w", head, err)
		}
		restart = at.Hash() != headHash
	}
	var logs []types.Log
	if !restart && len(followed) > 0 {
		slices.SortFunc(followed, common.Address.Cmp)
		topics := make([]common.Hash, len(followed))
		for i, p := range followed {
			topics[i] = common.BytesToHash(p[:])
		}
		var err error
		logs, err = f.o.Backend.FilterLogs(ctx, ethereum.FilterQuery{FromBlock: new(big.Int).SetUint64(head + 1), ToBlock: hdr.Number,
			Addresses: []common.Address{f.o.Asset},
			Topics:    [][]common.Hash{{eventTransfer, eventAuthorizationUse, eventAuthorizationEnd}, topics}})
		if err != nil {
			return fmt.Errorf("payer view: read logs %d-%d: %w", head+1, n, err)
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, l := range logs {
		if l.Removed {
			restart = true
		}
	}
	if restart {
		if head != 0 {
			f.log.Info("payer view starts over", obs.KeyFromBlock, head, obs.KeyHeadBlock, n)
		}
		v.epoch++
		clear(v.balances)
	} else {
		in := map[common.Address]bool{}
		for _, p := range followed {
			in[p] = true
		}
		// A payer that came during the query had its blocks unasked: its entry is not kept,
		// and its watched nonces can no longer be vouched for.
		for p := range v.balances {
			if !in[p] {
				delete(v.balances, p)
			}
		}
		for k, w := range v.watches {
			if !in[k.payer] {
				w.blind = true
			}
		}
		for _, l := range logs {
			if len(l.Topics) < 2 {
				continue
			}
			payer := common.BytesToAddress(l.Topics[1][:])
			switch l.Topics[0] {
			case eventTransfer:
				delete(v.balances, payer)
			case eventAuthorizationUse, eventAuthorizationEnd:
				if len(l.Topics) > 2 {
					if w := v.watches[nonceKey{payer, l.Topics[2]}]; w != nil {
						w.used = true
					}
				}
			}
		}
	}
	v.head, v.headHash, v.polledAt = n, hash, started
	return nil
}

// payersAtHead brings the view up to a head of the chain read after the call, in the next
// head round, and returns that head's number.
func (f *Facilitator) payersAtHead(ctx context.Context) (uint64, error) {
	h := &f.payers.heads
	h.mu.Lock()
	if h.next == nil {
		h.next = &headRound{done: make(chan struct{})}
	}
	mine := h.next
	mine.waiting++
	if !h.running {
		h.running = true
		go f.headRounds()
	}
	h.mu.Unlock()
	select {
	case <-mine.done:
		return mine.head, mine.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// headRounds runs head rounds while completions wait for one.
func (f *Facilitator) headRounds() {
	h := &f.payers.heads
	for {
		h.mu.Lock()
		r := h.next
		if r == nil {
			h.running = false
			h.mu.Unlock()
			return
		}
		h.next = nil
		h.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), headRoundTimeout)
		hdr, err := f.o.Backend.HeaderByNumber(ctx, nil)
		if err == nil {
			r.head = hdr.Number.Uint64()
			err = f.syncPayers(ctx, hdr, false)
		}
		cancel()
		r.err = err
		close(r.done)
	}
}

// pollPayers is one poll of the payer view: the head read under the view's sync lock, so
// that a head behind the view's means the chain went back.
func (f *Facilitator) pollPayers(ctx context.Context) error {
	f.payers.syncMu.Lock()
	defer f.payers.syncMu.Unlock()
	hdr, err := f.o.Backend.HeaderByNumber(ctx, nil)
	if err != nil {
		return fmt.Errorf("payer view: read head: %w", err)
	}
	return f.syncPayers(ctx, hdr, true)
}

// watchKeyOf is the view's key of a ledger payment ID (payer:nonce).
func watchKeyOf(id string) nonceKey {
	payer, nonce, _ := strings.Cut(id, ":")
	return nonceKey{common.HexToAddress(payer), common.HexToHash(nonce)}
}
