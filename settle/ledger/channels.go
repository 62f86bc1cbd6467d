package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/peage/appliance/internal/journal"
	"github.com/peage/appliance/settle/x402"
)

// Channel is the server's state of one batch-settlement channel, as the scheme's specification
// lists it: the config, what was actually charged (cumulative), the latest voucher the payer
// signed and its signature, and the mirrored on-chain balance, totalClaimed, pending
// withdrawal and refund nonce. Amounts are atomic units; vouchers above 2^64-1 are refused
// before they get here.
type Channel struct {
	ID                  string             `json:"id"` // 0x-hex, lower case
	Config              x402.ChannelConfig `json:"config"`
	Charged             uint64             `json:"charged"`    // chargedCumulativeAmount
	SignedMax           uint64             `json:"signed_max"` // signedMaxClaimable of the latest voucher
	Signature           string             `json:"signature,omitempty"`
	Balance             uint64             `json:"balance"`
	TotalClaimed        uint64             `json:"total_claimed"`
	WithdrawRequestedAt uint64             `json:"withdraw_requested_at,omitempty"`
	RefundNonce         uint64             `json:"refund_nonce"`
	SyncedAt            time.Time          `json:"synced_at"`
	LastRequest         time.Time          `json:"last_request,omitzero"`
	Calls               uint64             `json:"calls"` // paid calls served on this channel
	// ByBox splits the calls and charges that fleet boxes served, by box (a call served by the
	// appliance itself is in neither), so revenue is shared per box as exact's ledger does.
	ByBox map[string]Served `json:"by_box,omitempty"`
	// ClaimTx is the claim transaction in flight for this channel (written before broadcast,
	// cleared at its receipt), so a restart finds it instead of claiming twice.
	ClaimTx string `json:"claim_tx,omitempty"`
	// PendingTx is the last transaction a request of this channel sent (a deposit, or a
	// refund and its claim), written before broadcast and cleared by the request's commit or
	// once it is mined, so a restart that lost the request still knows the channel and mirrors
	// it from the chain.
	PendingTx string `json:"pending_tx,omitempty"`
	// Last is the channel's last completed request: its voucher and the answer it got, so a
	// completion retried after a lost answer gets the same answer and charges nothing more.
	Last *Completion `json:"last,omitempty"`
	// ClaimGas is this channel's share of the gas of the claims that covered it (a claim's gas
	// divided among its rows), for the operator's gas per paid call.
	ClaimGas uint64 `json:"claim_gas,omitempty"`
}

// Completion is a completed request of a channel: the voucher it was paid with and the
// answer its completion gave.
type Completion struct {
	MaxClaimable string                   `json:"max_claimable"`
	Signature    string                   `json:"signature"`
	Hold         string                   `json:"hold,omitempty"` // the request's hold (x402.BatchReserveResponse.Hold)
	Result       x402.BatchSettleResponse `json:"result"`
}

// Answers reports whether c is the completion of the request paid with the voucher for max
// signed sig (a signature's hex is compared case-insensitively) and held as hold: a request
// whose hold expired, sent with the same voucher as the one completed after it, is another
// request ("" on either side compares the voucher only).
func (c *Completion) Answers(max, sig, hold string) bool {
	return c != nil && sig != "" && c.MaxClaimable == max && strings.EqualFold(c.Signature, sig) &&
		(hold == "" || c.Hold == "" || c.Hold == hold)
}

// Served is what a fleet box served: paid calls and what they were charged (atomic units).
type Served struct {
	Calls   uint64 `json:"calls"`
	Charged uint64 `json:"charged"`
}

// ServedBy counts one call charged charged on box, in a copy of the map (the channel's record
// is shared until its commit).
func (c *Channel) ServedBy(box string, charged uint64) {
	if box == "" {
		return
	}
	by := maps.Clone(c.ByBox)
	if by == nil {
		by = map[string]Served{}
	}
	s := by[box]
	s.Calls++
	s.Charged += charged
	by[box] = s
	c.ByBox = by
}

// Unclaimed is what the payer has been charged and the chain has not yet recorded as claimed.
func (c *Channel) Unclaimed() uint64 {
	if c.Charged < c.TotalClaimed {
		return 0
	}
	return c.Charged - c.TotalClaimed
}

// State is the channel snapshot of payment responses and corrective 402s.
func (c *Channel) State() x402.ChannelState {
	return x402.ChannelState{
		ChannelID: c.ID, Balance: fmt.Sprint(c.Balance), TotalClaimed: fmt.Sprint(c.TotalClaimed),
		WithdrawRequestedAt: c.WithdrawRequestedAt, RefundNonce: fmt.Sprint(c.RefundNonce),
		ChargedCumulativeAmount: fmt.Sprint(c.Charged),
	}
}

