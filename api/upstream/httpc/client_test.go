package httpc_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/upstreamtest"
	"github.com/peage/appliance/internal/obs"
)

// flaky fails n times with status, then answers ok.
func flaky(n int32, status int) (http.Handler, *atomic.Int32) {
	var calls atomic.Int32
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= n {
			w.WriteHeader(status)
			return
		}
		_, _ = w.Write([]byte(`{"ok":true}`))
	}), &calls
}

func client(t *testing.T, s *upstreamtest.Server, retries int, o httpc.Options) *httpc.Client {
	t.Helper()
	spec := s.Spec(t, "ban")
	spec.Retries = retries
	spec.Timeout = 5 * time.Second
	o.Backoff = time.Millisecond
	if o.Logger == nil {
		o.Logger = obs.Discard()
	}
	if o.Contact == "" {
		o.Contact = "ops@example.org"
	}
	c, err := httpc.New(spec, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRetryPolicy(t *testing.T) {
	tests := []struct {
		name      string
		method    string
		fails     int32
		status    int
		retries   int
		wantErr   bool
		wantCalls int32
		wantCode  int
	}{
		{"GET retried after 503", "GET", 1, 503, 2, false, 2, 0},
		{"GET retried after 429", "GET", 2, 429, 2, false, 3, 0},
		{"GET gives up after its retries", "GET", 5, 500, 1, true, 2, 500},
		{"GET 400 is not retried", "GET", 5, 400, 3, true, 1, 400},
		{"POST is never retried", "POST", 1, 503, 3, true, 1, 503},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := upstreamtest.New(t)
			h, calls := flaky(tt.fails, tt.status)
			s.Handle(h)
			c := client(t, s, tt.retries, httpc.Options{})
			var out map[string]any
			var err error
			if tt.method == "GET" {
				err = c.GetJSON(context.Background(), "/search", nil, &out)
			} else {
				err = c.PostJSON(context.Background(), "/search", map[string]string{"a": "b"}, &out)
			}
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if got := calls.Load(); got != tt.wantCalls {
				t.Errorf("calls = %d, want %d", got, tt.wantCalls)
			}
			if tt.wantErr {
				var ue *upstream.Error
				if !errors.As(err, &ue) || ue.Upstream != "ban" || ue.Status != tt.wantCode {
					t.Errorf("err = %#v, want *upstream.Error{ban, %d}", err, tt.wantCode)
				}
			}
		})
	}
}

func TestTimeoutIsADeadline(t *testing.T) {
	s := upstreamtest.New(t)
	s.Handle(upstreamtest.Hang())
	spec := s.Spec(t, "ban")
	spec.Timeout = 100 * time.Millisecond
	c, err := httpc.New(spec, httpc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = c.GetJSON(context.Background(), "/search", nil, new(any))
	var ue *upstream.Error
	if !errors.As(err, &ue) || !ue.Timeout() || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a deadline wrapped in *upstream.Error", err)
	}
}

func TestBreakerOpensAfterFailures(t *testing.T) {
	s := upstreamtest.New(t)
	h, calls := flaky(100, 500)
	s.Handle(h)
	c := client(t, s, 0, httpc.Options{BreakerThreshold: 3, BreakerCooldown: time.Hour})
	for range 3 {
		_ = c.GetJSON(context.Background(), "/search", nil, new(any))
	}
	err := c.GetJSON(context.Background(), "/search", nil, new(any))
	if !errors.Is(err, upstream.ErrCircuitOpen) {
		t.Fatalf("err = %v, want ErrCircuitOpen", err)
	}
	if calls.Load() != 3 {
		t.Errorf("calls = %d, want 3: the open breaker must not reach the upstream", calls.Load())
	}
}

func TestClientErrorsDoNotOpenTheBreaker(t *testing.T) {
	s := upstreamtest.New(t)
	s.Handle(upstreamtest.JSON(404, `{}`))
	c := client(t, s, 0, httpc.Options{BreakerThreshold: 2, BreakerCooldown: time.Hour})
	for range 5 {
		err := c.GetJSON(context.Background(), "/communes/00000", nil, new(any))
		if !upstream.IsNotFound(err) {
			t.Fatalf("err = %v, want a 404", err)
		}
	}
}

