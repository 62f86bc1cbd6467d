// Package ledger is the facilitator's durable record of payments. Every payment is written to a
// write-ahead journal when its nonce is reserved, again before each broadcast (with the
// transaction hash), and when it ends, so after a crash the facilitator knows which payments
// may be on chain and reconciles them instead of losing or repeating them.
package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/big"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/peage/appliance/internal/journal"
	"github.com/peage/appliance/settle/x402"
)

// Status is where a payment stands.
type Status string

const (
	// Reserved: verified and its nonce claimed; the paid work is running. Not yet owed.
	Reserved Status = "reserved"
	// Released: the work failed; nothing is charged and the authorization may be presented again.
	Released Status = "released"
	// Queued: the work succeeded and the payment is owed; it waits for the settlement queue.
	Queued Status = "queued"
	// Broadcast: a transferWithAuthorization transaction was signed (hash recorded) and sent.
	Broadcast Status = "broadcast"
	// Settled: the transfer is on chain.
	Settled Status = "settled"
	// Failed: the payment cannot be collected (reverted, expired before settlement).
	Failed Status = "failed"
	// Voucher: a batch-settlement voucher's delivered answer, recorded for its receipt only:
	// its money is its channel's (Channels), claimed with the channel, so no sum, exposure,
	// revenue or settlement of this ledger counts it.
	Voucher Status = "voucher"
)

// Open reports whether the payment still holds its nonce without being final.
func (s Status) Open() bool { return s == Reserved || s == Queued || s == Broadcast }

// Record is one payment.
type Record struct {
	ID          string    `json:"id"` // payer:nonce (lowercase hex)
	Payer       string    `json:"payer"`
	Nonce       string    `json:"nonce"`
	Route       string    `json:"route"`
	Box         string    `json:"box,omitempty"` // the fleet box that served the call; "" for the appliance itself
	RequestHash string    `json:"request_hash"`
	Amount      uint64    `json:"amount"` // atomic units
	Network     string    `json:"network"`
	Asset       string    `json:"asset"`
	ValidBefore int64     `json:"valid_before"`
	Status      Status    `json:"status"`
	TxHashes    []string  `json:"tx_hashes,omitempty"` // every signed transaction, replacements included
	Tx          string    `json:"tx,omitempty"`        // the one that was mined
	RawTx       string    `json:"raw_tx,omitempty"`    // the last signed transaction, to re-broadcast after a restart
	Reason      string    `json:"reason,omitempty"`
	Reserved    time.Time `json:"reserved"`
	Updated     time.Time `json:"updated"`
	// LeaseUntil ends a reservation whose completion never came (the resource server died
	// during the work): past it, the reservation is released (Expire), freeing the payer's
	// balance, unless its completion is under way (Completing).
	LeaseUntil time.Time `json:"lease_until,omitzero"`
	Settled    time.Time `json:"settled,omitzero"`
	// IdentifierHash and PayloadHash bind a replay to the payment identifier only the caller
	// knows (x402's payment-identifier extension); empty when the payment carried none.
	IdentifierHash string `json:"identifier_hash,omitempty"`
	PayloadHash    string `json:"payload_hash,omitempty"`
	// Wallet: the signature is a smart wallet's (ERC-1271); such payments settle before delivery.
	Wallet bool `json:"wallet,omitempty"`
	// Undelivered: the API could not learn the settlement's outcome in time and did not deliver
	// the result; if the payment settles anyway, the operator owes the payer a refund.
	Undelivered bool `json:"undelivered,omitempty"`
	// Remote: settlement was handed to the remote facilitator (Options.Remote); while the
	// record is broadcast without a transaction hash, that facilitator's outcome is unknown
	// and only the chain can tell (the nonce spent, or the authorization expired unspent).
	Remote bool `json:"remote,omitempty"`
	// GasWei is what the mined transaction cost the hot key (gas used × effective gas price,
	// decimal wei), set with its receipt whether it settled or reverted; a rollup's L1 data
	// fee is not in it (go-ethereum's receipt does not carry it).
	GasWei string `json:"gas_wei,omitempty"`
	// GasUsed is the same transaction's gas (units), for gas per paid call.
	GasUsed uint64 `json:"gas_used,omitempty"`
	// Receipt is what the API signed for the delivered answer: the payment response's
	// extensions (offer-receipt's receipt and the delivery statement), kept to be fetched again.
	Receipt json.RawMessage `json:"receipt,omitempty"`
	// Request is what is needed to settle later (the queue) or after a restart.
	Request x402.FacilitatorRequest `json:"request"`
}