// Errors of the channel store.
var (
	// ErrBusy: another request of the same channel is between Begin and Commit/Abort.
	ErrBusy = errors.New("channel busy")
	// ErrNotBegun: Commit or Abort without a matching Begin.
	ErrNotBegun = errors.New("no request in progress on this channel")
)

// Channels is the journaled store of channel states. Requests are serialized per channel:
// Begin takes the channel, Commit records the charge durably (only after the paid work
// succeeded) and frees it, Abort frees it unchanged. Safe for concurrent use.
//
// A request held for the paid work (Hold) carries a lease: a resource server that died during
// the work never completes nor releases it, so once the lease has run out the hold is dropped
// as a failed call (nothing charged) by the next Begin, Take or TakeIf of its channel, and
// Expired is told. A request taken for its completion has no lease: its completion is under
// way in this process, which a restart ends.
type Channels struct {
	j       *journal.Journal
	now     func() time.Time
	expired func(id string, v any)

	mu   sync.Mutex
	recs map[string]*Channel
	busy map[string]*hold // channel id → the request taking it (v nil until Hold, and once taken)
}

// hold is what a request holds its channel with.
type hold struct {
	v     any
	until time.Time // the lease's end (only while v is attached)
}

// ChannelOptions configure the store.
type ChannelOptions struct {
	Dir    string
	Sync   journal.Sync
	Now    func() time.Time
	Logger *slog.Logger
	// Expired, when set, is told each hold dropped at the end of its lease (v is what Hold
	// attached), outside the store's lock.
	Expired func(id string, v any)
}

// Fsyncs counts the fsyncs of the channels journal.
func (c *Channels) Fsyncs() uint64 { return c.j.Fsyncs() }

// OpenChannels replays the channel journal (the last record of a channel wins) and compacts it.
func OpenChannels(o ChannelOptions) (*Channels, error) {
	j, err := journal.Open(journal.Options{Dir: o.Dir, Name: "channels", Sync: o.Sync, Preallocate: preallocate, Logger: o.Logger})
	if err != nil {
		return nil, err
	}
	s := &Channels{j: j, now: o.Now, expired: o.Expired, recs: map[string]*Channel{}, busy: map[string]*hold{}}
	if s.now == nil {
		s.now = time.Now
	}
	if s.expired == nil {
		s.expired = func(string, any) {}
	}
	err = replay(j, "channel", func(c *Channel) { s.recs[c.ID] = c })
	if err == nil {
		err = s.compact()
	}
	if err != nil {
		_ = j.Close()
		return nil, err
	}
	return s, nil
}

func (s *Channels) compact() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.j.Compact(snapshot(s.recs))
}

// Close closes the journal.
func (s *Channels) Close() error { return s.j.Close() }

// Get returns a copy of a channel's state.
func (s *Channels) Get(id string) (Channel, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.recs[strings.ToLower(id)]
	if !ok {
		return Channel{}, false
	}
	return *c, true
}

// List returns copies of every channel, by id.
func (s *Channels) List() []Channel {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Channel, 0, len(s.recs))
	for _, id := range slices.Sorted(maps.Keys(s.recs)) {
		out = append(out, *s.recs[id])
	}
	return out
}

// expireLocked drops id's hold if its lease has run out and returns what it held (nil
// otherwise). Called with s.mu held; the caller tells s.expired after unlocking.
func (s *Channels) expireLocked(id string) any {
	h, ok := s.busy[id]
	if !ok || h.v == nil || s.now().Before(h.until) {
		return nil
	}
	delete(s.busy, id)
	return h.v
}

// tellExpired reports a dropped hold (v nil: none).
func (s *Channels) tellExpired(id string, v any) {
	if v != nil {
		s.expired(id, v)
	}
}

// Begin takes the channel for one request and returns its current state (found false for a
// channel never seen). ErrBusy when another request holds it (a hold whose lease ran out is
// dropped first).
func (s *Channels) Begin(id string) (c Channel, found bool, err error) {
	id = strings.ToLower(id)
	s.mu.Lock()
	dropped := s.expireLocked(id)
	defer s.tellExpired(id, dropped)
	defer s.mu.Unlock()
	if _, ok := s.busy[id]; ok {
		return Channel{}, false, ErrBusy
	}
	s.busy[id] = &hold{}
	if r, ok := s.recs[id]; ok {
		return *r, true, nil
	}
	return Channel{}, false, nil
}

