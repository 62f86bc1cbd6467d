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
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/peage/appliance/appliance/journal"
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
)

// Open reports whether the payment still holds its nonce without being final.
func (s Status) Open() bool { return s == Reserved || s == Queued || s == Broadcast }

// Record is one payment.
type Record struct {
	ID          string    `json:"id"` // payer:nonce (lowercase hex)
	Payer       string    `json:"payer"`
	Nonce       string    `json:"nonce"`
	Route       string    `json:"route"`
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
	Settled     time.Time `json:"settled,omitzero"`
	// Request is what is needed to settle later (the queue) or after a restart.
	Request x402.FacilitatorRequest `json:"request"`
}

// ID is the ledger key of a payment: the EIP-3009 nonce is unique per payer and token.
func ID(payer, nonce string) string { return strings.ToLower(payer) + ":" + strings.ToLower(nonce) }

// ErrExists is returned by Reserve when the nonce is already held or used.
var ErrExists = errors.New("ledger: nonce already recorded")

// ErrUnknown is returned for an ID the ledger does not hold.
var ErrUnknown = errors.New("ledger: unknown payment")

// Ledger is the in-memory index of the journal. It is safe for concurrent use.
type Ledger struct {
	j   *journal.Journal
	now func() time.Time

	mu   sync.Mutex
	recs map[string]*Record
}

// Options configure a ledger.
type Options struct {
	Dir    string
	Sync   journal.Sync // SyncAlways in production: a reservation is acknowledged only once on disk
	Now    func() time.Time
	Logger *slog.Logger
}

// Open replays the journal and compacts it (released reservations are dropped).
func Open(o Options) (*Ledger, error) {
	j, err := journal.Open(journal.Options{Dir: o.Dir, Name: "payments", Sync: o.Sync, Logger: o.Logger})
	if err != nil {
		return nil, err
	}
	l := &Ledger{j: j, now: o.Now, recs: map[string]*Record{}}
	if l.now == nil {
		l.now = time.Now
	}
	err = j.Replay(func(b []byte) error {
		var r Record
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("ledger record: %w", err)
		}
		l.recs[r.ID] = &r
		return nil
	})
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
	maps.DeleteFunc(l.recs, func(_ string, r *Record) bool { return r.Status == Released })
	for _, r := range l.recs {
		if r.Status == Settled || r.Status == Failed {
			r.Request, r.RawTx = x402.FacilitatorRequest{}, ""
		}
	}
	return l.j.Compact(func(emit func([]byte) error) error {
		for _, id := range slices.Sorted(maps.Keys(l.recs)) {
			b, err := json.Marshal(l.recs[id])
			if err != nil {
				return err
			}
			if err := emit(b); err != nil {
				return err
			}
		}
		return nil
	})
}

// Size is the journal's size on disk, to decide when to compact.
func (l *Ledger) Size() int64 { return l.j.Size() }

// Close closes the journal.
func (l *Ledger) Close() error { return l.j.Close() }

// write journals r (a copy) and returns once it is durable. Called with l.mu held; it waits
// for the fsync after unlocking so concurrent writers share it.
func (l *Ledger) writeLocked(r *Record) (uint64, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return 0, err
	}
	return l.j.Write(b)
}

// Reserve records a new payment as Reserved. If the nonce is already recorded (and not
// released) it returns ErrExists with a copy of the existing record.
func (l *Ledger) Reserve(r Record) (Record, error) {
	l.mu.Lock()
	if old, ok := l.recs[r.ID]; ok && old.Status != Released {
		cp := *old
		l.mu.Unlock()
		return cp, ErrExists
	}
	now := l.now().UTC()
	r.Status, r.Reserved, r.Updated = Reserved, now, now
	seq, err := l.writeLocked(&r)
	if err != nil {
		l.mu.Unlock()
		return Record{}, err
	}
	l.recs[r.ID] = &r
	l.mu.Unlock()
	return r, l.j.WaitDurable(seq)
}

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
	l.recs[id] = &next
	l.mu.Unlock()
	return next, l.j.WaitDurable(seq)
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
	out := make([]Record, 0, len(l.recs))
	for _, r := range l.recs {
		if len(statuses) == 0 || slices.Contains(statuses, r.Status) {
			out = append(out, *r)
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
	payer = strings.ToLower(payer)
	l.mu.Lock()
	defer l.mu.Unlock()
	var sum uint64
	for _, r := range l.recs {
		if (r.Status == Queued || r.Status == Broadcast) && strings.ToLower(r.Payer) == payer {
			sum += r.Amount
		}
	}
	return sum
}

// RevenueRow is the settled revenue of one route on one UTC day.
type RevenueRow struct {
	Day    string `json:"day"` // YYYY-MM-DD, UTC, of settlement
	Route  string `json:"route"`
	Calls  int    `json:"calls"`
	Amount uint64 `json:"amount"` // atomic units
}

// Revenue sums settled payments by UTC day and route, days ascending.
func (l *Ledger) Revenue() []RevenueRow {
	type k struct{ day, route string }
	sums := map[k]*RevenueRow{}
	for _, r := range l.List(Settled) {
		key := k{r.Settled.UTC().Format(time.DateOnly), r.Route}
		row := sums[key]
		if row == nil {
			row = &RevenueRow{Day: key.day, Route: key.route}
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
		return out[i].Route < out[j].Route
	})
	return out
}
