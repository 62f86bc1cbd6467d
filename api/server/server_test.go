package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/settle/x402"
)

type errBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Param   string `json:"param"`
	} `json:"error"`
}

func call(t *testing.T, h *apitest.Harness, method, path string, args map[string]any) (*http.Response, []byte) {
	t.Helper()
	var req *http.Request
	var err error
	if method == "GET" {
		q := url.Values{}
		for k, v := range args {
			switch x := v.(type) {
			case []any:
				parts := make([]string, len(x))
				for i, p := range x {
					parts[i] = p.(string)
				}
				q.Set(k, strings.Join(parts, ","))
			default:
				q.Set(k, toText(v))
			}
		}
		req, err = http.NewRequest("GET", h.BaseURL+path+"?"+q.Encode(), nil)
	} else {
		b, _ := json.Marshal(args)
		req, err = http.NewRequest("POST", h.BaseURL+path, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
	}
	if err != nil {
		t.Fatal(err)
	}
	resp, err := h.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

func toText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int:
		return strconv.Itoa(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// brokenArgs returns the example with one constraint broken and the parameter it names, or
// ok=false when the entry has nothing that can be broken.
func brokenArgs(e *catalog.Entry) (map[string]any, string, bool) {
	args := map[string]any{}
	for k, v := range e.Example {
		args[k] = v
	}
	for _, p := range e.Params {
		if p.Required {
			delete(args, p.Name)
			return args, p.Name, true
		}
	}
	for _, p := range e.Params {
		if p.OneOf != "" {
			for _, q := range e.Params {
				if q.OneOf == p.OneOf {
					delete(args, q.Name)
				}
			}
			return args, p.Name, true
		}
	}
	for _, p := range e.Params {
		switch {
		case p.Type == catalog.Int || p.Type == catalog.Number:
			args[p.Name] = "not-a-number"
			return args, p.Name, true
		case len(p.Enum) > 0:
			args[p.Name] = "no-such-value"
			return args, p.Name, true
		}
	}
	return nil, "", false
}

// TestEveryEntryThroughTheServer walks the whole catalog through the real server: a broken
// parameter answers 400 naming it (before any 402), a route without a handler answers 503
// before any 402, and a paid route with a handler answers a decodable 402 whose amount is the
// catalog's price.
func TestEveryEntryThroughTheServer(t *testing.T) {
	unbound, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	bound, _ := catalog.Default(catalog.DefaultNames())
	for _, e := range bound.Entries() {
		if err := bound.Bind(e.ID, func(context.Context, *catalog.Request) (any, error) { return map[string]any{"ok": true}, nil }, nil); err != nil {
			t.Fatal(err)
		}
	}
	hu := apitest.Start(t, unbound, apitest.Options{})
	hb := apitest.Start(t, bound, apitest.Options{})

	for _, e := range unbound.Entries() {
		if e.Kind != catalog.Paid && e.Kind != catalog.Free {
			continue
		}
		t.Run(e.ID, func(t *testing.T) {
			if args, param, ok := brokenArgs(e); ok && (len(args) > 0 || e.Kind == catalog.Free) {
				// (A paid call left with no parameter at all is a cold probe: TestColdProbe.)
				resp, body := call(t, hu, e.Method, e.Path, args)
				var eb errBody
				if resp.StatusCode != 400 || json.Unmarshal(body, &eb) != nil || eb.Error.Param != param || eb.Error.Code != "bad_param" {
					t.Fatalf("broken %s: got %d %s, want 400 naming %s", param, resp.StatusCode, body, param)
				}
			}
			resp, body := call(t, hu, e.Method, e.Path, e.Example)
			if resp.StatusCode != 503 || !strings.Contains(string(body), `"not_available"`) {
				t.Fatalf("unbound: got %d %s, want 503 not_available", resp.StatusCode, body)
			}
			resp, body = call(t, hb, e.Method, e.Path, e.Example)
			if e.Kind == catalog.Free {
				if resp.StatusCode != 200 {
					t.Fatalf("free route: got %d %s", resp.StatusCode, body)
				}
				return
			}
			if resp.StatusCode != 402 {
				t.Fatalf("paid route without payment: got %d %s, want 402", resp.StatusCode, body)
			}
			raw, err := base64.StdEncoding.DecodeString(resp.Header.Get("Payment-Required"))
			if err != nil {
				t.Fatalf("PAYMENT-REQUIRED is not standard base64: %v", err)
			}
			var pr x402.PaymentRequired
			if err := json.Unmarshal(raw, &pr); err != nil || pr.X402Version != 2 || len(pr.Accepts) != 1 {
				t.Fatalf("challenge %s: %v", raw, err)
			}
			a := pr.Accepts[0]
			if a.Amount != strconv.FormatUint(e.Price, 10) || a.Scheme != "exact" || a.Network != "eip155:8453" || a.PayTo != apitest.TestPayTo || a.Extra == nil {
				t.Fatalf("challenge accepts %+v, want amount %d", a, e.Price)
			}
			if pr.Resource.URL != hb.BaseURL+e.Path {
				t.Fatalf("resource url %s", pr.Resource.URL)
			}
			var v1 struct {
				X402Version int                   `json:"x402Version"`
				Accepts     []x402.RequirementsV1 `json:"accepts"`
			}
			if err := json.Unmarshal(body, &v1); err != nil || v1.X402Version != 1 || v1.Accepts[0].MaxAmountRequired != a.Amount {
				t.Fatalf("legacy body %s", body)
			}
		})
	}
}

func TestAlternativesInChallenge(t *testing.T) {
	cat, _ := catalog.Default(catalog.DefaultNames())
	e := cat.ByPath("/v1/fr/kyb")
	noop := func(context.Context, *catalog.Request) (any, error) { return nil, nil }
	_ = cat.Bind(e.ID, noop, nil)
	h := apitest.Start(t, cat, apitest.Options{})
	alternatives := func() []struct{ Kind, Path, Amount string } {
		t.Helper()
		resp, body := call(t, h, "GET", e.Path, e.Example)
		if resp.StatusCode != 402 {
			t.Fatalf("got %d", resp.StatusCode)
		}
		var v1 struct {
			Alternatives []struct{ Kind, Path, Amount string } `json:"alternatives"`
		}
		_ = json.Unmarshal(body, &v1)
		return v1.Alternatives
	}
	// Alternatives that answer 503 are not offered; they appear once they can serve.
	if alts := alternatives(); len(alts) != 0 {
		t.Fatalf("unavailable alternatives offered: %+v", alts)
	}
	_ = cat.Bind(cat.ByPath("/v1/fr/kyb/partial").ID, noop, nil)
	_ = cat.Bind(cat.ByPath(e.FreeTrial).ID, noop, nil)
	if alts := alternatives(); len(alts) != 2 || alts[0].Path != "/v1/fr/kyb/partial" || alts[0].Amount != "30000" || alts[1].Amount != "0" {
		t.Fatalf("alternatives %+v", alts)
	}
	// Over HTTP they are in the legacy body only, which comes with every 402: the header
	// every client parses does not carry them twice. MCP and A2A, which carry the challenge as
	// an object with no body beside it, list them there.
	resp, _ := call(t, h, "GET", e.Path, e.Example)
	pr, err := x402.DecodeRequired(resp.Header.Get("Payment-Required"))
	if err != nil || strings.Contains(decoded(t, resp.Header.Get("Payment-Required")), "alternatives") {
		t.Fatalf("PAYMENT-REQUIRED %+v (%v) lists the alternatives of the body", pr, err)
	}
	for name, object := range map[string]func(*catalog.Entry, error) (map[string]any, error){
		"mcp": h.Server.ChallengeObject, "a2a": h.Server.PaymentRequiredObject} {
		obj, err := object(e, paywall.PaymentRequired(""))
		if alts, _ := obj["alternatives"].([]any); err != nil || len(alts) != 2 {
			t.Fatalf("%s challenge object without its alternatives: %v (%v)", name, obj["alternatives"], err)
		}
	}
}

func decoded(t *testing.T, header string) string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(header)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func TestErrorsAndLimits(t *testing.T) {
	cat, _ := catalog.Default(catalog.DefaultNames())
	h := apitest.Start(t, cat, apitest.Options{})
	cases := []struct {
		name, method, path, body string
		header                   map[string]string
		status                   int
		code                     string
	}{
		{"unknown path", "GET", "/v1/nope", "", nil, 404, "not_found"},
		{"wrong method", "DELETE", "/v1/fr/tva", "", nil, 405, "method_not_allowed"},
		{"body not JSON", "POST", "/v1/extract", "{", nil, 400, "bad_request"},
		{"oversized headers", "GET", "/v1/fr/tva?siren=542065479", "", map[string]string{"X-Big": strings.Repeat("b", 20<<10)}, 431, "headers_too_large"},
		{"bad siren", "GET", "/v1/fr/tva?siren=123456789", "", nil, 400, "bad_param"},
		{"range", "GET", "/v1/fr/meteo?lat=48&lon=2&jours=8", "", nil, 400, "bad_param"},
		{"list length", "POST", "/v1/classify", `{"messages":["a"],"labels":["only-one"]}`, nil, 400, "bad_param"},
		{"lat without lon", "GET", "/v1/weather?lat=48.8", "", nil, 400, "bad_param"},
		{"page over 200 KB in bytes", "POST", "/v1/publish", `{"title":"t","html":"` + strings.Repeat("é", 102401) + `"}`, nil, 400, "bad_param"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(c.method, h.BaseURL+c.path, strings.NewReader(c.body))
			for k, v := range c.header {
				req.Header.Set(k, v)
			}
			resp, err := h.Client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			var eb errBody
			if resp.StatusCode != c.status || json.Unmarshal(body, &eb) != nil || eb.Error.Code != c.code {
				t.Fatalf("got %d %s, want %d %s", resp.StatusCode, body, c.status, c.code)
			}
		})
	}
}

func TestGetAndPostAreEquivalent(t *testing.T) {
	cat, _ := catalog.Default(catalog.DefaultNames())
	var seen []catalog.Args
	_ = cat.Bind("fr.meteo", func(_ context.Context, r *catalog.Request) (any, error) {
		seen = append(seen, r.Args)
		return map[string]any{"jours": r.Args.Int("jours")}, nil
	}, nil)
	gate := &apitest.RecordingGate{}
	h := apitest.Start(t, cat, apitest.Options{Gate: gate})
	r1, b1 := call(t, h, "GET", "/v1/fr/meteo", map[string]any{"lat": "48.85", "lon": "2.35", "jours": "5"})
	req, _ := http.NewRequest("POST", h.BaseURL+"/v1/fr/meteo", strings.NewReader(`{"lat":48.85,"lon":2.35,"jours":5}`))
	r2, err := h.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := io.ReadAll(r2.Body)
	r2.Body.Close()
	if r1.StatusCode != 200 || r2.StatusCode != 200 || string(b1) != string(b2) || string(b1) != `{"jours":5}` {
		t.Fatalf("GET %d %s, POST %d %s", r1.StatusCode, b1, r2.StatusCode, b2)
	}
	if gate.Charged[0] != gate.Charged[1] {
		t.Fatalf("GET and POST give different call keys: %q vs %q", gate.Charged[0], gate.Charged[1])
	}
}

// TestOversizedBodyIsRefusedUnread announces a body larger than the limit and sends none of
// it: the 413 must come back anyway, proving the server never reads such a body.
func TestOversizedBodyIsRefusedUnread(t *testing.T) {
	cat, _ := catalog.Default(catalog.DefaultNames())
	h := apitest.Start(t, cat, apitest.Options{})
	conn, err := net.Dial("tcp", strings.TrimPrefix(h.BaseURL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/extract HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", 600<<10)
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	var eb errBody
	if resp.StatusCode != 413 || json.Unmarshal(body, &eb) != nil || eb.Error.Code != "too_large" {
		t.Fatalf("got %d %s", resp.StatusCode, body)
	}
}

// panickingGate is a gate with a bug: it panics on every call.
type panickingGate struct{}

func (panickingGate) Charge(context.Context, *paywall.Call, func(context.Context) (any, error)) (any, map[string]string, error) {
	var p *paywall.Call
	return p.Entry, nil, nil
}

// TestPanicsAnswer500: a panic in the gate or in a free route's handler answers 500 in the one
// error shape, and the server keeps serving (fasthttp would let the panic end the process).
func TestPanicsAnswer500(t *testing.T) {
	ok := func(context.Context, *catalog.Request) (any, error) { return map[string]any{"ok": true}, nil }
	cat, err := catalog.New([]catalog.Entry{
		{Method: "GET", Path: "/v1/test/paid", Summary: "paid", Kind: catalog.Paid, Price: 1_000, Timeout: time.Second, Handler: ok},
		{Method: "GET", Path: "/free/test/faulty", Summary: "free, panics", Kind: catalog.Free, Timeout: time.Second,
			Handler: func(context.Context, *catalog.Request) (any, error) { panic("a handler's bug") }},
		{Method: "GET", Path: "/free/test/ok", Summary: "free", Kind: catalog.Free, Timeout: time.Second, Handler: ok},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := apitest.Start(t, cat, apitest.Options{Gate: panickingGate{}})
	for _, path := range []string{"/v1/test/paid", "/free/test/faulty", "/v1/test/paid"} {
		resp, b := call(t, h, "GET", path, nil)
		var eb errBody
		if err := json.Unmarshal(b, &eb); resp.StatusCode != http.StatusInternalServerError || err != nil || eb.Error.Code != "internal" {
			t.Fatalf("%s: %d %s, want 500 internal", path, resp.StatusCode, b)
		}
		if resp, b := call(t, h, "GET", "/free/test/ok", nil); resp.StatusCode != http.StatusOK {
			t.Fatalf("after the panic of %s: %d %s", path, resp.StatusCode, b)
		}
	}
}