// ID is the ledger key of a payment: the EIP-3009 nonce is unique per payer and token.
func ID(payer, nonce string) string { return strings.ToLower(payer) + ":" + strings.ToLower(nonce) }

// ErrExists is returned by Reserve when the nonce is already held or used.
var ErrExists = errors.New("ledger: nonce already recorded")

// ErrUnknown is returned for an ID the ledger does not hold.
var ErrUnknown = errors.New("ledger: unknown payment")

// ErrIdentifierUsed is returned by Reserve when another payment holds the payment identifier.
var ErrIdentifierUsed = errors.New("ledger: payment identifier already recorded")

// ErrInsufficient is returned by Reserve when the payer's balance does not cover this payment
// on top of everything the payer has reserved or owes.
var ErrInsufficient = errors.New("ledger: balance does not cover the payer's open payments")

// ErrOverCap is returned by Owe when optimistic delivery would pass an exposure cap.
var ErrOverCap = errors.New("ledger: optimistic exposure cap reached")

// Ledger is the in-memory index of the journal. It is safe for concurrent use.
type Ledger struct {
	j   *journal.Journal
	now func() time.Time

	mu   sync.Mutex
	recs map[string]*Record
	sums
	completing map[string]bool // reservations whose completion is under way: their lease holds
	// deposits are the batch-settlement deposits of held requests, by channel: the payer's
	// USDC they will move is counted as open until they are executed or given up.
	deposits map[string]deposit
}

type deposit struct {
	payer  string
	amount uint64
}

// sums are running totals over recs, kept by index/unindex on every change, so the checks made
// under the lock at each reservation cost nothing per record held.
type sums struct {
	reserved    map[string]uint64    // payer (lowercase) → amount of Reserved payments
	leased      map[string]time.Time // Reserved payment ID → its lease's end
	depositSum  map[string]uint64    // payer → amount of pending deposits
	owed        map[string]uint64    // payer → amount of Queued and Broadcast payments
	owedTotal   uint64
	failed      map[string]bool   // payers with a payment that could not be collected
	identifiers map[string]string // identifier hash → record ID, for records not released
	// open holds the IDs of the records whose status is still open (Reserved, Queued,
	// Broadcast): the settlement queue lists them at every completion, and scanning every
	// record the ledger keeps, under its lock, would grow with the ledger's history.
	open map[Status]map[string]struct{}
}

// openStatuses are the statuses a record leaves: open indexes their records.
var openStatuses = []Status{Reserved, Queued, Broadcast}

func (l *Ledger) index(r *Record, sign int) {
	payer := strings.ToLower(r.Payer)
	add := func(m map[string]uint64, v uint64) {
		if sign > 0 {
			m[payer] += v
		} else if m[payer] -= v; m[payer] == 0 {
			delete(m, payer)
		}
	}
	switch r.Status {
	case Reserved:
		add(l.reserved, r.Amount)
		if !r.LeaseUntil.IsZero() {
			if sign > 0 {
				l.leased[r.ID] = r.LeaseUntil
			} else {
				delete(l.leased, r.ID)
			}
		}
	case Queued, Broadcast:
		add(l.owed, r.Amount)
		if sign > 0 {
			l.owedTotal += r.Amount
		} else {
			l.owedTotal -= r.Amount
		}
	case Failed:
		if sign > 0 {
			l.failed[payer] = true
		}
	}
	if ids, ok := l.open[r.Status]; ok {
		if sign > 0 {
			ids[r.ID] = struct{}{}
		} else {
			delete(ids, r.ID)
		}
	}
	if r.IdentifierHash != "" && r.Status != Released {
		if sign > 0 {
			l.identifiers[r.IdentifierHash] = r.ID
		} else if l.identifiers[r.IdentifierHash] == r.ID {
			delete(l.identifiers, r.IdentifierHash)
		}
	}
}

