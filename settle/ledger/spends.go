package ledger

import (
	"cmp"
	"encoding/json"
	"log/slog"
	"maps"
	"math/big"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/peage/appliance/internal/journal"
)

// Kinds of batch-settlement transaction the hot key pays for.
const (
	SpendDeposit = "deposit" // a payer's gasless deposit, executed by the facilitator
	SpendClaim   = "claim"   // claimWithSignature over many channels
	SpendSweep   = "sweep"   // settle: claimed value to payTo in one transfer
	SpendRefund  = "refund"  // refundWithSignature
)

// States of a batch-settlement transaction in the journal.
const (
	TxMined     = ""          // its receipt was seen: Gas and Wei are what it cost
	TxBroadcast = "broadcast" // signed and about to be broadcast: no receipt seen yet
	TxDropped   = "dropped"   // never mined: its account nonce went to another transaction
)

// Spend is one batch-settlement transaction of the hot key: journaled before its broadcast
// (Status TxBroadcast, with the signed transaction, so a restart finds it, waits for it or
// sends it again instead of sending another), then with what it cost once mined.
type Spend struct {
	Tx     string    `json:"tx"`
	Kind   string    `json:"kind"`
	Status string    `json:"status,omitempty"`
	Gas    uint64    `json:"gas"`
	Wei    string    `json:"wei"` // gas × effective gas price, decimal
	At     time.Time `json:"at"`
	Nonce  uint64    `json:"nonce,omitempty"`  // the hot key's account nonce
	Raw    string    `json:"raw,omitempty"`    // the signed transaction, kept while in flight
	Amount string    `json:"amount,omitempty"` // value it moves (deposit, sweep, refund), decimal
	// Channel is the channel a deposit or refund is for (empty for claims and sweeps).
	Channel string `json:"channel,omitempty"`
}

// Spends is the journal of batch-settlement transactions (journal "batchtx"), one record per
// transaction hash: recording one twice (after a restart found its receipt) counts it once.
type Spends struct {
	j *journal.Journal

	mu   sync.Mutex
	recs map[string]Spend
}

// Fsyncs counts the fsyncs of the batch transactions journal.
func (s *Spends) Fsyncs() uint64 { return s.j.Fsyncs() }

// OpenSpends replays the journal and compacts it.
func OpenSpends(dir string, sync journal.Sync, log *slog.Logger) (*Spends, error) {
	j, err := journal.Open(journal.Options{Dir: dir, Name: "batchtx", Sync: sync, Logger: log})
	if err != nil {
		return nil, err
	}
	s := &Spends{j: j, recs: map[string]Spend{}}
	err = replay(j, "batch transaction", func(sp *Spend) { s.recs[sp.Tx] = *sp })
	if err == nil {
		err = j.Compact(snapshot(s.recs))
	}
	if err != nil {
		_ = j.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the journal.
func (s *Spends) Close() error { return s.j.Close() }

// Broadcast journals a signed transaction durably before it is broadcast (Status TxBroadcast).
// A hash already journaled is left as it is.
func (s *Spends) Broadcast(sp Spend) error {
	sp.Status = TxBroadcast
	return s.write(sp, func(Spend) (Spend, bool) { return sp, false })
}

// Record writes a mined transaction durably, once per hash: it completes the transaction's
// broadcast record (kind, nonce, amount and channel kept, the signed bytes dropped).
func (s *Spends) Record(sp Spend) error {
	sp.Status, sp.Raw = TxMined, ""
	return s.write(sp, func(old Spend) (Spend, bool) {
		sp.Nonce, sp.Amount, sp.Channel = old.Nonce, old.Amount, old.Channel
		return sp, true
	})
}

// Drop marks a transaction in flight as never to be mined.
func (s *Spends) Drop(tx string) error {
	s.mu.Lock()
	sp, ok := s.recs[strings.ToLower(tx)]
	s.mu.Unlock()
	if !ok {
		return ErrUnknown
	}
	sp.Status, sp.Raw = TxDropped, ""
	return s.write(sp, func(Spend) (Spend, bool) { return sp, true })
}

// InFlight lists the transactions broadcast and not yet seen mined or dropped, oldest nonce
// first.
func (s *Spends) InFlight() []Spend {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Spend
	for _, sp := range s.recs {
		if sp.Status == TxBroadcast {
			out = append(out, sp)
		}
	}
	slices.SortFunc(out, func(a, b Spend) int { return cmp.Or(cmp.Compare(a.Nonce, b.Nonce), strings.Compare(a.Tx, b.Tx)) })
	return out
}

// Get is the journaled transaction of hash tx.
func (s *Spends) Get(tx string) (Spend, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sp, ok := s.recs[strings.ToLower(tx)]
	return sp, ok
}

// List is every journaled transaction, by hash.
func (s *Spends) List() []Spend {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Spend, 0, len(s.recs))
	for _, k := range slices.Sorted(maps.Keys(s.recs)) {
		out = append(out, s.recs[k])
	}
	return out
}

// write journals sp; when its hash is journaled already, merge (given the journaled record)
// returns what to write instead, or false to leave it. A mined record is final.
func (s *Spends) write(sp Spend, merge func(old Spend) (Spend, bool)) error {
	sp.Tx = strings.ToLower(sp.Tx)
	s.mu.Lock()
	if old, ok := s.recs[sp.Tx]; ok {
		var write bool
		if sp, write = merge(old); old.Status == TxMined || !write {
			s.mu.Unlock()
			return nil
		}
		sp.Tx = old.Tx
	}
	b, err := json.Marshal(sp)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	seq, err := s.j.Write(b)
	if err == nil {
		s.recs[sp.Tx] = sp
	}
	s.mu.Unlock()
	if err != nil {
		return err
	}
	return s.j.WaitDurable(seq)
}

// GasFigures are transactions and what they cost.
type GasFigures struct {
	Transactions int    `json:"transactions"`
	Gas          uint64 `json:"gas"`
	Wei          string `json:"wei"` // decimal
}

func (g *GasFigures) add(gas uint64, wei string) {
	g.Transactions++
	g.Gas += gas
	sum, _ := new(big.Int).SetString(g.Wei, 10)
	if sum == nil {
		sum = new(big.Int)
	}
	if w, ok := new(big.Int).SetString(wei, 10); ok {
		sum.Add(sum, w)
	}
	g.Wei = sum.String()
}

// ByKind sums the recorded transactions by kind (every kind listed, zeros kept).
func (s *Spends) ByKind() map[string]GasFigures {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]GasFigures{}
	for _, k := range []string{SpendDeposit, SpendClaim, SpendSweep, SpendRefund} {
		out[k] = GasFigures{Wei: "0"}
	}
	for _, sp := range s.recs {
		if sp.Status != TxMined {
			continue
		}
		g := out[sp.Kind]
		g.add(sp.Gas, sp.Wei)
		out[sp.Kind] = g
	}
	return out
}

