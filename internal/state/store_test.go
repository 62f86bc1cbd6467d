package state

import (
	"bytes"
	"context"
	"fmt"
	"github.com/peage/appliance/internal/testclock"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/peage/appliance/internal/journal"
	"github.com/peage/appliance/internal/obs"
)

func quiet() *slog.Logger { return obs.Discard() }

func newClock() *testclock.Clock {
	return testclock.At(time.Date(2025, 3, 14, 10, 0, 0, 0, time.UTC))
}

func openStore(t *testing.T, dir string, clk *testclock.Clock) *Store {
	t.Helper()
	s, err := Open(dir, Options{Now: clk.Now, Logger: quiet(), NoBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func fill(t *testing.T, s *Store, clk *testclock.Clock) {
	t.Helper()
	now := clk.Now()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.CreateInbox(Inbox{ID: "in1", Key: "k1", Label: "first", CreatedAt: now, ExpiresAt: now.Add(2 * time.Hour)}))
	must(s.CreateInbox(Inbox{ID: "in2", Key: "k2", CreatedAt: now, ExpiresAt: now.Add(24 * time.Hour)}))
	for i := range 3 {
		_, err := s.AddEvent(context.Background(), Event{Inbox: "in1", Method: "POST", Query: [][2]string{{"a", fmt.Sprint(i)}},
			Header: map[string][]string{"Content-Type": {"application/json"}}, Kind: "json", Body: []byte(fmt.Sprintf(`{"n":%d}`, i))})
		must(err)
	}
	_, err := s.AddEvent(context.Background(), Event{Inbox: "in2", Method: "GET", Kind: "empty"})
	must(err)
	must(s.PutPage(Page{ID: "p1", Title: "Hello", HTML: "<p>hi</p>", CreatedAt: now, ExpiresAt: now.Add(48 * time.Hour)}))
	_, err = s.CreatePackage(Package{Key: "pk1", GB: 1, Payer: "0xabc"})
	must(err)
	_, err = s.AddUsage("pk1", 1000)
	must(err)
	_, err = s.AddUsage("pk1", 234)
	must(err)
	_, err = s.CreatePackage(Package{Key: "pk2", GB: 5})
	must(err)
	must(s.RevokePackage("pk2"))
	ok, _, err := s.UseFreeCall("0xpayer", "chain", "chain.gas")
	must(err)
	if !ok {
		t.Fatal("first free call not granted")
	}
	ok, _, _ = s.UseFreeCall("0xpayer", "chain", "chain.gas")
	if ok {
		t.Fatal("second free call granted")
	}
	ok, day, _ := s.UseFreeCall("1.2.3.4", "llm", "llm")
	if !ok {
		t.Fatal("other client refused")
	}
	must(s.ReleaseFreeCall("1.2.3.4", "llm", day))
}

func check(t *testing.T, s *Store, clk *testclock.Clock) {
	t.Helper()
	in, evs, err := s.Events(context.Background(), "in1", 0, 0)
	if err != nil || in.Label != "first" || in.Key != "k1" || in.Events != 3 || in.LastSeq != 3 || len(evs) != 3 {
		t.Fatalf("in1 = %+v, %d events, %v", in, len(evs), err)
	}
	for i, ev := range evs {
		if ev.Seq != uint64(i+1) || string(ev.Body) != fmt.Sprintf(`{"n":%d}`, i) || ev.Query[0][1] != fmt.Sprint(i) ||
			ev.Header["Content-Type"][0] != "application/json" || ev.Method != "POST" || ev.ReceivedAt.IsZero() {
			t.Fatalf("event %d = %+v", i, ev)
		}
	}
	if in.Bytes != int64(len(`{"n":0}`)*3) {
		t.Fatalf("in1 bytes = %d", in.Bytes)
	}
	in2, evs2, _ := s.Events(context.Background(), "in2", 0, 0)
	if in2.Events != 1 || len(evs2) != 1 || evs2[0].Kind != "empty" {
		t.Fatalf("in2 = %+v %+v", in2, evs2)
	}
	p, ok := s.Page("p1")
	if !ok || p.HTML != "<p>hi</p>" || p.Bytes != 9 || p.Title != "Hello" {
		t.Fatalf("page = %+v", p)
	}
	pk, ok := s.Package("pk1")
	if !ok || pk.BytesUsed != 1234 || pk.BytesTotal != GiB || pk.Payer != "0xabc" || !pk.Active(clk.Now()) {
		t.Fatalf("package = %+v", pk)
	}
	if pk2, _ := s.Package("pk2"); !pk2.Revoked || pk2.Active(clk.Now()) || pk2.BytesTotal != 5*GiB {
		t.Fatalf("pk2 = %+v", pk2)
	}
	if len(s.Packages()) != 2 {
		t.Fatal("packages")
	}
	day := Day(clk.Now())
	if !s.FreeCallUsed("0xpayer", "chain", day) || s.FreeCallUsed("1.2.3.4", "llm", day) || len(s.FreeCalls()) != 1 {
		t.Fatalf("free calls = %+v", s.FreeCalls())
	}
}

func TestRoundTripThroughReopen(t *testing.T) {
	dir, clk := t.TempDir(), newClock()
	s := openStore(t, dir, clk)
	fill(t, s, clk)
	check(t, s, clk)
	s.Close()

	s = openStore(t, dir, clk) // replays the log
	check(t, s, clk)
	if err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	check(t, s, clk)
	s.Close()

	s = openStore(t, dir, clk) // replays the snapshot
	check(t, s, clk)
	// Writes after a compaction continue the numbering.
	ev, err := s.AddEvent(context.Background(), Event{Inbox: "in1", Method: "PUT"})
	if err != nil || ev.Seq != 4 {
		t.Fatalf("seq = %d, %v", ev.Seq, err)
	}
	s.Close()
	s = openStore(t, dir, clk)
	defer s.Close()
	in, evs, _ := s.Events(context.Background(), "in1", 3, 0)
	if in.Events != 4 || len(evs) != 1 || evs[0].Method != "PUT" {
		t.Fatalf("after compaction + append: %+v %+v", in, evs)
	}
	if st := s.Stats(); st.Inboxes != 2 || st.Events != 5 || st.Pages != 1 || st.Packages != 2 || st.FreeCalls != 1 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestDuplicatesAndErrors(t *testing.T) {
	dir, clk := t.TempDir(), newClock()
	s := openStore(t, dir, clk)
	defer s.Close()
	fill(t, s, clk)
	if err := s.CreateInbox(Inbox{ID: "in1", ExpiresAt: clk.Now().Add(time.Hour)}); err != ErrExists {
		t.Fatalf("dup inbox: %v", err)
	}
	if err := s.PutPage(Page{ID: "p1"}); err != ErrExists {
		t.Fatalf("dup page: %v", err)
	}
	if _, err := s.CreatePackage(Package{Key: "pk1", GB: 1}); err != ErrExists {
		t.Fatalf("dup package: %v", err)
	}
	if _, err := s.AddEvent(context.Background(), Event{Inbox: "nope"}); err != ErrNotFound {
		t.Fatalf("event to unknown: %v", err)
	}
	if _, err := s.AddUsage("nope", 1); err != ErrNotFound {
		t.Fatalf("usage unknown: %v", err)
	}
	if err := s.SetUsages([]Usage{{"pk1", 2000}, {"nope", 9}}); err != nil {
		t.Fatal(err)
	}
	if p, _ := s.Package("pk1"); p.BytesUsed != 2000 {
		t.Fatal("SetUsages")
	}
	if err := s.SetUsages([]Usage{{"pk1", 5}}); err != nil {
		t.Fatal(err)
	}
	if p, _ := s.Package("pk1"); p.BytesUsed != 2000 {
		t.Fatal("SetUsages lowered a meter")
	}
	if p, err := s.AddUsage("pk1", 0); err != nil || p.BytesUsed != 2000 {
		t.Fatalf("zero delta: %+v %v", p, err)
	}
	if _, _, err := s.Events(context.Background(), "nope", 0, 0); err != ErrNotFound {
		t.Fatal(err)
	}
}

func TestInboxLimitAndConcurrentDeliveries(t *testing.T) {
	dir, clk := t.TempDir(), newClock()
	s := openStore(t, dir, clk)
	s.CreateInbox(Inbox{ID: "in", Key: "k", CreatedAt: clk.Now(), ExpiresAt: clk.Now().Add(time.Hour)})
	var wg sync.WaitGroup
	errs := make(chan error, 120)
	for i := range 120 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.AddEvent(context.Background(), Event{Inbox: "in", Method: "POST", Body: []byte(fmt.Sprint(i))})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	ok, full := 0, 0
	for err := range errs {
		switch err {
		case nil:
			ok++
		case ErrFull:
			full++
		default:
			t.Fatal(err)
		}
	}
	if ok != InboxMaxEvents || full != 20 {
		t.Fatalf("stored %d, refused %d", ok, full)
	}
	s.Close()
	s = openStore(t, dir, clk)
	defer s.Close()
	in, evs, _ := s.Events(context.Background(), "in", 0, 0)
	seen := map[string]bool{}
	for i, ev := range evs {
		if ev.Seq != uint64(i+1) || seen[string(ev.Body)] {
			t.Fatalf("event %d: seq %d body %s", i, ev.Seq, ev.Body)
		}
		seen[string(ev.Body)] = true
	}
	if in.Events != 100 || len(evs) != 100 {
		t.Fatalf("after reopen %d/%d", in.Events, len(evs))
	}
	_, page, _ := s.Events(context.Background(), "in", 40, 10)
	if len(page) != 10 || page[0].Seq != 41 || page[9].Seq != 50 {
		t.Fatalf("page = %d from %d", len(page), page[0].Seq)
	}
}

func TestWaitEventsWakesOnDelivery(t *testing.T) {
	clk := newClock()
	s := openStore(t, t.TempDir(), clk)
	defer s.Close()
	s.CreateInbox(Inbox{ID: "in", ExpiresAt: clk.Now().Add(time.Hour)})
	got := make(chan []Event)
	start := time.Now()
	go func() {
		_, evs, _ := s.WaitEvents(context.Background(), "in", 0, 0, 10*time.Second)
		got <- evs
	}()
	time.Sleep(50 * time.Millisecond)
	s.AddEvent(context.Background(), Event{Inbox: "in", Method: "POST"})
	select {
	case evs := <-got:
		if len(evs) != 1 || time.Since(start) > 5*time.Second {
			t.Fatalf("evs = %+v after %v", evs, time.Since(start))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reader not woken")
	}
	// Nothing after the cursor: times out empty, on time.
	t0 := time.Now()
	_, evs, err := s.WaitEvents(context.Background(), "in", 1, 0, 100*time.Millisecond)
	if err != nil || len(evs) != 0 || time.Since(t0) < 90*time.Millisecond || time.Since(t0) > 2*time.Second {
		t.Fatalf("timeout wait: %v %v %v", evs, err, time.Since(t0))
	}
	// Context cancellation ends the wait.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	t0 = time.Now()
	s.WaitEvents(ctx, "in", 1, 0, 10*time.Second)
	if time.Since(t0) > 2*time.Second {
		t.Fatal("ctx not honoured")
	}
}

// A reader looping on the cursor while writers deliver concurrently sees every event once.
func TestCursorNeverMissesNorRepeats(t *testing.T) {
	clk := newClock()
	s := openStore(t, t.TempDir(), clk)
	defer s.Close()
	s.CreateInbox(Inbox{ID: "in", ExpiresAt: clk.Now().Add(time.Hour)})
	var wg sync.WaitGroup
	for w := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				s.AddEvent(context.Background(), Event{Inbox: "in", Body: []byte(fmt.Sprintf("%d-%d", w, i))})
			}
		}()
	}
	var after uint64
	seen := map[string]bool{}
	deadline := time.Now().Add(10 * time.Second)
	for len(seen) < 100 && time.Now().Before(deadline) {
		_, evs, _ := s.WaitEvents(context.Background(), "in", after, 7, time.Second)
		for _, ev := range evs {
			if ev.Seq != after+1 || seen[string(ev.Body)] {
				t.Fatalf("seq %d after %d (%s)", ev.Seq, after, ev.Body)
			}
			seen[string(ev.Body)] = true
			after = ev.Seq
		}
	}
	wg.Wait()
	if len(seen) != 100 {
		t.Fatalf("saw %d", len(seen))
	}
}

func TestSweep(t *testing.T) {
	dir, clk := t.TempDir(), newClock()
	s := openStore(t, dir, clk)
	fill(t, s, clk)
	// A reader waiting on an inbox that expires is released.
	done := make(chan struct{})
	go func() {
		s.WaitEvents(context.Background(), "in1", 3, 0, 30*time.Second)
		close(done)
	}()
	time.Sleep(20 * time.Millisecond)
	clk.Add(3 * time.Hour) // in1 expired (2h), in2 (24h) and the page (48h) live
	s.Sweep()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("waiter on expired inbox not released")
	}
	if in, evs, err := s.Events(context.Background(), "in1", 0, 0); err != nil || len(evs) != 0 || !in.Expired(clk.Now()) {
		t.Fatalf("expired inbox: %+v %d %v", in, len(evs), err)
	}
	if _, err := s.AddEvent(context.Background(), Event{Inbox: "in1"}); err != ErrExpired {
		t.Fatalf("delivery to expired: %v", err)
	}
	if _, evs, _ := s.Events(context.Background(), "in2", 0, 0); len(evs) != 1 {
		t.Fatal("live inbox swept")
	}
	s.Close()
	// After a restart the replayed events of the expired inbox are swept again.
	s = openStore(t, dir, clk)
	if _, evs, _ := s.Events(context.Background(), "in1", 0, 0); len(evs) != 0 {
		t.Fatal("expired events came back")
	}
	clk.Add(48 * time.Hour)
	s.Sweep()
	if p, ok := s.Page("p1"); !ok || p.HTML != "" || !p.Expired(clk.Now()) {
		t.Fatalf("expired page = %+v %v", p, ok)
	}
	if len(s.FreeCalls()) != 0 {
		t.Fatal("old free calls kept")
	}
	clk.Add(8 * 24 * time.Hour) // past the tombstones
	s.Sweep()
	if _, ok := s.Inbox("in1"); ok {
		t.Fatal("tombstone kept")
	}
	if _, ok := s.Page("p1"); ok {
		t.Fatal("page tombstone kept")
	}
	if _, ok := s.Package("pk1"); !ok {
		t.Fatal("package swept before retention")
	}
	clk.Add(60 * 24 * time.Hour)
	s.Sweep()
	if len(s.Packages()) != 0 {
		t.Fatal("ended packages kept")
	}
	if err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openStore(t, dir, clk)
	defer s.Close()
	if st := s.Stats(); st.Inboxes+st.Events+st.Pages+st.Packages+st.FreeCalls != 0 {
		t.Fatalf("after sweep+compact: %+v", st)
	}
}