// put replaces a record and keeps the sums. Called with l.mu held.
func (l *Ledger) put(r *Record) {
	if old, ok := l.recs[r.ID]; ok {
		l.index(old, -1)
	}
	l.recs[r.ID] = r
	l.index(r, +1)
}

func newSums() sums {
	open := map[Status]map[string]struct{}{}
	for _, st := range openStatuses {
		open[st] = map[string]struct{}{}
	}
	return sums{reserved: map[string]uint64{}, leased: map[string]time.Time{}, depositSum: map[string]uint64{}, owed: map[string]uint64{}, failed: map[string]bool{}, identifiers: map[string]string{}, open: open}
}

// Options configure a ledger.
type Options struct {
	Dir    string
	Sync   journal.Sync // SyncAlways in production: what lets a call be delivered or charged is acknowledged only once on disk
	Now    func() time.Time
	Logger *slog.Logger
}

// preallocate is the space the payments and channels journals keep written ahead of their
// last record: each paid call waits for its record's flush, which is about a third shorter when
// the record overwrites space the file has (journal.Options.Preallocate). A megabyte is a
// couple of thousand calls' records, zeroed once.
const preallocate = 1 << 20

// Open replays the journal and compacts it (released reservations are dropped).
func Open(o Options) (*Ledger, error) {
	j, err := journal.Open(journal.Options{Dir: o.Dir, Name: "payments", Sync: o.Sync, Preallocate: preallocate, Logger: o.Logger})
	if err != nil {
		return nil, err
	}
	l := &Ledger{j: j, now: o.Now, recs: map[string]*Record{}, sums: newSums(), completing: map[string]bool{}, deposits: map[string]deposit{}}
	if l.now == nil {
		l.now = time.Now
	}
	err = replay(j, "ledger", l.put)
	if err != nil {
		_ = j.Close()
		return nil, err
	}
	if err := l.Compact(); err != nil {
		_ = j.Close()
		return nil, err
	}
	return l, nil
}

// Compact rewrites the journal as the current state: released reservations are dropped, and
// final payments keep their facts but no longer the signed request and raw transaction, which
// only an unfinished settlement needs.
func (l *Ledger) Compact() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	maps.DeleteFunc(l.recs, func(_ string, r *Record) bool { return r.Status == Released }) // they count in no sum
	for _, r := range l.recs {
		if r.Status == Settled || r.Status == Failed {
			r.Request, r.RawTx = x402.FacilitatorRequest{}, ""
		}
	}
	return l.j.Compact(snapshot(l.recs))
}

// replay reads a journal of JSON records of V (what names them in an error), handing each to put.
func replay[V any](j *journal.Journal, what string, put func(*V)) error {
	return j.Replay(func(b []byte) error {
		var v V
		if err := json.Unmarshal(b, &v); err != nil {
			return fmt.Errorf("%s record: %w", what, err)
		}
		put(&v)
		return nil
	})
}

// snapshot is a journal's Compact body for a store whose journal replays into recs (the last
// record of a key wins): recs as JSON records, in key order.
func snapshot[V any](recs map[string]V) func(emit func([]byte) error) error {
	return func(emit func([]byte) error) error {
		for _, k := range slices.Sorted(maps.Keys(recs)) {
			b, err := json.Marshal(recs[k])
			if err != nil {
				return err
			}
			if err := emit(b); err != nil {
				return err
			}
		}
		return nil
	}
}

// Size is the journal's size on disk, to decide when to compact.
func (l *Ledger) Size() int64 { return l.j.Size() }

