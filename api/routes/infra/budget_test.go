package infra

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/server"
	"github.com/peage/appliance/appliance/obs"
	"github.com/peage/appliance/appliance/state"
)

// TestWhatTwoAndAHalfUSDCBuys: at the catalog's price, the inboxes 2.5 USDC buys, every one
// filled to its limits, take less than the default global budget, so that sum cannot exhaust
// it and deny delivery to every other inbox (issue 10, item 6).
func TestWhatTwoAndAHalfUSDCBuys(t *testing.T) {
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	price := cat.Entry("callbacks").Price
	if price <= 0 {
		t.Fatalf("callbacks costs %d: free inboxes are bounded by nothing", price)
	}
	inboxes := 2_500_000 / int64(price)
	// A full-size event takes its body and its metadata (headers, query, fixed fields) from
	// the budget: the metadata is at most the request head the edge accepts.
	perEvent := int64(MaxBodyBytes + server.DefaultConfig().MaxHeaderBytes + 1<<10)
	capacity := inboxes * MaxEvents * perEvent
	t.Logf("2.5 USDC buys %d inboxes at %d atomic USDC each; filled they take %.2f GiB of the budget (%.2f GiB of bodies); default budget %.2f GiB",
		inboxes, price, float64(capacity)/(1<<30), float64(inboxes*MaxEvents*MaxBodyBytes)/(1<<30), float64(state.DefaultInboxBudget)/(1<<30))
	if capacity >= state.DefaultInboxBudget {
		t.Fatalf("2.5 USDC of inboxes can take %d bytes, the whole default budget (%d): raise it", capacity, int64(state.DefaultInboxBudget))
	}
}

func setupBudget(t *testing.T, dir string, clk *clock, budget int64) *fixture {
	t.Helper()
	s, err := state.Open(dir, state.Options{Now: clk.Now, NoBackground: true, InboxBudget: budget,
		Logger: obs.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	r := New(s, clk.Now)
	if err := r.Bind(cat); err != nil {
		t.Fatal(err)
	}
	return &fixture{r: r, s: s, clk: clk, cat: cat, dir: dir}
}

// TestGlobalInboxBudget: deliveries that would pass the global budget are refused with 507
// storage_full and stored nowhere; nothing stored is evicted; inbox sales stop (503 before
// any 402) while no full-size delivery fits; expiry frees the space; a restart counts the
// same bytes.
func TestGlobalInboxBudget(t *testing.T) {
	const budget = 1 << 20
	clk := &clock{t: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
	dir := t.TempDir()
	f := setupBudget(t, dir, clk, budget)
	shortLived, other := f.inbox(t, 1), f.inbox(t, 24)
	full := []byte(strings.Repeat("a", MaxBodyBytes))
	accepted := 0
	var refusal error
	for range MaxEvents {
		if _, err := f.deliver(t, shortLived.ID, "POST", "text/plain", full); err != nil {
			refusal = err
			break
		}
		accepted++
	}
	var ae *apierr.Error
	if !errors.As(refusal, &ae) || ae.Code != apierr.CodeStorageFull || ae.Status() != 507 || ae.RetryAfter <= 0 ||
		!strings.Contains(ae.Message, "not stored") {
		t.Fatalf("after %d deliveries: %v, want 507 storage_full with Retry-After", accepted, refusal)
	}
	if accepted == 0 || int64(accepted)*MaxBodyBytes > budget {
		t.Fatalf("%d full-size deliveries accepted under a %d-byte budget", accepted, budget)
	}
	st := f.s.Stats()
	if st.InboxBytes > budget {
		t.Fatalf("stored %d bytes, budget %d", st.InboxBytes, budget)
	}
	// The budget is global: another inbox's full-size delivery is refused too, and the first
	// inbox keeps every event it had (no eviction).
	if _, err := f.deliver(t, other.ID, "POST", "text/plain", full); code(err) != apierr.CodeStorageFull {
		t.Fatalf("another inbox: %v, want storage_full", err)
	}
	if res, _ := f.events(t, shortLived.ID, keyOf(t, shortLived), 0, 0); res.Count != accepted {
		t.Fatalf("the first inbox holds %d events, want %d", res.Count, accepted)
	}
	if err := f.cat.Entry("callbacks").Ready(); err == nil {
		t.Fatal("inboxes still sold while the storage cannot take one delivery")
	}
	// A restart counts the same bytes.
	f.s.Close()
	f = setupBudget(t, dir, clk, budget)
	if got := f.s.Stats().InboxBytes; got != st.InboxBytes {
		t.Fatalf("after a restart %d bytes counted, before %d", got, st.InboxBytes)
	}
	// Once the short-lived inbox expires and is swept, its space serves the others again.
	clk.Add(2 * time.Hour)
	f.s.Sweep()
	if _, err := f.deliver(t, other.ID, "POST", "text/plain", full); err != nil {
		t.Fatalf("after the expiry: %v", err)
	}
	if err := f.cat.Entry("callbacks").Ready(); err != nil {
		t.Fatalf("inbox sales after the expiry: %v", err)
	}
}

// TestDamagedBodyIsNotServed: a body changed on disk answers 500 naming the event and how to
// read past it, never the wrong bytes; the events after it are still served.
func TestDamagedBodyIsNotServed(t *testing.T) {
	clk := &clock{t: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
	dir := t.TempDir()
	f := setupBudget(t, dir, clk, state.DefaultInboxBudget)
	in := f.inbox(t, 1)
	key := keyOf(t, in)
	for _, body := range []string{`{"n":1}`, `{"n":2}`, `{"n":3}`} {
		if _, err := f.deliver(t, in.ID, "POST", "application/json", []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	_, evs, err := f.s.Events(context.Background(), in.ID, 1, 1)
	if err != nil || len(evs) != 1 {
		t.Fatalf("event 2: %v %v", evs, err)
	}
	path := filepath.Join(dir, "state.inbox-bodies", in.ID, evs[0].BodyFile)
	if err := os.WriteFile(path, []byte(`{"n":9}`), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := f.events(t, in.ID, key, 0, 0)
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Status() != 500 || !strings.Contains(ae.Message, "event 2") || !strings.Contains(ae.Message, "after=2") {
		t.Fatalf("events over a damaged body: %+v, %v; want 500 naming event 2", res, err)
	}
	if res, err := f.events(t, in.ID, key, 2, 0); err != nil || res.Count != 1 || res.Events[0].Seq != 3 {
		t.Fatalf("events after the damaged one: %+v, %v", res, err)
	}
}
