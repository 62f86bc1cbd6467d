package infra

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/peage/appliance/internal/testclock"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/internal/ratelimit"
	"github.com/peage/appliance/internal/state"
)

const base = "https://peage.example"

type fixture struct {
	r   *Routes
	s   *state.Store
	clk *testclock.Clock
	cat *catalog.Catalog
	dir string
}

func setup(t *testing.T) *fixture {
	t.Helper()
	clk := testclock.At(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC))
	dir := t.TempDir()
	s, err := state.Open(dir, state.Options{Now: clk.Now, NoBackground: true, Logger: obs.Discard()})
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

// call decodes raw args through the real catalog entry, as the server does, then calls the handler.
func (f *fixture) call(t *testing.T, id string, raw map[string]any, mod func(*catalog.Request)) (any, error) {
	t.Helper()
	e := f.cat.Entry(id)
	if e == nil || e.Handler == nil {
		t.Fatalf("entry %s not bound", id)
	}
	args, err := e.Decode(raw)
	if err != nil {
		return nil, err
	}
	req := &catalog.Request{Route: e, Args: args, Method: e.Method, Path: e.Path, Header: http.Header{}, BaseURL: base}
	if mod != nil {
		mod(req)
	}
	ctx, cancel := context.WithTimeout(context.Background(), e.Timeout)
	defer cancel()
	return e.Handler(ctx, req)
}

func code(err error) apierr.Code {
	var e *apierr.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return "plain error"
}