// Close closes the journal.
func (l *Ledger) Close() error { return l.j.Close() }

// writeLocked hands r to the journal (the OS) and returns its sequence number for
// WaitDurable. Called with l.mu held; callers that need it durable wait after unlocking, so
// concurrent writers share the fsync.
func (l *Ledger) writeLocked(r *Record) (uint64, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return 0, err
	}
	return l.j.Write(b)
}

// Reserve records a new payment as Reserved, atomically with two checks: the nonce and the
// payment identifier are not held by another payment (ErrExists, ErrIdentifierUsed, with a
// copy of the record holding them), and balance covers this payment on top of everything the
// payer has reserved or owes (ErrInsufficient), so concurrent calls cannot spend one balance
// twice.
//
// The reservation is handed to the OS (it survives kill -9 of the process) but Reserve does
// not wait for its fsync: a reservation a restart finds is released anyway (its call never
// answered), and every change that lets a call be delivered or charged (Owe, Update) is a
// later record of the same journal, whose fsync makes this one durable too. So a paid call
// waits for one fsync, its completion's, not two.
func (l *Ledger) Reserve(r Record, balance uint64) (Record, error) {
	l.mu.Lock()
	if old, ok := l.recs[r.ID]; ok && old.Status != Released {
		cp := *old
		l.mu.Unlock()
		return cp, ErrExists
	}
	if id, ok := l.identifiers[r.IdentifierHash]; ok && r.IdentifierHash != "" {
		cp := *l.recs[id]
		l.mu.Unlock()
		return cp, ErrIdentifierUsed
	}
	payer := strings.ToLower(r.Payer)
	if open := l.openLocked(payer); open+r.Amount < open || open+r.Amount > balance {
		l.mu.Unlock()
		return Record{}, ErrInsufficient
	}
	now := l.now().UTC()
	r.Status, r.Reserved, r.Updated = Reserved, now, now
	if _, err := l.writeLocked(&r); err != nil {
		l.mu.Unlock()
		return Record{}, err
	}
	l.put(&r)
	l.mu.Unlock()
	return r, nil
}

// Owe turns a reserved payment into an owed one for optimistic delivery, atomically with the
// caps: what the payer would owe unsettled stays within payerCap, what all payers would owe
// within totalCap, and a payer with a failed payment is never trusted again (ErrOverCap).
func (l *Ledger) Owe(id string, payerCap, totalCap uint64) (Record, error) {
	return l.Update(id, func(r *Record) error {
		if r.Status != Reserved {
			return fmt.Errorf("ledger: payment %s is %s, not reserved", id, r.Status)
		}
		payer := strings.ToLower(r.Payer)
		if l.failed[payer] || l.owed[payer]+r.Amount > payerCap || l.owedTotal+r.Amount > totalCap {
			return ErrOverCap
		}
		r.Status = Queued
		return nil
	})
}

// ByIdentifier returns the payment holding an identifier hash (not released).
func (l *Ledger) ByIdentifier(hash string) (Record, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	id, ok := l.identifiers[hash]
	if !ok || hash == "" {
		return Record{}, false
	}
	return *l.recs[id], true
}

// Open is what payer has reserved or owes and is not yet on chain, pending deposits included
// (atomic units).
func (l *Ledger) Open(payer string) uint64 {
	payer = strings.ToLower(payer)
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.openLocked(payer)
}

// openLocked is Open of a lowercase payer. Called with l.mu held.
func (l *Ledger) openLocked(payer string) uint64 {
	return l.reserved[payer] + l.owed[payer] + l.depositSum[payer]
}

// HoldDeposit counts a batch-settlement deposit of amount from payer, held for a request of
// channel until DropDeposit, as open, atomically with balance covering it on top of
// everything else open for the payer (ErrInsufficient): an exact payment verified meanwhile
// cannot count on the same USDC, nor a deposit on USDC an exact payment will move. The
// channel's own earlier deposit, if any, is replaced.
func (l *Ledger) HoldDeposit(channel, payer string, amount, balance uint64) error {
	payer = strings.ToLower(payer)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dropDepositLocked(channel)
	if open := l.openLocked(payer); open+amount < open || open+amount > balance {
		return ErrInsufficient
	}
	l.deposits[channel] = deposit{payer: payer, amount: amount}
	l.depositSum[payer] += amount
	return nil
}

