package infra_test

import (
	"encoding/json"
	"github.com/peage/appliance/internal/testclock"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/routes/infra"
	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/internal/state"
)

type quotaServer struct {
	t    *testing.T
	h    *apitest.Harness
	gate *apitest.RecordingGate
	s    *state.Store
	clk  *testclock.Clock
}

func startQuotaServer(t *testing.T, budget, quota int64) *quotaServer {
	t.Helper()
	clk := testclock.At(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	s, err := state.Open(t.TempDir(), state.Options{Now: clk.Now, NoBackground: true, InboxBudget: budget, InboxQuota: quota,
		Logger: obs.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	if err := infra.With(s, clk.Now).Bind(cat); err != nil {
		t.Fatal(err)
	}
	gate := &apitest.RecordingGate{}
	return &quotaServer{t: t, h: apitest.Start(t, cat, apitest.Options{CheckShapes: true, Gate: gate}), gate: gate, s: s, clk: clk}
}

func (q *quotaServer) do(method, url string, body string, header map[string]string) (*http.Response, string) {
	q.t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "text/plain")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := q.h.Client.Do(req)
	if err != nil {
		q.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func (q *quotaServer) buy(hours string) (*infra.InboxResult, int, string) {
	q.t.Helper()
	resp, b := q.do("POST", q.h.BaseURL+"/v1/callbacks?ttl_hours="+hours, "", nil)
	if resp.StatusCode != 200 {
		return nil, resp.StatusCode, b
	}
	var in infra.InboxResult
	if err := json.Unmarshal([]byte(b), &in); err != nil {
		q.t.Fatal(err)
	}
	return &in, 200, b
}

// TestOneInboxCannotTakeAnothersRoom (issue 34, item 5) floods one inbox through the real
// server with full-size deliveries carrying large heads, paced under its delivery rate: it is
// refused at its own quota with 429, while an inbox bought before it still takes full-size
// deliveries and new inboxes are still sold until the budget's quotas are all reserved.
// Before the quotas, the flood filled the one global budget: every inbox got 507 and sales
// answered 503.
func TestOneInboxCannotTakeAnothersRoom(t *testing.T) {
	const quota = 1 << 20
	q := startQuotaServer(t, 3*quota, quota)
	victim, status, b := q.buy("24")
	if status != 200 {
		t.Fatalf("first inbox: %d %s", status, b)
	}
	flooded, status, b := q.buy("24")
	if status != 200 {
		t.Fatalf("second inbox: %d %s", status, b)
	}
	if flooded.Limits.MaxBytes != quota || flooded.Limits.DeliveriesPerMinute != infra.DeliveriesPerMinute {
		t.Fatalf("limits %+v, want max_bytes %d", flooded.Limits, quota)
	}
	full := strings.Repeat("a", infra.MaxBodyBytes)
	head := map[string]string{"X-Padding": strings.Repeat("h", 12<<10)}
	accepted, refusal, refusalBody := 0, 0, ""
	for range infra.MaxEvents {
		q.clk.Add(time.Second) // under the delivery rate: only the byte quota can refuse
		resp, b := q.do("POST", flooded.CallbackURL, full, head)
		if resp.StatusCode != 200 {
			refusal, refusalBody = resp.StatusCode, b
			break
		}
		accepted++
	}
	if refusal != 429 || !strings.Contains(refusalBody, "limit_exceeded") || !strings.Contains(refusalBody, flooded.ID) ||
		!strings.Contains(refusalBody, "bytes") {
		t.Fatalf("after %d deliveries the flooded inbox answered %d %s, want 429 limit_exceeded naming its bytes", accepted, refusal, refusalBody)
	}
	if per := int64(infra.MaxBodyBytes + 12<<10); int64(accepted)*per > quota || int64(accepted+2)*per < quota {
		t.Fatalf("%d deliveries of about %d bytes accepted under a %d-byte quota", accepted, per, quota)
	}
	for range 3 {
		if resp, b := q.do("POST", victim.CallbackURL, full, head); resp.StatusCode != 200 {
			t.Fatalf("the other inbox, during the flood: %d %s", resp.StatusCode, b)
		}
	}
	// The budget holds three quotas: a third inbox is sold, a fourth is not (503 before any
	// 402, nothing charged), whatever the inboxes hold.
	charged, _ := q.gate.Counts()
	third, status, b := q.buy("1")
	if status != 200 {
		t.Fatalf("a new inbox during the flood: %d %s", status, b)
	}
	if resp, b := q.do("POST", third.CallbackURL, full, nil); resp.StatusCode != 200 {
		t.Fatalf("the new inbox: %d %s", resp.StatusCode, b)
	}
	if _, status, b := q.buy("1"); status != 503 {
		t.Fatalf("a fourth inbox with three quotas reserved: %d %s, want 503", status, b)
	}
	if now, _ := q.gate.Counts(); now != charged+1 {
		t.Fatalf("charged %d sales, want %d", now-charged, 1)
	}
	// An expired inbox gives its quota back.
	q.clk.Add(2 * time.Hour)
	q.s.Sweep()
	if _, status, b := q.buy("1"); status != 200 {
		t.Fatalf("a new inbox once one expired: %d %s", status, b)
	}
}

// TestDeliveryRateIsPerInbox: an inbox takes DeliveryBurst deliveries at once, then answers
// 429 busy with Retry-After, storing nothing, while another inbox still takes deliveries; a
// second later it takes one more.
func TestDeliveryRateIsPerInbox(t *testing.T) {
	q := startQuotaServer(t, state.DefaultInboxBudget, state.InboxQuotaBytes)
	busy, _, _ := q.buy("24")
	other, _, _ := q.buy("24")
	for i := range infra.DeliveryBurst {
		if resp, b := q.do("POST", busy.CallbackURL, "x", nil); resp.StatusCode != 200 {
			t.Fatalf("delivery %d of the burst: %d %s", i+1, resp.StatusCode, b)
		}
	}
	resp, b := q.do("POST", busy.CallbackURL, "x", nil)
	if resp.StatusCode != 429 || !strings.Contains(b, `"busy"`) || resp.Header.Get("Retry-After") == "" || !strings.Contains(b, busy.ID) {
		t.Fatalf("past the burst: %d %v %s, want 429 busy with Retry-After", resp.StatusCode, resp.Header, b)
	}
	if resp, b := q.do("POST", other.CallbackURL, "x", nil); resp.StatusCode != 200 {
		t.Fatalf("another inbox meanwhile: %d %s", resp.StatusCode, b)
	}
	q.clk.Add(time.Second)
	if resp, b := q.do("POST", busy.CallbackURL, "x", nil); resp.StatusCode != 200 {
		t.Fatalf("a second later: %d %s", resp.StatusCode, b)
	}
	if in, _ := q.s.Inbox(busy.ID); in.Events != infra.DeliveryBurst+1 {
		t.Fatalf("the inbox holds %d events, want %d (the refused one not stored)", in.Events, infra.DeliveryBurst+1)
	}
}
