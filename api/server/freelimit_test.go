package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/peage/appliance/api/a2a"
	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/render"
	"github.com/peage/appliance/api/server"
	"github.com/peage/appliance/settle/x402"
)

const (
	freePath  = "/free/entreprise?q=danone"
	firstPath = "/v1/geo/reverse?lat=48.85&lon=2.35" // paid, with a free first call a day
	paidPath  = "/v1/fr/tva?siren=542065479"         // paid, no free call
	burst     = 5
)

// limitedServer serves a free route, a free-first-call route and a paid one through the
// verifying gate (no facilitator: no call here gets as far as needing one), with a free-call
// budget of burst calls that does not refill within a test (1 a minute).
func limitedServer(t *testing.T, trusted ...string) *apitest.Harness {
	t.Helper()
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	ok := func(context.Context, *catalog.Request) (any, error) { return map[string]any{"ok": true}, nil }
	for _, id := range []string{"free.entreprise", "geo.reverse", "fr.tva"} {
		if err := cat.Bind(id, ok, nil); err != nil {
			t.Fatal(err)
		}
	}
	pay := paywall.DefaultConfig()
	pay.PayTo = apitest.TestPayTo
	gate := paywall.New(pay, paywall.DefaultPolicy(), nil, paywall.GateOptions{})
	return apitest.Start(t, cat, apitest.Options{Gate: gate, Pay: pay, Configure: func(c *server.Config) {
		c.TrustedProxies = trusted
		c.FreePerMinute, c.FreeBurst = 1, burst
	}})
}

type answer struct {
	status     int
	code       string
	retryAfter string
}