// DropDeposit stops counting channel's held deposit (executed, failed or given up).
func (l *Ledger) DropDeposit(channel string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dropDepositLocked(channel)
}

func (l *Ledger) dropDepositLocked(channel string) {
	d, ok := l.deposits[channel]
	if !ok {
		return
	}
	delete(l.deposits, channel)
	if l.depositSum[d.payer] -= d.amount; l.depositSum[d.payer] == 0 {
		delete(l.depositSum, d.payer)
	}
}

// ErrLeaseExpired: the reservation's lease ran out before its completion; it was released.
var ErrLeaseExpired = errors.New("ledger: the reservation's lease ran out; it was released")

// Completing marks a reserved payment's completion under way, so its lease no longer ends it;
// Completed unmarks it. A reservation whose lease already ran out is released instead
// (ErrLeaseExpired): its caller must not deliver.
func (l *Ledger) Completing(id string) error {
	l.mu.Lock()
	r, ok := l.recs[id]
	switch {
	case !ok:
		l.mu.Unlock()
		return ErrUnknown
	case r.Status != Reserved || r.LeaseUntil.IsZero() || l.now().Before(r.LeaseUntil):
		l.completing[id] = true
		l.mu.Unlock()
		return nil
	}
	l.mu.Unlock()
	if _, err := l.Update(id, func(r *Record) error {
		if r.Status == Reserved {
			r.Status = Released
		}
		return nil
	}); err != nil {
		return err
	}
	return ErrLeaseExpired
}

// Completed ends what Completing marked.
func (l *Ledger) Completed(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.completing, id)
}

// Expire releases every reservation whose lease has run out and whose completion is not under
// way, and returns them: their work was never answered, so nothing is charged.
func (l *Ledger) Expire() ([]Record, error) {
	now := l.now()
	l.mu.Lock()
	var due []string
	for id, until := range l.leased {
		if !l.completing[id] && !now.Before(until) {
			due = append(due, id)
		}
	}
	l.mu.Unlock()
	var out []Record
	for _, id := range due {
		r, err := l.Update(id, func(r *Record) error {
			if r.Status != Reserved || l.completing[id] {
				return errNotDue
			}
			r.Status = Released
			return nil
		})
		switch {
		case errors.Is(err, errNotDue):
		case err != nil:
			return out, err
		default:
			out = append(out, r)
		}
	}
	return out, nil
}

// errNotDue: a reservation completed or marked completing between Expire's look and its update.
var errNotDue = errors.New("ledger: reservation no longer due to expire")

// Update applies fn to the record and journals the result durably. fn may refuse the change by
// returning an error, which Update returns unchanged.
func (l *Ledger) Update(id string, fn func(r *Record) error) (Record, error) {
	l.mu.Lock()
	cur, ok := l.recs[id]
	if !ok {
		l.mu.Unlock()
		return Record{}, ErrUnknown
	}
	next := *cur
	next.TxHashes = slices.Clone(cur.TxHashes)
	if err := fn(&next); err != nil {
		l.mu.Unlock()
		return *cur, err
	}
	next.Updated = l.now().UTC()
	if next.Status == Settled && next.Settled.IsZero() {
		next.Settled = next.Updated
	}
	seq, err := l.writeLocked(&next)
	if err != nil {
		l.mu.Unlock()
		return Record{}, err
	}
	l.put(&next)
	l.mu.Unlock()
	return next, l.j.WaitDurable(seq)
}