func TestUserAgentAndKey(t *testing.T) {
	s := upstreamtest.New(t)
	s.Handle(upstreamtest.JSON(200, `{}`))
	spec := s.Spec(t, "open-meteo")
	spec.Key = "k123"
	c, err := httpc.New(spec, httpc.Options{Contact: "ops@example.org"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.GetJSON(context.Background(), "/v1/forecast", nil, new(any)); err != nil {
		t.Fatal(err)
	}
	r := s.Last()
	if ua := r.Header.Get("User-Agent"); !strings.HasPrefix(ua, "peage-appliance/") || !strings.Contains(ua, "ops@example.org") {
		t.Errorf("User-Agent = %q", ua)
	}
	if got := r.URL.Query().Get("apikey"); got != "k123" {
		t.Errorf("apikey = %q, want the configured key", got)
	}
}

func TestRateLimitRefusesWhatWouldMissTheDeadline(t *testing.T) {
	s := upstreamtest.New(t)
	s.Handle(upstreamtest.JSON(200, `{}`))
	spec := s.Spec(t, "ban")
	spec.RPS, spec.Burst = 0.001, 1 // one call, then the next token is ~17 minutes away
	c, err := httpc.New(spec, httpc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.GetJSON(ctx, "/search", nil, new(any)); err != nil {
		t.Fatal(err)
	}
	if err := c.GetJSON(ctx, "/search", nil, new(any)); !errors.Is(err, upstream.ErrThrottled) {
		t.Fatalf("err = %v, want ErrThrottled", err)
	}
}

func TestResolveOverrides(t *testing.T) {
	two := 2
	specs, err := upstream.Resolve(upstream.Config{Override: map[string]upstream.Override{
		"ban":        {BaseURL: "https://api-adresse.data.gouv.fr", RPS: 10, Retries: &two, Timeout: upstream.Duration(time.Second)},
		"open-meteo": {Key: "abc"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if b := specs["ban"]; b.BaseURL != "https://api-adresse.data.gouv.fr" || b.RPS != 10 || b.Retries != 2 || b.Timeout != time.Second {
		t.Errorf("ban = %+v", b)
	}
	if m := specs["open-meteo"]; m.Ready() != nil || !strings.Contains(m.BaseURL, "customer-api") {
		t.Errorf("open-meteo with a key = %+v", m)
	}
	if specs["vies"].Ready() != nil {
		t.Error("vies needs no key")
	}
	if _, err := upstream.Resolve(upstream.Config{Override: map[string]upstream.Override{"nope": {}}}); err == nil {
		t.Error("an unknown upstream name must be an error")
	}
	if upstream.Specs[0].Ready() != nil {
		t.Error("recherche-entreprises needs no key")
	}
	if m, _ := upstream.Lookup("open-meteo"); !errors.Is(m.Ready(), upstream.ErrNotConfigured) {
		t.Error("open-meteo without a key must not be ready")
	}
}

func TestLongRetryAfterIsNotWaitedFor(t *testing.T) {
	s := upstreamtest.New(t)
	s.Handle(upstreamtest.TooMany()) // Retry-After: 30
	c := client(t, s, 3, httpc.Options{})
	err := c.GetJSON(context.Background(), "/search", nil, new(any))
	if upstream.StatusOf(err) != 429 || len(s.Requests()) != 1 {
		t.Fatalf("err = %v after %d calls; want one call, then the 429", err, len(s.Requests()))
	}
}

func TestPoolSharesOneClientPerUpstream(t *testing.T) {
	specs, err := upstream.Resolve(upstream.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	p := httpc.NewPool(specs, httpc.Options{})
	a, err := p.Client("ban")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := p.Client("ban")
	c, _ := p.Client("geo-api")
	if a != b || a == c {
		t.Error("the pool must give one client per upstream")
	}
	if _, err := p.Client("nope"); err == nil {
		t.Error("an unknown upstream must be an error")
	}
}

// An answer in a shape the connector cannot read names the field, and is one error kind
// (ErrBadAnswer) that the routes turn into a 502.
func TestUnreadableAnswerNamesTheField(t *testing.T) {
	var out struct {
		Features []struct {
			Properties struct {
				Score float64 `json:"score"`
			} `json:"properties"`
		} `json:"features"`
	}
	for _, c := range []struct {
		name, body, field string
	}{
		{"wrong type", `{"features":[{"properties":{"score":"high"}}]}`, "features.properties.score"},
		{"not JSON", `<html>maintenance</html>`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := upstreamtest.New(t)
			s.Expect("/geocodage/search", nil, upstreamtest.JSON(200, c.body))
			err := client(t, s, 0, httpc.Options{}).GetJSON(context.Background(), "/search", nil, &out)
			var ue *upstream.Error
			if !errors.As(err, &ue) || !errors.Is(err, upstream.ErrBadAnswer) || ue.Field != c.field || ue.Upstream != "ban" {
				t.Fatalf("err = %#v", err)
			}
		})
	}
}

// TestBaseURLPlaceholders: a base URL with "{name}" placeholders is filled per call, a value
// that is not a host label or path segment is refused before any request, and an escaped
// path (a "/" inside a title) goes out as written.
func TestBaseURLPlaceholders(t *testing.T) {
	s := upstreamtest.New(t)
	spec := s.Spec(t, "ban")
	spec.BaseURL = s.URL + "/{lang}/w"
	c, err := httpc.New(spec, httpc.Options{Contact: "ops@example.org", Logger: obs.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Templated() {
		t.Fatal("a base URL with {lang} is not templated")
	}
	s.Handle(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(`{}`)) }))
	var out map[string]any
	if err := c.GetJSONAt(context.Background(), map[string]string{"lang": "zh-min-nan"}, "/page/AC%2FDC", nil, &out); err != nil {
		t.Fatal(err)
	}
	if r := s.Last(); r.URL.EscapedPath() != "/zh-min-nan/w/page/AC%2FDC" {
		t.Errorf("request path = %s, want /zh-min-nan/w/page/AC%%2FDC", r.URL.EscapedPath())
	}
	for _, bad := range []map[string]string{nil, {"lang": "evil.example/x"}, {"lang": "EN"}} {
		if err := c.GetJSONAt(context.Background(), bad, "/x", nil, &out); err == nil {
			t.Errorf("vars %v accepted", bad)
		}
	}
	if n := len(s.Requests()); n != 1 {
		t.Errorf("%d requests, want 1 (refused values never leave)", n)
	}
}

// TestErrorBodyKept: the body of a non-2xx answer travels in the error for connectors that
// read it (OSRM's code).
func TestErrorBodyKept(t *testing.T) {
	s := upstreamtest.New(t)
	s.Handle(upstreamtest.JSON(400, `{"code":"NoRoute","message":"Impossible route between points"}`))
	c := client(t, s, 0, httpc.Options{})
	var out map[string]any
	err := c.GetJSON(context.Background(), "/route", nil, &out)
	if upstream.StatusOf(err) != 400 || !strings.Contains(string(upstream.BodyOf(err)), `"NoRoute"`) {
		t.Fatalf("err = %v, body %q", err, upstream.BodyOf(err))
	}
}