// Compaction running concurrently with writers loses nothing and duplicates nothing.
func TestCompactUnderLoad(t *testing.T) {
	dir, clk := t.TempDir(), newClock()
	s := openStore(t, dir, clk)
	s.CreateInbox(Inbox{ID: "in", ExpiresAt: clk.Now().Add(time.Hour)})
	s.CreatePackage(Package{Key: "pk", GB: 1})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				s.AddEvent(context.Background(), Event{Inbox: "in", Body: []byte(fmt.Sprintf("%d-%d", w, i))})
				s.AddUsage("pk", 10)
			}
		}()
	}
	for range 5 {
		if err := s.Compact(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	wg.Wait()
	s.Close()
	s = openStore(t, dir, clk)
	defer s.Close()
	in, evs, _ := s.Events(context.Background(), "in", 0, 0)
	p, _ := s.Package("pk")
	if in.Events != 100 || len(evs) != 100 || in.LastSeq != 100 || p.BytesUsed != 1000 {
		t.Fatalf("inbox %+v, %d events, used %d", in, len(evs), p.BytesUsed)
	}
}

// Two daemons keep separate journals in one directory.
func TestSeparateNamesShareDir(t *testing.T) {
	dir, clk := t.TempDir(), newClock()
	api, err := Open(dir, Options{Name: "api", Now: clk.Now, Logger: quiet(), NoBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	px, err := Open(dir, Options{Name: "proxyd", Now: clk.Now, Logger: quiet(), NoBackground: true, Sync: journal.SyncInterval})
	if err != nil {
		t.Fatal(err)
	}
	api.PutPage(Page{ID: "p", HTML: "x", ExpiresAt: clk.Now().Add(time.Hour)})
	px.CreatePackage(Package{Key: "k", GB: 1})
	api.Close()
	px.Close()
	for _, f := range []string{"api.log", "proxyd.log"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	api, _ = Open(dir, Options{Name: "api", Now: clk.Now, Logger: quiet(), NoBackground: true})
	defer api.Close()
	if _, ok := api.Package("k"); ok {
		t.Fatal("api sees proxyd's package")
	}
	if _, ok := api.Page("p"); !ok {
		t.Fatal("api lost its page")
	}
}

func TestBackgroundLoop(t *testing.T) {
	clk := newClock()
	dir := t.TempDir()
	s, err := Open(dir, Options{Now: clk.Now, Logger: quiet(), SweepEvery: 5 * time.Millisecond, CompactEvery: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s.CreateInbox(Inbox{ID: "in", ExpiresAt: clk.Now().Add(time.Hour)})
	s.AddEvent(context.Background(), Event{Inbox: "in", Body: bytes.Repeat([]byte("x"), 1000)})
	deadline := time.Now().Add(5 * time.Second)
	for s.Stats().Compactions == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no background compaction")
		}
		time.Sleep(5 * time.Millisecond)
	}
	clk.Add(2 * time.Hour)
	for s.Stats().Events != 0 {
		if time.Now().After(deadline) {
			t.Fatal("no background sweep")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddEvent(context.Background(), Event{Inbox: "in"}); err != ErrClosed {
		t.Fatalf("after close: %v", err)
	}
}

// Many meters written as one record come back whole after a restart.
func TestSetUsagesBatchReplays(t *testing.T) {
	dir, clk := t.TempDir(), newClock()
	s := openStore(t, dir, clk)
	for _, k := range []string{"a", "b", "c"} {
		if _, err := s.CreatePackage(Package{Key: k, GB: 1, BytesTotal: 1 << 30}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetUsages([]Usage{{"a", 10}, {"b", 20}, {"gone", 5}}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetUsages([]Usage{{"a", 3}, {"c", 30}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, dir, clk)
	defer s.Close()
	for k, want := range map[string]int64{"a": 10, "b": 20, "c": 30} {
		if p, ok := s.Package(k); !ok || p.BytesUsed != want {
			t.Errorf("%s: used %d after replay, want %d", k, p.BytesUsed, want)
		}
	}
}