// ChannelsReport is the operator's view of batch-settlement (GET /channels): every channel,
// the totals, the gas spent per paid call beside exact's, and the claimer. Amounts are atomic
// units.
type ChannelsReport struct {
	Enabled  bool          `json:"enabled"` // the scheme is on (a receiver authorizer is configured)
	Channels []ChannelView `json:"channels"`
	Totals   ChannelTotals `json:"totals"`
	Gas      GasPerCall    `json:"gas"`
	Claimer  ClaimerView   `json:"claimer"`
	// ByBox sums every channel's calls and charges by the fleet box that served them.
	ByBox map[string]Served `json:"by_box,omitempty"`
}

// Report builds the operator's view from the channel store's channels, the payment ledger's
// stats (exact's settlements and their gas) and the batch transactions by kind.
func Report(enabled bool, chans []Channel, st Stats, batch map[string]GasFigures, claimer ClaimerView) ChannelsReport {
	rep := ChannelsReport{Enabled: enabled, Channels: make([]ChannelView, 0, len(chans)), Claimer: claimer}
	for _, c := range chans {
		rep.Channels = append(rep.Channels, c.View())
		for box, served := range c.ByBox {
			if rep.ByBox == nil {
				rep.ByBox = map[string]Served{}
			}
			sum := rep.ByBox[box]
			sum.Calls += served.Calls
			sum.Charged += served.Charged
			rep.ByBox[box] = sum
		}
	}
	rep.Totals = Totals(rep.Channels)
	exact := GasFigures{Wei: st.GasWei, Gas: st.Gas}
	for _, g := range st.GasByDay {
		exact.Transactions += g.Transactions
	}
	rep.Gas = NewGasPerCall(exact, st.ByStatus[Settled].Payments, batch, rep.Totals.Calls)
	return rep
}

// ChannelView is one channel as the operator sees it.
type ChannelView struct {
	ID        string `json:"id"`
	Payer     string `json:"payer"`
	Balance   uint64 `json:"balance"`   // escrow on chain (mirrored at SyncedAt)
	Remaining uint64 `json:"remaining"` // balance not yet charged: what the payer can still spend
	Charged   uint64 `json:"charged"`   // chargedCumulativeAmount
	Claimed   uint64 `json:"claimed"`   // totalClaimed on chain
	Unclaimed uint64 `json:"unclaimed"` // charged, not yet claimed
	Calls     uint64 `json:"calls"`
	// WithdrawFinalizeAt is when the payer's pending withdrawal can finalize (zero: none).
	WithdrawFinalizeAt time.Time `json:"withdraw_finalize_at,omitzero"`
	ClaimInFlight      string    `json:"claim_in_flight,omitempty"`
	LastRequest        time.Time `json:"last_request,omitzero"`
	SyncedAt           time.Time `json:"synced_at,omitzero"`
}