// get calls path as the client named in X-Forwarded-For (when not empty), with extra headers.
func get(t *testing.T, h *apitest.Harness, path, forwardedFor string, hdr ...string) answer {
	t.Helper()
	req, err := http.NewRequest("GET", h.BaseURL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if forwardedFor != "" {
		req.Header.Set("X-Forwarded-For", forwardedFor)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := h.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var eb errBody
	_ = json.Unmarshal(body, &eb)
	return answer{status: resp.StatusCode, code: eb.Error.Code, retryAfter: resp.Header.Get("Retry-After")}
}

// TestFreeFloodFromOneIPv6Subnet: many addresses of one /64 are one client; once its burst is
// spent its free calls get 429 with Retry-After, while its paid calls and other clients are
// not limited.
func TestFreeFloodFromOneIPv6Subnet(t *testing.T) {
	h := limitedServer(t, "127.0.0.1")
	served := 0
	for i := range 3 * burst {
		a := get(t, h, freePath, fmt.Sprintf("2001:db8:1:2::%x", i+1))
		switch {
		case a.status == http.StatusOK:
			served++
		case a.status != http.StatusTooManyRequests || a.code != "limit_exceeded":
			t.Fatalf("call %d: %+v, want 200 or 429 limit_exceeded", i, a)
		default:
			if s, err := strconv.Atoi(a.retryAfter); err != nil || s < 1 {
				t.Errorf("call %d: Retry-After %q", i, a.retryAfter)
			}
		}
	}
	if served != burst {
		t.Fatalf("%d free calls served to one /64, want the burst of %d", served, burst)
	}
	flooder := "2001:db8:1:2:ffff::1"
	cases := []struct {
		name, path, client string
		hdr                []string
		want               int
	}{
		{"free_first_call_of_the_flooder_is_challenged_not_limited", firstPath, flooder, nil, http.StatusPaymentRequired},
		{"unpaid_call_of_the_flooder_is_challenged_not_limited", paidPath, flooder, nil, http.StatusPaymentRequired},
		{"v2_payment_of_the_flooder_reaches_the_gate", paidPath, flooder, []string{"Payment-Signature", "not-a-payment"}, http.StatusPaymentRequired},
		{"v1_payment_of_the_flooder_reaches_the_gate", firstPath, flooder, []string{"X-Payment", "not-a-payment"}, http.StatusPaymentRequired},
		{"next_ipv6_subnet_is_another_client", freePath, "2001:db8:1:3::1", nil, http.StatusOK},
		{"ipv4_client_is_another_client", freePath, "198.51.100.7", nil, http.StatusOK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if a := get(t, h, c.path, c.client, c.hdr...); a.status != c.want {
				t.Errorf("%+v, want %d", a, c.want)
			}
		})
	}
}

// TestSpoofedForwardedForDoesNotEscapeTheLimit: from a peer that is not a trusted proxy, a new
// X-Forwarded-For on every call changes nothing: the peer is the client.
func TestSpoofedForwardedForDoesNotEscapeTheLimit(t *testing.T) {
	h := limitedServer(t) // no trusted proxy
	served := 0
	for i := range 3 * burst {
		if get(t, h, freePath, fmt.Sprintf("203.0.113.%d", i+1)).status == http.StatusOK {
			served++
		}
	}
	if served != burst {
		t.Fatalf("%d free calls served to one peer rotating X-Forwarded-For, want %d", served, burst)
	}
}

// TestRefusedFreeFirstCallCostsNoToken: the free first call is served once a day and spends a
// token; the unpaid calls after it are answered 402 and spend none.
func TestRefusedFreeFirstCallCostsNoToken(t *testing.T) {
	h := limitedServer(t, "127.0.0.1")
	client := "198.51.100.20"
	if a := get(t, h, firstPath, client); a.status != http.StatusOK {
		t.Fatalf("free first call: %+v", a)
	}
	for i := range 3 * burst {
		if a := get(t, h, firstPath, client); a.status != http.StatusPaymentRequired {
			t.Fatalf("unpaid call %d after the free one: %+v, want 402", i, a)
		}
	}
	for i := range burst - 1 {
		if a := get(t, h, freePath, client); a.status != http.StatusOK {
			t.Fatalf("free call %d: %+v; the 402s spent tokens", i, a)
		}
	}
	if a := get(t, h, freePath, client); a.status != http.StatusTooManyRequests {
		t.Fatalf("call past the burst: %+v, want 429", a)
	}
}

// TestExhaustedFreeBucketNeverHidesThePayment: once a client's free-call bucket is empty,
// every payable route answers it 402 with the challenge and the reason (those with a free
// first call included: 429 would tell a client that wants to pay to wait), free-only routes
// answer 429, and the discovery documents are still served.
func TestExhaustedFreeBucketNeverHidesThePayment(t *testing.T) {
	// The agent card is served beside the A2A endpoint it names, bound once the server is up.
	cat := boundCatalogWith(t, func(c *catalog.Catalog) error { return render.New(c, render.Info{}).Bind(c) },
		"a2a", "well-known.agent-card.json")
	pay := paywall.DefaultConfig()
	pay.PayTo = apitest.TestPayTo
	gate := paywall.New(pay, paywall.DefaultPolicy(), nil, paywall.GateOptions{})
	h := apitest.Start(t, cat, apitest.Options{Gate: gate, Pay: pay, Configure: func(c *server.Config) {
		c.TrustedProxies = []string{"127.0.0.1"}
		c.FreePerMinute, c.FreeBurst = 1, 1
	}})
	if err := a2a.New(cat, h.Server, h.Server, a2a.Options{BaseURL: h.BaseURL}).Bind(cat); err != nil {
		t.Fatal(err)
	}
	client := "198.51.100.30"
	if a := get(t, h, freePath, client); a.status != http.StatusOK {
		t.Fatalf("the one free call of the bucket: %+v", a)
	}
	firstCalls := 0
	for _, e := range cat.Entries() {
		q := url.Values{}
		for k, v := range e.Example {
			q.Set(k, toText(v))
		}
		a := get(t, h, e.Path+"?"+q.Encode(), client)
		switch {
		case e.Kind == catalog.Paid:
			firstCalls += map[bool]int{true: 1}[e.FreeFirstCall]
			if a.status != http.StatusPaymentRequired {
				t.Errorf("%s (free first call %v): %+v, want 402", e.ID, e.FreeFirstCall, a)
			}
		case e.Kind == catalog.Free && !e.Document:
			if a.status != http.StatusTooManyRequests || a.code != "limit_exceeded" {
				t.Errorf("free route %s: %+v, want 429", e.ID, a)
			}
		case e.Kind == catalog.Discovery && e.Method == "GET", e.Document:
			if a.status != http.StatusOK {
				t.Errorf("discovery document %s: %+v, want 200", e.ID, a)
			}
		}
	}
	if firstCalls < 5 {
		t.Fatalf("only %d routes with a free first call checked", firstCalls)
	}
	req, _ := http.NewRequest("GET", h.BaseURL+firstPath, nil)
	req.Header.Set("X-Forwarded-For", client)
	resp, err := h.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	pr, err := x402.DecodeRequired(resp.Header.Get("Payment-Required"))
	if err != nil || pr.Error != paywall.ReasonFreeCallLimited {
		t.Fatalf("the 402's reason: %v %+v", err, pr)
	}
}

// TestTheGateAloneDecidesAFreeFirstCall: whether an unpaid call to a route with a free first
// call is served free is the gate's decision, the client's free-call bucket included. A gate
// that serves no free call (no facilitator configured) answers its own 402, even to a client
// whose bucket is empty, and spends none of it.
func TestTheGateAloneDecidesAFreeFirstCall(t *testing.T) {
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	ok := func(context.Context, *catalog.Request) (any, error) { return map[string]any{"ok": true}, nil }
	for _, id := range []string{"free.entreprise", "geo.reverse"} {
		if err := cat.Bind(id, ok, nil); err != nil {
			t.Fatal(err)
		}
	}
	h := apitest.Start(t, cat, apitest.Options{Gate: paywall.ChallengeOnly{}, Configure: func(c *server.Config) {
		c.TrustedProxies = []string{"127.0.0.1"}
		c.FreePerMinute, c.FreeBurst = 1, 1
	}})
	for _, client := range []string{"198.51.100.40", "198.51.100.41"} {
		if client == "198.51.100.41" { // its bucket emptied first
			if a := get(t, h, freePath, client); a.status != http.StatusOK {
				t.Fatalf("the one free call of the bucket: %+v", a)
			}
		}
		req, _ := http.NewRequest("GET", h.BaseURL+firstPath, nil)
		req.Header.Set("X-Forwarded-For", client)
		resp, err := h.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		pr, err := x402.DecodeRequired(resp.Header.Get("Payment-Required"))
		// The gate's own 402 to a call without payment names no reason (ReasonFreeCallLimited
		// would be the server's).
		if resp.StatusCode != http.StatusPaymentRequired || err != nil || pr.Error != "" {
			t.Errorf("client %s: %d, reason %+v (%v), want the gate's own 402", client, resp.StatusCode, pr, err)
		}
	}
	if a := get(t, h, freePath, "198.51.100.40"); a.status != http.StatusOK {
		t.Errorf("the refused first call spent the client's free token: %+v", a)
	}
}
