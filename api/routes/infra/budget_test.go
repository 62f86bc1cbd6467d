package infra

import (
	"context"
	"errors"
	"github.com/peage/appliance/internal/testclock"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/internal/state"
)

// TestWhatTheBudgetHolds: at the catalog's price the default budget reserves the quota of
// more than a thousand inboxes, so selling them all out takes more than 5 USDC a day and
// harms no inbox sold (each keeps its quota); and a quota holds the spec's 100 full-size
// events with their fixed fields (issue 10, item 6; issue 34, item 5).
func TestWhatTheBudgetHolds(t *testing.T) {
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	price := cat.Entry("callbacks").Price
	if price <= 0 {
		t.Fatalf("callbacks costs %d: free inboxes are bounded by nothing", price)
	}
	inboxes := int64(state.DefaultInboxBudget / state.InboxQuotaBytes)
	soldOut := inboxes * int64(price)
	t.Logf("the default budget (%.2f GiB) reserves %d quotas of %.2f MiB: selling them out takes %d atomic USDC for at most 24 h",
		float64(state.DefaultInboxBudget)/(1<<30), inboxes, float64(state.InboxQuotaBytes)/(1<<20), soldOut)
	if soldOut < 5_000_000 {
		t.Fatalf("the inbox stock sells out for %d atomic USDC", soldOut)
	}
	if full := int64(MaxEvents) * (MaxBodyBytes + 96 + 64 + 1<<10); full > state.InboxQuotaBytes {
		t.Fatalf("100 full-size events with 1 KiB heads take %d bytes, more than the quota %d", full, int64(state.InboxQuotaBytes))
	}
}

func setupBudget(t *testing.T, dir string, clk *testclock.Clock, budget, quota int64) *fixture {
	t.Helper()
	s, err := state.Open(dir, state.Options{Now: clk.Now, NoBackground: true, InboxBudget: budget, InboxQuota: quota,
		Logger: obs.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	r := With(s, clk.Now)
	if err := r.Bind(cat); err != nil {
		t.Fatal(err)
	}
	return &fixture{r: r, s: s, clk: clk, cat: cat, dir: dir}
}

// TestBudgetLoweredUnderSoldInboxes: inboxes sold under one budget and a restart with a
// smaller one (a smaller disk): deliveries past the budget are refused with 507 storage_full
// and stored nowhere, nothing stored is evicted, sales answer 503 before any 402, a restart
// counts the same bytes, and expiry frees the space and, once the quotas fit, sales.
func TestBudgetLoweredUnderSoldInboxes(t *testing.T) {
	const quota = 256 << 10
	clk := testclock.At(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC))
	dir := t.TempDir()
	f := setupBudget(t, dir, clk, 4*quota, quota)
	shortLived, other := f.inbox(t, 1), f.inbox(t, 24)
	full := []byte(strings.Repeat("a", MaxBodyBytes))
	for range 3 {
		if _, err := f.deliver(t, shortLived.ID, "POST", "text/plain", full); err != nil {
			t.Fatal(err)
		}
	}
	stored := f.s.Stats().InboxBytes
	f.s.Close()
	const smaller = 320 << 10
	f = setupBudget(t, dir, clk, smaller, quota)
	if got := f.s.Stats().InboxBytes; got != stored {
		t.Fatalf("after a restart %d bytes counted, before %d", got, stored)
	}
	if err := f.cat.Entry("callbacks").Ready(); err == nil {
		t.Fatal("inboxes still sold with the budget under the quotas already sold")
	}
	if _, err := f.deliver(t, other.ID, "POST", "text/plain", full); err != nil {
		t.Fatalf("a delivery the budget still holds: %v", err)
	}
	_, refusal := f.deliver(t, other.ID, "POST", "text/plain", full)
	var ae *apierr.Error
	if !errors.As(refusal, &ae) || ae.Code != apierr.CodeStorageFull || ae.Status() != 507 || ae.RetryAfter <= 0 ||
		!strings.Contains(ae.Message, "not stored") {
		t.Fatalf("past the lowered budget: %v, want 507 storage_full with Retry-After", refusal)
	}
	if st := f.s.Stats(); st.InboxBytes > smaller {
		t.Fatalf("stored %d bytes, budget %d", st.InboxBytes, smaller)
	}
	if res, _ := f.events(t, shortLived.ID, keyOf(t, shortLived), 0, 0); res.Count != 3 {
		t.Fatalf("the first inbox holds %d events, want 3", res.Count)
	}
	// Once the short-lived inbox expires and is swept, its space serves the other again;
	// sales wait until the quotas still held and one more fit the budget.
	clk.Add(2 * time.Hour)
	f.s.Sweep()
	if _, err := f.deliver(t, other.ID, "POST", "text/plain", full); err != nil {
		t.Fatalf("after the expiry: %v", err)
	}
	if err := f.cat.Entry("callbacks").Ready(); err == nil {
		t.Fatal("inboxes sold while the quota still held and one more pass the budget")
	}
	clk.Add(24 * time.Hour)
	f.s.Sweep()
	if err := f.cat.Entry("callbacks").Ready(); err != nil {
		t.Fatalf("inbox sales once every inbox expired: %v", err)
	}
}

// TestDamagedBodyIsNotServed: a body changed on disk answers 500 naming the event and how to
// read past it, never the wrong bytes; the events after it are still served.
func TestDamagedBodyIsNotServed(t *testing.T) {
	clk := testclock.At(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC))
	dir := t.TempDir()
	f := setupBudget(t, dir, clk, state.DefaultInboxBudget, state.InboxQuotaBytes)
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
