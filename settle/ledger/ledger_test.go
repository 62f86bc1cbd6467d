package ledger

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/peage/appliance/internal/journal"
)

func open(t *testing.T, dir string, now func() time.Time) *Ledger {
	t.Helper()
	l, err := Open(Options{Dir: dir, Sync: journal.SyncAlways, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestLedgerSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	day1 := time.Date(2026, 11, 21, 23, 59, 0, 0, time.UTC)
	clock := day1
	now := func() time.Time { return clock }
	l := open(t, dir, now)
	add := func(id, route string, amount uint64) {
		t.Helper()
		if _, err := l.Reserve(Record{ID: id, Payer: "0xA", Route: route, Amount: amount}, math.MaxUint64); err != nil {
			t.Fatal(err)
		}
	}
	settle := func(id string) {
		t.Helper()
		if _, err := l.Update(id, func(r *Record) error { r.Status, r.Tx = Settled, "0xtx"+id; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	add("a", "chain.gas", 1000)
	if _, err := l.Update("a", func(r *Record) error { r.Request.X402Version, r.RawTx = 2, "0x02"; return nil }); err != nil {
		t.Fatal(err)
	}
	add("b", "chain.gas", 1000)
	add("c", "search", 3000)
	add("d", "search", 3000)
	settle("a")
	clock = day1.Add(2 * time.Minute) // the next UTC day
	settle("b")
	settle("c")
	if _, err := l.Update("d", func(r *Record) error { r.Status = Released; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Reserve(Record{ID: "a"}, math.MaxUint64); !errors.Is(err, ErrExists) {
		t.Fatalf("second reservation of a: %v", err)
	}
	if _, err := l.Reserve(Record{ID: "d", Route: "search", Amount: 3000}, math.MaxUint64); err != nil {
		t.Fatalf("a released nonce must be reservable again: %v", err)
	}
	if _, err := l.Update("d", func(r *Record) error { r.Status, r.Request.X402Version = Queued, 2; return nil }); err != nil {
		t.Fatal(err)
	}
	if got := l.Exposure("0xa"); got != 0 { // d was reserved again without a payer
		t.Fatalf("exposure %d", got)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = open(t, dir, now)
	defer l.Close()
	want := []RevenueRow{
		{Day: "2026-11-21", Route: "chain.gas", Calls: 1, Amount: 1000},
		{Day: "2026-11-22", Route: "chain.gas", Calls: 1, Amount: 1000},
		{Day: "2026-11-22", Route: "search", Calls: 1, Amount: 3000},
	}
	got := l.Revenue()
	if len(got) != len(want) {
		t.Fatalf("revenue %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("row %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if q := l.List(Queued); len(q) != 1 || q[0].ID != "d" || q[0].Request.X402Version != 2 {
		t.Fatalf("queued after reopen: %+v", q)
	}
	if r, ok := l.Get("a"); !ok || r.Tx != "0xtxa" || r.Settled.IsZero() || r.RawTx != "" || r.Request.X402Version != 0 {
		t.Fatalf("a after reopen: %+v", r)
	}
}

func TestReserveSumsThePayersOpenPayments(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, nil)
	rec := func(id, payer string, amount uint64, ident string) Record {
		return Record{ID: id, Payer: payer, Amount: amount, IdentifierHash: ident}
	}
	// A balance of 25 covers two reservations of 10, not a third, whatever their order.
	for _, id := range []string{"a", "b"} {
		if _, err := l.Reserve(rec(id, "0xA", 10, ""), 25); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Reserve(rec("c", "0xa", 10, ""), 25); !errors.Is(err, ErrInsufficient) {
		t.Fatalf("third reservation of 10 on a balance of 25: %v", err)
	}
	if _, err := l.Reserve(rec("other", "0xB", 10, ""), 10); err != nil {
		t.Fatalf("another payer's reservation: %v", err)
	}
	// Owed (optimistic) payments count too; released ones do not.
	if _, err := l.Owe("a", 100, 100); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Update("b", func(r *Record) error { r.Status = Released; return nil }); err != nil {
		t.Fatal(err)
	}
	if got := l.Open("0xa"); got != 10 {
		t.Fatalf("open %d, want 10 (a owed, b released)", got)
	}
	// The caps: per payer, across payers, and never again after a failure.
	if _, err := l.Reserve(rec("d", "0xA", 10, "ident-d"), 100); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Owe("d", 15, 100); !errors.Is(err, ErrOverCap) {
		t.Fatalf("payer cap: %v", err)
	}
	if _, err := l.Owe("d", 100, 15); !errors.Is(err, ErrOverCap) {
		t.Fatalf("total cap: %v", err)
	}
	if _, err := l.Reserve(rec("e", "0xC", 1, "ident-d"), 100); !errors.Is(err, ErrIdentifierUsed) {
		t.Fatalf("an identifier held by another payment: %v", err)
	}
	if got, ok := l.ByIdentifier("ident-d"); !ok || got.ID != "d" {
		t.Fatalf("by identifier: %+v %v", got, ok)
	}
	if _, err := l.Update("a", func(r *Record) error { r.Status = Failed; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Owe("d", 100, 100); !errors.Is(err, ErrOverCap) {
		t.Fatalf("a payer with a failed payment was trusted: %v", err)
	}
	// The sums are rebuilt from the journal.
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = open(t, dir, nil)
	defer l.Close()
	if got := l.Open("0xA"); got != 10 {
		t.Fatalf("open after reopen %d, want 10 (d reserved)", got)
	}
	if _, err := l.Owe("d", 100, 100); !errors.Is(err, ErrOverCap) {
		t.Fatal("the failed payer was forgotten at reopen")
	}
}

// TestListByStatus holds List's answer for open statuses (read from their index) to a filter of
// every record, through reservations, completions, settlements, releases, a compaction and a
// reopen.
func TestListByStatus(t *testing.T) {
	dir := t.TempDir()
	clock := time.Date(2026, 11, 29, 5, 0, 0, 0, time.UTC)
	now := func() time.Time { clock = clock.Add(time.Second); return clock }
	l := open(t, dir, now)
	step := []Status{Reserved, Queued, Broadcast, Settled, Failed, Released}
	for i := range 60 {
		id := fmt.Sprintf("0xa:%02d", i)
		if _, err := l.Reserve(Record{ID: id, Payer: "0xA", Route: "r", Amount: 1}, math.MaxUint64); err != nil {
			t.Fatal(err)
		}
		// Record i goes through the statuses up to step[i%6], Queued on the way to any later one.
		for _, st := range step[1 : i%len(step)+1] {
			if _, err := l.Update(id, func(r *Record) error { r.Status = st; return nil }); err != nil {
				t.Fatal(err)
			}
		}
	}
	check := func(when string) {
		t.Helper()
		all := l.List()
		for _, statuses := range [][]Status{{Reserved}, {Queued}, {Broadcast}, {Queued, Broadcast}, {Broadcast, Queued, Queued}, {Settled}, {Queued, Settled}, {Released}} {
			var want []string
			for _, r := range all {
				if slices.Contains(statuses, r.Status) {
					want = append(want, r.ID)
				}
			}
			var got []string
			for _, r := range l.List(statuses...) {
				got = append(got, r.ID)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: List(%v) = %v, want %v", when, statuses, got, want)
			}
		}
	}
	check("after the updates")
	if err := l.Compact(); err != nil {
		t.Fatal(err)
	}
	check("after a compaction")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = open(t, dir, now)
	defer l.Close()
	check("after a reopen")
	if n := len(l.List(Queued, Broadcast)); n != 20 {
		t.Fatalf("%d queued or broadcast, want 20", n)
	}
}

// BenchmarkListOwed is the settlement queue's look at the ledger (at every optimistic
// completion) beside a history of settled payments: it should not grow with the history.
func BenchmarkListOwed(b *testing.B) {
	for _, settled := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("settled=%d", settled), func(b *testing.B) {
			l, err := Open(Options{Dir: b.TempDir(), Sync: journal.SyncNever})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			for i := range settled + 8 {
				id := fmt.Sprintf("0xa:%d", i)
				if _, err := l.Reserve(Record{ID: id, Payer: "0xA", Amount: 1}, math.MaxUint64); err != nil {
					b.Fatal(err)
				}
				st := Settled
				if i >= settled {
					st = Queued
				}
				if _, err := l.Update(id, func(r *Record) error { r.Status = st; return nil }); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for b.Loop() {
				if n := len(l.List(Queued, Broadcast)); n != 8 {
					b.Fatalf("%d owed", n)
				}
			}
		})
	}
}