func (f *fixture) inbox(t *testing.T, hours int) *InboxResult {
	t.Helper()
	out, err := f.call(t, "callbacks", map[string]any{"ttl_hours": fmt.Sprint(hours), "label": "ci"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out.(*InboxResult)
}

func keyOf(t *testing.T, in *InboxResult) string {
	_, k, ok := strings.Cut(in.EventsURL, "?key=")
	if !ok {
		t.Fatalf("events_url %s has no key", in.EventsURL)
	}
	return k
}

func (f *fixture) deliver(t *testing.T, id, method, ct string, body []byte, query ...[2]string) (any, error) {
	return f.call(t, "hook", nil, func(r *catalog.Request) {
		r.Method, r.PathID, r.Body, r.Query = method, id, body, query
		if ct != "" {
			r.Header.Set("Content-Type", ct)
		}
		r.Header.Set("X-Signature", "sig")
	})
}

func (f *fixture) events(t *testing.T, id, key string, after, wait int) (*EventsResult, error) {
	out, err := f.call(t, "hook.events", map[string]any{"key": key, "after": fmt.Sprint(after), "wait": fmt.Sprint(wait)},
		func(r *catalog.Request) { r.PathID = id })
	if err != nil {
		return nil, err
	}
	return out.(*EventsResult), nil
}

func TestCallbacksFields(t *testing.T) {
	f := setup(t)
	in := f.inbox(t, 2)
	if len(in.ID) != 32 || in.CallbackURL != base+"/hook/"+in.ID || !strings.HasPrefix(in.EventsURL, base+"/hook/"+in.ID+"/events?key=") {
		t.Fatalf("urls: %+v", in)
	}
	if len(keyOf(t, in)) != 32 || keyOf(t, in) == in.ID {
		t.Fatal("key")
	}
	if in.ExpiresAt != "2025-06-01T14:00:00Z" || in.Limits.MaxEvents != 100 || in.Limits.MaxBodyBytes != 65536 || in.Label != "ci" {
		t.Fatalf("fields: %+v", in)
	}
	b, _ := json.Marshal(in)
	for _, k := range []string{`"id"`, `"callback_url"`, `"events_url"`, `"expires_at"`, `"limits":{"max_events":100,"max_body_bytes":65536,"max_bytes":7340032,"max_deliveries_per_minute":60,"max_delivery_burst":20}`} {
		if !strings.Contains(string(b), k) {
			t.Fatalf("json lacks %s: %s", k, b)
		}
	}
	if _, err := f.call(t, "callbacks", map[string]any{"ttl_hours": "25"}, nil); code(err) != apierr.CodeBadParam {
		t.Fatalf("ttl 25: %v", err)
	}
	if _, err := f.call(t, "callbacks", map[string]any{"ttl_hours": "0"}, nil); code(err) != apierr.CodeBadParam {
		t.Fatalf("ttl 0: %v", err)
	}
	out, err := f.call(t, "callbacks", map[string]any{}, nil)
	if err != nil || out.(*InboxResult).TTLHours != 24 {
		t.Fatalf("default ttl: %+v %v", out, err)
	}
	// ids are unique
	if f.inbox(t, 1).ID == in.ID {
		t.Fatal("id reused")
	}
}

func TestCaptureBodies(t *testing.T) {
	f := setup(t)
	in := f.inbox(t, 1)
	key := keyOf(t, in)
	cases := []struct {
		method, ct, body, kind string
		check                  func(v EventView) bool
	}{
		{"POST", "application/json", `{"a":1,"b":[true]}`, "json", func(v EventView) bool {
			b, _ := json.Marshal(v.Body)
			return string(b) == `{"a":1,"b":[true]}`
		}},
		{"POST", "application/x-www-form-urlencoded", "x=1&y=two+words&x=3", "form", func(v EventView) bool {
			m := v.Body.(map[string]string)
			return m["x"] == "1" && m["y"] == "two words"
		}},
		{"PUT", "text/plain", "hello", "text", func(v EventView) bool { return v.Body == "hello" }},
		{"POST", "", `[1,2]`, "json", nil},
		{"POST", "text/plain", `{"looks":"json"}`, "json", nil},
		{"POST", "application/octet-stream", "\xff\xfe\x00", "binary", func(v EventView) bool { return v.BodyBase64 == "//4A" }},
		{"DELETE", "", "", "empty", func(v EventView) bool { return v.Body == nil }},
		{"POST", "multipart/form-data; boundary=XX", "--XX\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\nval\r\n--XX--\r\n", "form",
			func(v EventView) bool { return v.Body.(map[string]any)["f"] == "val" }},
		{"PATCH", "application/json", `{not json`, "text", nil},
	}
	for i, c := range cases {
		out, err := f.deliver(t, in.ID, c.method, c.ct, []byte(c.body), [2]string{"q", fmt.Sprint(i)}, [2]string{"q", "again"})
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if d := out.(*DeliveryResult); !d.OK || d.Seq != uint64(i+1) {
			t.Fatalf("case %d: %+v", i, d)
		}
	}
	res, err := f.events(t, in.ID, key, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Count != len(cases) || res.Total != len(cases) || res.NextAfter != uint64(len(cases)) {
		t.Fatalf("events: count %d total %d next %d", res.Count, res.Total, res.NextAfter)
	}
	for i, c := range cases {
		v := res.Events[i]
		if v.Method != c.method || v.BodyType != c.kind || v.Query["q"] != fmt.Sprint(i) || v.QueryString != fmt.Sprintf("q=%d&q=again", i) ||
			v.Headers["X-Signature"] != "sig" || v.Bytes != len(c.body) {
			t.Fatalf("case %d: %+v", i, v)
		}
		if c.check != nil && !c.check(v) {
			t.Fatalf("case %d body: %#v", i, v.Body)
		}
	}
	// The whole answer marshals (json.RawMessage bodies included).
	if _, err := json.Marshal(res); err != nil {
		t.Fatal(err)
	}
}

func TestLimitsExactly(t *testing.T) {
	f := setup(t)
	in := f.inbox(t, 1)
	if _, err := f.deliver(t, in.ID, "POST", "text/plain", []byte(strings.Repeat("a", 65536))); err != nil {
		t.Fatalf("64 KiB body refused: %v", err)
	}
	if _, err := f.deliver(t, in.ID, "POST", "text/plain", []byte(strings.Repeat("a", 65537))); code(err) != apierr.CodeTooLarge {
		t.Fatalf("64 KiB + 1: %v", err)
	}
	for i := 2; i <= 100; i++ {
		f.clk.Add(time.Second) // within the delivery rate
		if _, err := f.deliver(t, in.ID, "POST", "", nil); err != nil {
			t.Fatalf("event %d refused: %v", i, err)
		}
	}
	_, err := f.deliver(t, in.ID, "POST", "", nil)
	if code(err) != apierr.CodeLimitExceeded || !strings.Contains(err.Error(), "full") {
		t.Fatalf("event 101: %v", err)
	}
	if (&apierr.Error{Code: apierr.CodeLimitExceeded}).Status() != 429 {
		t.Fatal("limit_exceeded is not 429")
	}
	res, _ := f.events(t, in.ID, keyOf(t, in), 0, 0)
	if res.Count != 100 || res.Events[0].Bytes != 65536 {
		t.Fatalf("stored %d", res.Count)
	}
}

func TestConcurrentDeliveries(t *testing.T) {
	f := setup(t)
	// 50 at once, past the delivery burst: the rate is TestDeliveryRateIsPerInbox's subject.
	f.r.deliveries = ratelimit.New(ratelimit.Config{PerMinute: DeliveriesPerMinute, Burst: 50, MaxClients: 1}, f.clk.Now)
	in := f.inbox(t, 1)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := f.deliver(t, in.ID, "POST", "application/json", []byte(fmt.Sprintf(`{"n":%d}`, i))); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	res, _ := f.events(t, in.ID, keyOf(t, in), 0, 0)
	seen := map[string]bool{}
	for i, v := range res.Events {
		b, _ := json.Marshal(v.Body)
		if v.Seq != uint64(i+1) || seen[string(b)] {
			t.Fatalf("event %d: %+v", i, v)
		}
		seen[string(b)] = true
	}
	if len(seen) != 50 {
		t.Fatalf("stored %d of 50", len(seen))
	}
}

func TestKeysAndUnknown(t *testing.T) {
	f := setup(t)
	in := f.inbox(t, 1)
	other := f.inbox(t, 1)
	if _, err := f.events(t, in.ID, keyOf(t, other), 0, 0); code(err) != apierr.CodeForbidden {
		t.Fatalf("other inbox's key: %v", err)
	}
	if _, err := f.events(t, in.ID, strings.Repeat("0", 32), 0, 0); code(err) != apierr.CodeForbidden {
		t.Fatalf("wrong key: %v", err)
	}
	if _, err := f.events(t, in.ID, "short", 0, 0); code(err) != apierr.CodeBadParam {
		t.Fatalf("short key: %v", err)
	}
	if _, err := f.events(t, strings.Repeat("a", 32), keyOf(t, in), 0, 0); code(err) != apierr.CodeNotFound {
		t.Fatalf("unknown inbox: %v", err)
	}
	if _, err := f.events(t, "../etc", keyOf(t, in), 0, 0); code(err) != apierr.CodeNotFound {
		t.Fatalf("bad id: %v", err)
	}
	if _, err := f.deliver(t, strings.Repeat("b", 32), "POST", "", nil); code(err) != apierr.CodeNotFound {
		t.Fatalf("deliver unknown: %v", err)
	}
}

func TestExpiry(t *testing.T) {
	f := setup(t)
	in := f.inbox(t, 1)
	key := keyOf(t, in)
	f.deliver(t, in.ID, "POST", "", nil)
	f.clk.Add(time.Hour)
	if _, err := f.deliver(t, in.ID, "POST", "", nil); code(err) != apierr.CodeGone {
		t.Fatalf("deliver expired: %v", err)
	}
	if _, err := f.events(t, in.ID, key, 0, 0); code(err) != apierr.CodeGone {
		t.Fatalf("read expired: %v", err)
	}
	if _, err := f.events(t, in.ID, "ffffffffffffffffffffffffffffffff", 0, 0); code(err) != apierr.CodeForbidden {
		t.Fatalf("wrong key on expired: %v", err)
	}
	f.s.Sweep()
	if _, err := f.events(t, in.ID, key, 0, 0); code(err) != apierr.CodeGone {
		t.Fatalf("read expired after sweep: %v", err)
	}
	f.clk.Add(8 * 24 * time.Hour)
	f.s.Sweep()
	if _, err := f.events(t, in.ID, key, 0, 0); code(err) != apierr.CodeNotFound {
		t.Fatalf("read long-expired: %v", err)
	}
}

func TestLongPollWakesOnDelivery(t *testing.T) {
	f := setup(t)
	in := f.inbox(t, 1)
	key := keyOf(t, in)
	type got struct {
		res *EventsResult
		err error
		at  time.Time
	}
	ch := make(chan got, 1)
	go func() {
		res, err := f.events(t, in.ID, key, 0, 20)
		ch <- got{res, err, time.Now()}
	}()
	time.Sleep(100 * time.Millisecond)
	sent := time.Now()
	if _, err := f.deliver(t, in.ID, "POST", "text/plain", []byte("ping")); err != nil {
		t.Fatal(err)
	}
	select {
	case g := <-ch:
		if g.err != nil || g.res.Count != 1 || g.res.Events[0].Body != "ping" || g.res.NextAfter != 1 {
			t.Fatalf("long poll: %+v %v", g.res, g.err)
		}
		if d := g.at.Sub(sent); d > time.Second {
			t.Fatalf("woken after %v", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("long poll not woken by the delivery")
	}
	// With the cursor at the end and wait=1 it answers empty after about a second.
	t0 := time.Now()
	res, err := f.events(t, in.ID, key, 1, 1)
	if err != nil || res.Count != 0 || res.NextAfter != 1 || time.Since(t0) < 900*time.Millisecond {
		t.Fatalf("empty poll: %+v %v after %v", res, err, time.Since(t0))
	}
}

func TestPublishAndServe(t *testing.T) {
	f := setup(t)
	out, err := f.call(t, "publish", map[string]any{"html": `<h1 style="color:red">Hi</h1><img src="https://evil.example/x.png"><script>alert(1)</script>`,
		"title": "Greeting <&>", "ttl_days": "2"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := out.(*PageResult)
	if len(p.ID) != 32 || p.URL != base+"/p/"+p.ID || p.Title != "Greeting <&>" || p.ExpiresAt != "2025-06-03T12:00:00Z" || p.TTLDays != 2 {
		t.Fatalf("page: %+v", p)
	}
	served, err := f.call(t, "p", nil, func(r *catalog.Request) { r.PathID = p.ID })
	if err != nil {
		t.Fatal(err)
	}
	raw := served.(*catalog.Raw)
	body := string(raw.Body)
	if len(raw.Body) != p.Bytes || raw.ContentType != "text/html; charset=utf-8" {
		t.Fatalf("bytes %d vs %d, type %s", len(raw.Body), p.Bytes, raw.ContentType)
	}
	for _, want := range []string{`<h1 style="color:red">Hi</h1>`, `<title>Greeting &lt;&amp;&gt;</title>`, `name="robots" content="noindex`} {
		if !strings.Contains(body, want) {
			t.Fatalf("page lacks %q:\n%s", want, body)
		}
	}
	for _, bad := range []string{"<script", "evil.example", "alert"} {
		if strings.Contains(body, bad) {
			t.Fatalf("page keeps %q:\n%s", bad, body)
		}
	}
	csp := raw.Header["Content-Security-Policy"]
	for _, want := range []string{"default-src 'none'", "img-src data:", "style-src 'unsafe-inline'", "script-src 'none'", "form-action 'none'", "sandbox"} {
		if !strings.Contains(csp, want) {
			t.Fatalf("CSP lacks %s: %s", want, csp)
		}
	}
	if raw.Header["X-Robots-Tag"] == "" || !strings.Contains(raw.Header["X-Robots-Tag"], "noindex") {
		t.Fatal("no X-Robots-Tag")
	}
	// Survives a restart.
	f.s.Close()
	s2, err := state.Open(f.dir, state.Options{Now: f.clk.Now, NoBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	r2 := With(s2, f.clk.Now)
	again, err := r2.Page(context.Background(), &catalog.Request{PathID: p.ID})
	if err != nil || string(again.(*catalog.Raw).Body) != body {
		t.Fatalf("after restart: %v", err)
	}
	f.clk.Add(48 * time.Hour)
	if _, err := r2.Page(context.Background(), &catalog.Request{PathID: p.ID}); code(err) != apierr.CodeGone {
		t.Fatalf("expired page: %v", err)
	}
	if _, err := r2.Page(context.Background(), &catalog.Request{PathID: strings.Repeat("c", 32)}); code(err) != apierr.CodeNotFound {
		t.Fatalf("unknown page: %v", err)
	}
}

func TestPublishLimits(t *testing.T) {
	f := setup(t)
	ok := strings.Repeat("a", 200<<10)
	if _, err := f.call(t, "publish", map[string]any{"html": ok, "title": "t", "ttl_days": "30"}, nil); err != nil {
		t.Fatalf("200 KB refused: %v", err)
	}
	// 200 KB + 1 byte (multi-byte characters count as bytes here, not as characters).
	over := strings.Repeat("é", (200<<10)/2) + "a"
	_, err := f.call(t, "publish", map[string]any{"html": over, "title": "t"}, nil)
	if c := code(err); c != apierr.CodeTooLarge && c != apierr.CodeBadParam {
		t.Fatalf("over 200 KB: %v", err)
	}
	if _, err := f.call(t, "publish", map[string]any{"html": "x", "title": "t", "ttl_days": "31"}, nil); code(err) != apierr.CodeBadParam {
		t.Fatalf("ttl 31: %v", err)
	}
	out, err := f.call(t, "publish", map[string]any{"html": "x", "title": "t"}, nil)
	var defaultDays int64
	for _, p := range f.cat.Entry("publish").Params {
		if p.Name == "ttl_days" {
			defaultDays = p.Default.(int64)
		}
	}
	if err != nil || defaultDays == 0 || out.(*PageResult).TTLDays != defaultDays {
		t.Fatalf("default ttl: %+v %v", out, err)
	}
}