// View is the channel's operator view.
func (c *Channel) View() ChannelView {
	v := ChannelView{ID: c.ID, Payer: c.Config.Payer, Balance: c.Balance, Charged: c.Charged, Claimed: c.TotalClaimed,
		Unclaimed: c.Unclaimed(), Calls: c.Calls, ClaimInFlight: c.ClaimTx, LastRequest: c.LastRequest, SyncedAt: c.SyncedAt}
	if c.Balance > c.Charged {
		v.Remaining = c.Balance - c.Charged
	}
	if c.WithdrawRequestedAt != 0 {
		v.WithdrawFinalizeAt = time.Unix(int64(c.WithdrawRequestedAt+c.Config.WithdrawDelay), 0).UTC()
	}
	return v
}

// ChannelTotals sum every channel.
type ChannelTotals struct {
	Channels           int    `json:"channels"`
	Calls              uint64 `json:"calls"`
	Balance            uint64 `json:"balance"`
	Charged            uint64 `json:"charged"`
	Claimed            uint64 `json:"claimed"`
	Unclaimed          uint64 `json:"unclaimed"`
	PendingWithdrawals int    `json:"pending_withdrawals"`
}

// Totals sums the views.
func Totals(vs []ChannelView) ChannelTotals {
	t := ChannelTotals{Channels: len(vs)}
	for _, v := range vs {
		t.Calls += v.Calls
		t.Balance += v.Balance
		t.Charged += v.Charged
		t.Claimed += v.Claimed
		t.Unclaimed += v.Unclaimed
		if !v.WithdrawFinalizeAt.IsZero() {
			t.PendingWithdrawals++
		}
	}
	return t
}

// GasPerCall is the gas the hot key spent against the paid calls it served: exact's
// settlements (one per settled payment) and batch-settlement's deposits, claims, sweeps and
// refunds (spread over the channels' calls). Per-call figures are integer divisions (0 with no
// call).
type GasPerCall struct {
	Exact      GasFigures            `json:"exact"`
	ExactCalls int                   `json:"exact_calls"` // settled exact payments
	Batch      map[string]GasFigures `json:"batch"`       // by kind: deposit, claim, sweep, refund
	BatchCalls uint64                `json:"batch_calls"` // paid calls served on channels
	// Per paid call: exact alone, batch-settlement alone, and both together.
	ExactPerCall GasFigures `json:"exact_per_call"`
	BatchPerCall GasFigures `json:"batch_per_call"`
	PerCall      GasFigures `json:"per_call"`
}

// NewGasPerCall divides each scheme's gas by its paid calls.
func NewGasPerCall(exact GasFigures, exactCalls int, batch map[string]GasFigures, batchCalls uint64) GasPerCall {
	g := GasPerCall{Exact: exact, ExactCalls: exactCalls, Batch: batch, BatchCalls: batchCalls}
	sumBatch := GasFigures{Wei: "0"}
	for _, f := range batch {
		sumBatch = sumFigures(sumBatch, f)
	}
	g.ExactPerCall = perCall(exact, uint64(exactCalls))
	g.BatchPerCall = perCall(sumBatch, batchCalls)
	g.PerCall = perCall(sumFigures(exact, sumBatch), uint64(exactCalls)+batchCalls)
	return g
}

func sumFigures(a, b GasFigures) GasFigures {
	wa, _ := new(big.Int).SetString(a.Wei, 10)
	wb, _ := new(big.Int).SetString(b.Wei, 10)
	if wa == nil {
		wa = new(big.Int)
	}
	if wb != nil {
		wa.Add(wa, wb)
	}
	return GasFigures{Transactions: a.Transactions + b.Transactions, Gas: a.Gas + b.Gas, Wei: wa.String()}
}

// perCall is f divided by calls (transactions stay the total).
func perCall(f GasFigures, calls uint64) GasFigures {
	out := GasFigures{Transactions: f.Transactions, Wei: "0"}
	if calls == 0 {
		return out
	}
	out.Gas = f.Gas / calls
	if w, ok := new(big.Int).SetString(f.Wei, 10); ok {
		out.Wei = w.Div(w, new(big.Int).SetUint64(calls)).String()
	}
	return out
}

// ClaimerView is the claimer's policy and its last round.
type ClaimerView struct {
	IntervalSeconds       int       `json:"interval_seconds"` // 0: not running
	MinClaimable          uint64    `json:"min_claimable"`
	WithdrawMarginSeconds int       `json:"withdraw_margin_seconds"`
	Rounds                int       `json:"rounds"`
	LastRound             time.Time `json:"last_round,omitzero"`
	LastClaimTx           string    `json:"last_claim_tx,omitempty"`
	LastError             string    `json:"last_error,omitempty"`
}