// KeepVoucher records a delivered batch-settlement voucher with its receipt (Status Voucher,
// Nonce "channelId:maxClaimableAmount"), so that it is found by payer and nonce as a payment
// is. A voucher already recorded keeps its first receipt: a voucher is charged once.
func (l *Ledger) KeepVoucher(r Record) error {
	r.ID, r.Status = ID(r.Payer, r.Nonce), Voucher
	r.Reserved = l.now().UTC()
	r.Updated = r.Reserved
	l.mu.Lock()
	if _, ok := l.recs[r.ID]; ok {
		l.mu.Unlock()
		return nil
	}
	seq, err := l.writeLocked(&r)
	if err != nil {
		l.mu.Unlock()
		return err
	}
	l.put(&r)
	l.mu.Unlock()
	return l.j.WaitDurable(seq)
}

// Get returns a copy of the record.
func (l *Ledger) Get(id string) (Record, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.recs[id]
	if !ok {
		return Record{}, false
	}
	return *r, true
}

// Used reports whether the nonce is held or spent (anything but released).
func (l *Ledger) Used(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.recs[id]
	return ok && r.Status != Released
}

// List returns copies of the records whose status is in statuses (all when none given),
// oldest reservation first.
func (l *Ledger) List(statuses ...Status) []Record {
	l.mu.Lock()
	var out []Record
	if len(statuses) > 0 && !slices.ContainsFunc(statuses, func(st Status) bool { return l.open[st] == nil }) {
		for i, st := range statuses {
			if slices.Contains(statuses[:i], st) {
				continue
			}
			for id := range l.open[st] {
				out = append(out, *l.recs[id])
			}
		}
	} else {
		out = make([]Record, 0, len(l.recs))
		for _, r := range l.recs {
			if len(statuses) == 0 || slices.Contains(statuses, r.Status) {
				out = append(out, *r)
			}
		}
	}
	l.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Reserved.Equal(out[j].Reserved) {
			return out[i].Reserved.Before(out[j].Reserved)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Exposure is what payer owes for work already delivered but not yet on chain.
func (l *Ledger) Exposure(payer string) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.owed[strings.ToLower(payer)]
}

// OwedTotal is what all payers owe for delivered work not yet on chain.
func (l *Ledger) OwedTotal() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.owedTotal
}

// RevenueRow is the settled revenue of one route on one UTC day, per fleet box that served
// the calls ("" for the appliance itself).
type RevenueRow struct {
	Day    string `json:"day"` // YYYY-MM-DD, UTC, of settlement
	Route  string `json:"route"`
	Box    string `json:"box,omitempty"`
	Calls  int    `json:"calls"`
	Amount uint64 `json:"amount"` // atomic units
}

// Revenue sums settled payments by UTC day, route and box, days ascending.
func (l *Ledger) Revenue() []RevenueRow {
	type k struct{ day, route, box string }
	sums := map[k]*RevenueRow{}
	for _, r := range l.List(Settled) {
		key := k{r.Settled.UTC().Format(time.DateOnly), r.Route, r.Box}
		row := sums[key]
		if row == nil {
			row = &RevenueRow{Day: key.day, Route: key.route, Box: key.box}
			sums[key] = row
		}
		row.Calls++
		row.Amount += r.Amount
	}
	out := make([]RevenueRow, 0, len(sums))
	for _, r := range sums {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Day != out[j].Day {
			return out[i].Day < out[j].Day
		}
		if out[i].Route != out[j].Route {
			return out[i].Route < out[j].Route
		}
		return out[i].Box < out[j].Box
	})
	return out
}

// StatusFigures is how many payments stand in one status and what they amount to.
type StatusFigures struct {
	Payments int    `json:"payments"`
	Amount   uint64 `json:"amount"` // atomic units
}

// GasDay is the gas the hot key spent on one UTC day (of the transaction's outcome).
type GasDay struct {
	Day          string `json:"day"`
	Transactions int    `json:"transactions"`
	Wei          string `json:"wei"` // decimal
}