// Abort frees the channel unchanged (the paid work failed, or verification refused).
func (s *Channels) Abort(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.busy, strings.ToLower(id))
}

// Hold attaches v to a channel taken by Begin (the caller's request, until Take), with a
// lease ending at until.
func (s *Channels) Hold(id string, v any, until time.Time) {
	id = strings.ToLower(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if h, ok := s.busy[id]; ok {
		h.v, h.until = v, until
	}
}

// Take returns what Hold attached to a taken channel and detaches it, so only one caller gets
// it (nil when nothing is attached, or its lease ran out); the channel stays taken until Commit
// or Abort.
func (s *Channels) Take(id string) any {
	v, _ := s.TakeIf(id, func(any) bool { return true })
	return v
}

// TakeIf is Take of a value that match accepts; a value it refuses stays attached (nil is
// returned). completing reports a channel taken with nothing attached: a completion (or a
// reservation) is under way. A hold whose lease ran out is dropped, not taken.
func (s *Channels) TakeIf(id string, match func(v any) bool) (v any, completing bool) {
	id = strings.ToLower(id)
	s.mu.Lock()
	dropped := s.expireLocked(id)
	defer s.tellExpired(id, dropped)
	defer s.mu.Unlock()
	h, taken := s.busy[id]
	if !taken || h.v == nil {
		return nil, taken
	}
	if !match(h.v) {
		return nil, false
	}
	v = h.v
	h.v = nil
	return v, false
}

// Expire drops every hold whose lease has run out (those of channels no request touches
// again), telling Expired of each.
func (s *Channels) Expire() {
	s.mu.Lock()
	dropped := map[string]any{}
	for id := range s.busy {
		if v := s.expireLocked(id); v != nil {
			dropped[id] = v
		}
	}
	s.mu.Unlock()
	for id, v := range dropped {
		s.tellExpired(id, v)
	}
}

// Commit writes the channel's new state durably and frees it; it returns once the record is on
// disk (under SyncAlways). The state must come from Begin's copy, updated by the caller.
func (s *Channels) Commit(c Channel) error {
	c.ID = strings.ToLower(c.ID)
	s.mu.Lock()
	if _, ok := s.busy[c.ID]; !ok {
		s.mu.Unlock()
		return ErrNotBegun
	}
	if cur, ok := s.recs[c.ID]; ok {
		// The claimer may have written meanwhile: its claim in flight and a fresher reading
		// of the chain survive the request's commit.
		c.ClaimTx, c.ClaimGas = cur.ClaimTx, cur.ClaimGas
		if cur.SyncedAt.After(c.SyncedAt) {
			c.Balance, c.TotalClaimed, c.WithdrawRequestedAt, c.RefundNonce, c.SyncedAt =
				cur.Balance, cur.TotalClaimed, cur.WithdrawRequestedAt, cur.RefundNonce, cur.SyncedAt
		}
	}
	seq, err := s.writeLocked(&c)
	delete(s.busy, c.ID)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	return s.j.WaitDurable(seq)
}

// Update changes a channel outside a request (the claimer's bookkeeping, mirrored chain state),
// durably. It waits for no request: fn must only touch fields requests do not (the mirrored
// chain figures and ClaimTx), since a request's Commit writes its own copy.
func (s *Channels) Update(id string, fn func(c *Channel) error) (Channel, error) {
	return s.update(id, nil, fn)
}

// UpdateOrAdd is Update, applied to fresh (its ID set to id) when the store has no such channel.
func (s *Channels) UpdateOrAdd(id string, fresh Channel, fn func(c *Channel) error) (Channel, error) {
	return s.update(id, &fresh, fn)
}

func (s *Channels) update(id string, fresh *Channel, fn func(c *Channel) error) (Channel, error) {
	id = strings.ToLower(id)
	s.mu.Lock()
	r, ok := s.recs[id]
	if !ok && fresh == nil {
		s.mu.Unlock()
		return Channel{}, ErrUnknown
	}
	if !ok {
		fresh.ID = id
		r = fresh
	}
	c := *r
	if err := fn(&c); err != nil {
		s.mu.Unlock()
		return Channel{}, err
	}
	seq, err := s.writeLocked(&c)
	s.mu.Unlock()
	if err != nil {
		return Channel{}, err
	}
	return c, s.j.WaitDurable(seq)
}

func (s *Channels) writeLocked(c *Channel) (uint64, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return 0, err
	}
	seq, err := s.j.Write(b)
	if err != nil {
		return 0, err
	}
	cp := *c
	s.recs[c.ID] = &cp
	return seq, nil
}
