package infra_test

import (
	"encoding/json"
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

// Through the real server: buy an inbox, deliver to it over HTTP with several methods, read the
// events by long-poll; publish a page and fetch it with its headers.
func TestThroughServer(t *testing.T) {
	s, err := state.Open(t.TempDir(), state.Options{NoBackground: true, Logger: obs.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	if err := infra.With(s, nil).Bind(cat); err != nil {
		t.Fatal(err)
	}
	gate := &apitest.RecordingGate{}
	h := apitest.Start(t, cat, apitest.Options{CheckShapes: true, Gate: gate})

	do := func(method, url, ct, body string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		resp, err := h.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}

	resp, b := do("POST", h.BaseURL+"/v1/callbacks?ttl_hours=1&label=e2e", "", "")
	if resp.StatusCode != 200 {
		t.Fatalf("callbacks: %d %s", resp.StatusCode, b)
	}
	var in infra.InboxResult
	json.Unmarshal(b, &in)
	if !strings.HasPrefix(in.CallbackURL, h.BaseURL+"/hook/") {
		t.Fatalf("callback_url %s not on base %s", in.CallbackURL, h.BaseURL)
	}

	// A reader waits before anything arrives.
	type polled struct {
		status int
		body   []byte
	}
	pc := make(chan polled, 1)
	go func() {
		resp, b := do("GET", in.EventsURL+"&wait=10", "", "")
		pc <- polled{resp.StatusCode, b}
	}()
	time.Sleep(100 * time.Millisecond)
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH", "GET"} {
		resp, b := do(m, in.CallbackURL+"?via="+m, "application/json", `{"m":"`+m+`"}`)
		if resp.StatusCode != 200 {
			t.Fatalf("%s delivery: %d %s", m, resp.StatusCode, b)
		}
	}
	select {
	case p := <-pc:
		var ev infra.EventsResult
		json.Unmarshal(p.body, &ev)
		if p.status != 200 || ev.Count < 1 || ev.Events[0].Method != "POST" || ev.Events[0].Query["via"] != "POST" {
			t.Fatalf("long poll: %d %s", p.status, p.body)
		}
	case <-time.After(8 * time.Second):
		t.Fatal("long poll not woken")
	}
	resp, b = do("GET", in.EventsURL, "", "")
	var ev infra.EventsResult
	json.Unmarshal(b, &ev)
	if resp.StatusCode != 200 || ev.Count != 5 || ev.Events[4].Method != "GET" || ev.Events[2].Headers["Content-Type"] != "application/json" {
		t.Fatalf("events: %d %s", resp.StatusCode, b)
	}
	resp, _ = do("GET", strings.Replace(in.EventsURL, "key=", "key=0", 1), "", "")
	if resp.StatusCode != 403 {
		t.Fatalf("wrong key: %d", resp.StatusCode)
	}
	resp, b = do("POST", in.CallbackURL, "text/plain", strings.Repeat("x", 65537))
	if resp.StatusCode != 413 {
		t.Fatalf("big body: %d %s", resp.StatusCode, b)
	}

	resp, b = do("POST", h.BaseURL+"/v1/publish", "application/json",
		`{"html":"<h1 onclick=\"x()\">Hello</h1><script>alert(1)</script>","title":"Hi","ttl_days":1}`)
	if resp.StatusCode != 200 {
		t.Fatalf("publish: %d %s", resp.StatusCode, b)
	}
	var pg infra.PageResult
	json.Unmarshal(b, &pg)
	resp, b = do("GET", pg.URL, "", "")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") ||
		!strings.Contains(resp.Header.Get("X-Robots-Tag"), "noindex") || len(b) != pg.Bytes ||
		!strings.Contains(string(b), "<h1>Hello</h1>") || strings.Contains(string(b), "script") {
		t.Fatalf("page: %d %v\n%s", resp.StatusCode, resp.Header, b)
	}
	resp, _ = do("GET", h.BaseURL+"/p/"+strings.Repeat("0", 32), "", "")
	if resp.StatusCode != 404 {
		t.Fatalf("unknown page: %d", resp.StatusCode)
	}
	// A publish that fails is not charged.
	resp, _ = do("POST", h.BaseURL+"/v1/publish", "application/json", `{"html":"x","title":"t","ttl_days":31}`)
	if resp.StatusCode != 400 {
		t.Fatalf("bad ttl: %d", resp.StatusCode)
	}
	if charged, _ := gate.Counts(); charged != 2 {
		t.Fatalf("charged %d calls, want 2 (inbox and page)", charged)
	}
}