// Stats is the settlement's state for the operator: payments by status (reserved while the
// work runs; queued and broadcast are the settlement queue), the oldest payment still owed,
// and the gas spent.
type Stats struct {
	ByStatus map[Status]StatusFigures `json:"by_status"`
	// OldestOwed is the reservation time of the oldest queued or broadcast payment (zero: none).
	OldestOwed time.Time `json:"oldest_owed,omitzero"`
	GasWei     string    `json:"gas_wei"` // decimal, every mined transaction
	GasByDay   []GasDay  `json:"gas_by_day"`
	Gas        uint64    `json:"gas,omitempty"` // gas units of the same transactions
}

// Fsyncs counts the fsyncs of the payments journal.
func (l *Ledger) Fsyncs() uint64 { return l.j.Fsyncs() }

// Stats sums the ledger's payments by status and its mined transactions' gas by UTC day, days
// ascending.
func (l *Ledger) Stats() Stats {
	st := Stats{ByStatus: map[Status]StatusFigures{}, GasByDay: []GasDay{}}
	total := new(big.Int)
	days := map[string]*big.Int{}
	txs := map[string]int{}
	for _, r := range l.List() { // oldest reservation first
		f := st.ByStatus[r.Status]
		f.Payments++
		f.Amount += r.Amount
		st.ByStatus[r.Status] = f
		if (r.Status == Queued || r.Status == Broadcast) && st.OldestOwed.IsZero() {
			st.OldestOwed = r.Reserved
		}
		wei, ok := new(big.Int).SetString(r.GasWei, 10)
		if !ok {
			continue
		}
		st.Gas += r.GasUsed
		at := r.Settled
		if at.IsZero() {
			at = r.Updated
		}
		day := at.UTC().Format(time.DateOnly)
		if days[day] == nil {
			days[day] = new(big.Int)
		}
		days[day].Add(days[day], wei)
		txs[day]++
		total.Add(total, wei)
	}
	for _, day := range slices.Sorted(maps.Keys(days)) {
		st.GasByDay = append(st.GasByDay, GasDay{Day: day, Transactions: txs[day], Wei: days[day].String()})
	}
	st.GasWei = total.String()
	return st
}

// Summary is what a payment's record may show outside the facilitator: its facts and status,
// never the signed authorization or the raw transaction.
type Summary struct {
	Payer       string    `json:"payer"`
	Nonce       string    `json:"nonce"`
	Route       string    `json:"route,omitempty"`
	Box         string    `json:"box,omitempty"`
	Amount      uint64    `json:"amount"` // atomic units
	Status      Status    `json:"status"`
	Reason      string    `json:"reason,omitempty"`
	Tx          string    `json:"transaction,omitempty"`
	TxHashes    []string  `json:"sent_transactions,omitempty"`
	Undelivered bool      `json:"undelivered,omitempty"`
	Reserved    time.Time `json:"reserved_at"`
	Updated     time.Time `json:"updated_at"`
	Settled     time.Time `json:"settled_at,omitzero"`
	// Receipt: as Record.Receipt.
	Receipt json.RawMessage `json:"receipt,omitempty"`
}

// Summary is the record's outside view.
func (r *Record) Summary() Summary {
	return Summary{Payer: r.Payer, Nonce: r.Nonce, Route: r.Route, Box: r.Box, Amount: r.Amount, Status: r.Status, Reason: r.Reason,
		Tx: r.Tx, TxHashes: slices.Clone(r.TxHashes), Undelivered: r.Undelivered, Reserved: r.Reserved, Updated: r.Updated, Settled: r.Settled,
		Receipt: r.Receipt}
}

// Recent returns the n most recently updated payments, newest first.
func (l *Ledger) Recent(n int) []Summary {
	l.mu.Lock()
	recs := make([]*Record, 0, len(l.recs))
	for _, r := range l.recs {
		recs = append(recs, r)
	}
	slices.SortFunc(recs, func(a, b *Record) int {
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	out := make([]Summary, 0, min(n, len(recs)))
	for _, r := range recs[:min(n, len(recs))] {
		out = append(out, r.Summary())
	}
	l.mu.Unlock()
	return out
}
