package paywall_test

import (
	"context"
	"crypto/ecdsa"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/mcp"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/render"
	"github.com/peage/appliance/internal/obs/obstest"
	"github.com/peage/appliance/internal/testclock"
	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/exact"
	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/settletest"
	"github.com/peage/appliance/settle/x402"
)

const price = 10_000

// paidWorld is the real server in-process with the verifying gate over the embedded chain's
// facilitator, and the MCP endpoint bound.
type paidWorld struct {
	dev  *settle.Dev
	h    *apitest.Harness
	cat  *catalog.Catalog
	cfg  paywall.Config
	key  *ecdsa.PrivateKey
	logs *obstest.LogSink
	now  *testclock.Clock
}

func startPaid(t *testing.T, policy paywall.Policy, extra ...catalog.Entry) *paidWorld {
	t.Helper()
	dev, fc := settletest.StartDev(t)
	cfg := paywall.Config{Network: dev.Network, Asset: dev.Asset, PayTo: dev.PayTo, TokenName: dev.TokenName, TokenVersion: dev.TokenVersion,
		MaxTimeoutSeconds: 60, ReceiverAuthorizer: dev.ReceiverAuthorizer, WithdrawDelaySeconds: 900, MinDeposit: 100_000}
	logs := &obstest.LogSink{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	now := testclock.At(time.Now())
	gate := paywall.New(cfg, policy, fc, paywall.GateOptions{Logger: log, Now: now.Now})
	echo := func(_ context.Context, r *catalog.Request) (any, error) {
		return map[string]any{"q": r.Args.Str("q")}, nil
	}
	entries := append([]catalog.Entry{
		{Method: "GET", Path: "/v1/test/echo", Summary: "echo", Kind: catalog.Paid, Price: price, Timeout: 10 * time.Second,
			Params: []catalog.Param{catalog.S("q", "text")}, Handler: echo},
		{Method: "POST", Path: "/mcp", Summary: "MCP", Kind: catalog.Discovery, Timeout: 30 * time.Second},
	}, extra...)
	cat, err := catalog.New(entries)
	if err != nil {
		t.Fatal(err)
	}
	h := apitest.Start(t, cat, apitest.Options{Gate: gate, Pay: cfg, Logger: log})
	r := render.New(cat, render.Info{BaseURL: h.BaseURL, Pay: cfg, Version: "test"})
	if err := mcp.New(cat, r, h.Server, h.Server, "test").Bind(cat); err != nil {
		t.Fatal(err)
	}
	key, err := settle.LoadKey(dev.PayerKey)
	if err != nil {
		t.Fatal(err)
	}
	h.Client = &http.Client{Transport: &http.Transport{}}
	t.Cleanup(h.Client.CloseIdleConnections)
	return &paidWorld{dev: dev, h: h, cat: cat, cfg: cfg, key: key, logs: logs, now: now}
}

// answer is one HTTP answer, with the error of its fresh challenge on a 402.
type answer struct {
	status  int
	body    string
	reason  string
	receipt *x402.SettlementResponse
}

func (w *paidWorld) get(t *testing.T, path, q string, hdr map[string]string) answer {
	t.Helper()
	req, _ := http.NewRequest("GET", w.h.BaseURL+path+"?q="+q, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := w.h.Client.Do(req)
	if err != nil {
		t.Fatalf("the server did not answer: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, body: string(b)}
	if h := resp.Header.Get(x402.HeaderPaymentRequired); h != "" {
		pr, err := x402.DecodeRequired(h)
		if err != nil {
			t.Fatalf("undecodable challenge: %v", err)
		}
		a.reason = pr.Error
	}
	if h := resp.Header.Get(x402.HeaderPaymentResponse); h != "" {
		s, err := x402.DecodeSettlement(h)
		if err != nil {
			t.Fatalf("undecodable receipt: %v", err)
		}
		a.receipt = s
	}
	return a
}

// signed is a real payment for path at the route's price, as a client signs it from the 402.
func (w *paidWorld) signed(t *testing.T, path string, version int) *x402.PaymentPayload {
	t.Helper()
	r := w.cfg.Requirements(w.cat.ByPath(path))
	p, err := exact.NewPayload(w.key, version, &r, &x402.ResourceInfo{URL: w.h.BaseURL + path}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (w *paidWorld) balance(t *testing.T, a string) int64 {
	t.Helper()
	b, err := w.dev.Chain.Balance(context.Background(), common.HexToAddress(a))
	if err != nil {
		t.Fatal(err)
	}
	return b.Int64()
}

// held counts the payments the ledger holds or took.
func (w *paidWorld) held() int {
	return len(w.dev.Facilitator.Ledger().List(ledger.Settled, ledger.Queued, ledger.Broadcast, ledger.Reserved))
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func enc(t *testing.T, v any) string {
	t.Helper()
	s, err := x402.Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// reasonIs reports whether a challenge's error names reason (it may explain it after a colon).
func reasonIs(got, reason string) bool { return got == reason || strings.HasPrefix(got, reason+":") }

// TestMalformedPaymentsAre402 sends the payment headers of the audit (issue 34, item 1: a v1
// payload in PAYMENT-SIGNATURE killed the process) and their neighbours through the real
// server: each is a 402 whose challenge names the fault, nothing is held or moved, and the
// server keeps serving.
func TestMalformedPaymentsAre402(t *testing.T) {
	w := startPaid(t, paywall.Policy{Settlement: x402.ModeSync})
	sig, v1 := x402.HeaderPaymentSignature, x402.HeaderXPayment
	// edited is a real signed v2 payment with its JSON edited: the requirements still match, so
	// the faults inside the authorization reach the facilitator's strict parsing.
	edited := func(edit func(m map[string]any)) func(t *testing.T) string {
		return func(t *testing.T) string {
			var m map[string]any
			b, _ := json.Marshal(w.signed(t, "/v1/test/echo", 2))
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			edit(m)
			return enc(t, m)
		}
	}
	auth := func(m map[string]any) map[string]any {
		return m["payload"].(map[string]any)["authorization"].(map[string]any)
	}
	fixed := func(s string) func(*testing.T) string { return func(*testing.T) string { return s } }
	cases := []struct {
		name, header string
		value        func(t *testing.T) string
		reason       string
	}{
		{"v1 payload in PAYMENT-SIGNATURE (the audit's header)", sig, fixed(b64(`{"x402Version":1,"scheme":"exact","network":"base"}`)), x402.ReasonInvalidVersion},
		{"v2 payload in X-PAYMENT", v1, func(t *testing.T) string { return enc(t, w.signed(t, "/v1/test/echo", 2)) }, x402.ReasonInvalidVersion},
		{"version 3", sig, fixed(b64(`{"x402Version":3,"accepted":{}}`)), x402.ReasonInvalidVersion},
		{"version as text", sig, fixed(b64(`{"x402Version":"2"}`)), x402.ReasonInvalidPayload},
		{"not base64", sig, fixed("%%%not base64%%%"), x402.ReasonInvalidPayload},
		{"not JSON", sig, fixed(b64("not json")), x402.ReasonInvalidPayload},
		{"JSON null", sig, fixed(b64("null")), x402.ReasonInvalidVersion},
		{"oversized", sig, fixed(strings.Repeat("A", 9000)), x402.ReasonInvalidPayload},
		{"v2 without accepted", sig, fixed(b64(`{"x402Version":2,"payload":{}}`)), x402.ReasonInvalidPayload},
		{"v2 with accepted null", sig, fixed(b64(`{"x402Version":2,"accepted":null}`)), x402.ReasonInvalidPayload},
		{"v2 with accepted of the wrong type", sig, fixed(b64(`{"x402Version":2,"accepted":"exact"}`)), x402.ReasonInvalidPayload},
		{"v2 payload of the wrong type", sig, edited(func(m map[string]any) { m["payload"] = "0x00" }), x402.ReasonInvalidPayload},
		{"v2 with an empty accepted", sig, fixed(b64(`{"x402Version":2,"accepted":{},"payload":{}}`)), x402.ReasonInvalidScheme},
		{"v1 without payload", v1, fixed(b64(`{"x402Version":1,"scheme":"exact","network":"base"}`)), x402.ReasonInvalidNetwork},
		{"authorization missing", sig, edited(func(m map[string]any) { delete(m["payload"].(map[string]any), "authorization") }), x402.ReasonInvalidPayload},
		{"authorization fields missing", sig, edited(func(m map[string]any) { m["payload"].(map[string]any)["authorization"] = map[string]any{} }), x402.ReasonInvalidPayload},
		{"huge value", sig, edited(func(m map[string]any) { auth(m)["value"] = strings.Repeat("9", 90) }), x402.ReasonInvalidPayload},
		{"negative value", sig, edited(func(m map[string]any) { auth(m)["value"] = "-10000" }), x402.ReasonInvalidPayload},
		{"value as a number", sig, edited(func(m map[string]any) { auth(m)["value"] = 10000 }), x402.ReasonInvalidPayload},
		{"huge validBefore", sig, edited(func(m map[string]any) { auth(m)["validBefore"] = strings.Repeat("9", 80) }), x402.ReasonInvalidPayload},
		{"negative validBefore", sig, edited(func(m map[string]any) { auth(m)["validBefore"] = "-1" }), x402.ReasonValidBefore},
		{"short nonce", sig, edited(func(m map[string]any) { auth(m)["nonce"] = "0x0102" }), x402.ReasonInvalidPayload},
		{"odd-length nonce", sig, edited(func(m map[string]any) { auth(m)["nonce"] = "0x" + strings.Repeat("a", 63) }), x402.ReasonInvalidPayload},
		{"short address", sig, edited(func(m map[string]any) { auth(m)["from"] = "0x1234" }), x402.ReasonInvalidPayload},
		{"short signature", sig, edited(func(m map[string]any) { m["payload"].(map[string]any)["signature"] = "0x01" }), x402.ReasonSignature},
		{"empty signature", sig, edited(func(m map[string]any) { m["payload"].(map[string]any)["signature"] = "" }), x402.ReasonInvalidPayload},
		{"identifier extension of the wrong type", sig, edited(func(m map[string]any) { m["extensions"] = map[string]any{x402.ExtPaymentIdentifier: 7} }), x402.ReasonInvalidPayload},
		{"batch-settlement without a domain", sig, fixed(b64(`{"x402Version":2,"accepted":{"scheme":"batch-settlement"},"payload":{"type":"voucher"}}`)), x402.ReasonBatchMissingEIP712Domain},
		{"batch-settlement payload of the wrong type", sig, fixed(b64(`{"x402Version":2,"accepted":{"scheme":"batch-settlement"},"payload":7}`)), x402.ReasonInvalidPayload},
	}
	before := w.balance(t, w.dev.PayTo)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := w.get(t, "/v1/test/echo", "x", map[string]string{c.header: c.value(t)})
			if a.status != http.StatusPaymentRequired || !reasonIs(a.reason, c.reason) {
				t.Fatalf("%d %q, want 402 naming %s: %s", a.status, a.reason, c.reason, a.body)
			}
			// Still serving: an unpaid call gets its challenge.
			if a := w.get(t, "/v1/test/echo", "y", nil); a.status != http.StatusPaymentRequired {
				t.Fatalf("after the malformed payment, an unpaid call: %d %s", a.status, a.body)
			}
		})
	}
	if n := w.held(); n != 0 {
		t.Fatalf("%d payments held after malformed payments", n)
	}
	if got := w.balance(t, w.dev.PayTo); got != before {
		t.Fatalf("malformed payments moved %d", got-before)
	}
}

// TestMalformedMCPPaymentsAre402: the same faults in a tools/call's _meta["x402/payment"] are
// tool results carrying a fresh PaymentRequired that names them.
func TestMalformedMCPPaymentsAre402(t *testing.T) {
	w := startPaid(t, paywall.Policy{Settlement: x402.ModeSync})
	ctx := context.Background()
	session, err := sdk.NewClient(&sdk.Implementation{Name: "payer", Version: "1"}, nil).
		Connect(ctx, &sdk.StreamableClientTransport{Endpoint: w.h.BaseURL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	cases := []struct {
		name    string
		payment any
		reason  string
	}{
		{"v1 without payload", map[string]any{"x402Version": 1, "scheme": "exact", "network": "base"}, x402.ReasonInvalidNetwork},
		{"v1 without network", map[string]any{"x402Version": 1, "scheme": "exact"}, x402.ReasonInvalidPayload},
		{"v2 without accepted", map[string]any{"x402Version": 2}, x402.ReasonInvalidPayload},
		{"no version", map[string]any{"accepted": map[string]any{}}, x402.ReasonInvalidVersion},
		{"text", "abc", x402.ReasonInvalidPayload},
		{"number", 12, x402.ReasonInvalidPayload},
		{"list", []any{1}, x402.ReasonInvalidPayload},
		{"payload of the wrong type", map[string]any{"x402Version": 2, "accepted": map[string]any{"scheme": "exact"}, "payload": []any{}}, x402.ReasonInvalidPayload},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: "test_echo", Arguments: map[string]any{"q": "x"},
				Meta: sdk.Meta{paywall.MCPMetaPayment: c.payment}})
			if err != nil || !res.IsError {
				t.Fatalf("%v %+v", err, res)
			}
			var pr x402.PaymentRequired
			b, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(b, &pr); err != nil || len(pr.Accepts) == 0 || !reasonIs(pr.Error, c.reason) {
				t.Fatalf("structuredContent %s, want a PaymentRequired naming %s", b, c.reason)
			}
		})
	}
	if n := w.held(); n != 0 {
		t.Fatalf("%d payments held after malformed payments", n)
	}
}

// faulty is a paid route whose handler panics, as a handler's bug would.
var faulty = catalog.Entry{Method: "GET", Path: "/v1/test/faulty", Summary: "panics", Kind: catalog.Paid, Price: price, Timeout: 10 * time.Second,
	Params: []catalog.Param{catalog.S("q", "text")},
	Handler: func(context.Context, *catalog.Request) (any, error) {
		var m map[string]int
		//lint:ignore SA5000 the handler's bug this test plants: a nil map write
		m["boom"]++
		return nil, nil
	}}

// TestPanickingHandlerAnswers500: a paid call whose handler panics answers 500 in the one error
// shape, logs the panic with its stack, charges nothing (the payment is released: the same
// authorization then pays another call) and the server keeps serving, over HTTP and MCP alike.
func TestPanickingHandlerAnswers500(t *testing.T) {
	w := startPaid(t, paywall.Policy{Settlement: x402.ModeSync}, faulty)
	before := w.balance(t, w.dev.Payer)
	p := w.signed(t, "/v1/test/faulty", 2)
	a := w.get(t, "/v1/test/faulty", "x", map[string]string{x402.HeaderPaymentSignature: enc(t, p)})
	var body struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal([]byte(a.body), &body); a.status != http.StatusInternalServerError || err != nil || body.Error.Code != "internal" {
		t.Fatalf("%d %s, want 500 with the error shape", a.status, a.body)
	}
	logs := w.logs.String()
	if !strings.Contains(logs, "panic recovered") || !strings.Contains(logs, "assignment to entry in nil map") || !strings.Contains(logs, "edge_test.go") {
		t.Fatalf("the panic and its stack are not logged: %s", logs)
	}
	if n := w.held(); n != 0 {
		t.Fatalf("%d payments held after the panic", n)
	}
	// Released: the same nonce and amount now pay the echo route (same price, same payee).
	p.Resource.URL = w.h.BaseURL + "/v1/test/echo"
	if a := w.get(t, "/v1/test/echo", "after", map[string]string{x402.HeaderPaymentSignature: enc(t, p)}); a.status != 200 || a.receipt == nil || !a.receipt.Success {
		t.Fatalf("the released payment on another call: %d %s", a.status, a.body)
	}
	if paid := before - w.balance(t, w.dev.Payer); paid != price {
		t.Fatalf("payer paid %d, want one call's %d", paid, price)
	}

	// The MCP path: the tools/call answers an error result, the endpoint keeps serving.
	ctx := context.Background()
	session, err := sdk.NewClient(&sdk.Implementation{Name: "payer", Version: "1"}, nil).
		Connect(ctx, &sdk.StreamableClientTransport{Endpoint: w.h.BaseURL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	var meta map[string]any
	pb, _ := json.Marshal(w.signed(t, "/v1/test/faulty", 2))
	_ = json.Unmarshal(pb, &meta)
	res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: "test_faulty", Arguments: map[string]any{"q": "x"}, Meta: sdk.Meta{paywall.MCPMetaPayment: meta}})
	if err != nil || !res.IsError {
		t.Fatalf("MCP call of the faulty route: %v %+v", err, res)
	}
	if b, _ := json.Marshal(res.StructuredContent); !strings.Contains(string(b), `"code":"internal"`) {
		t.Fatalf("MCP error result %s", b)
	}
	if res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: "test_echo", Arguments: map[string]any{"q": "x"}}); err != nil || !res.IsError {
		t.Fatalf("MCP after the panic: %v %+v", err, res)
	}
	if n := w.held(); n != 1 {
		t.Fatalf("%d payments held or taken, want the echo call's one", n)
	}
	if paid := before - w.balance(t, w.dev.Payer); paid != price {
		t.Fatalf("payer paid %d, want one call's %d", paid, price)
	}
}

// TestIdentifierRetryOutlivesTheAuthorization (issue 34, item 9): a retry carrying the payment
// identifier and payload of a delivered call gets the stored answer even once the
// authorization's validBefore has passed, within the 15 minutes the answer is kept; a new
// identifier on such an authorization is still refused.
func TestIdentifierRetryOutlivesTheAuthorization(t *testing.T) {
	w := startPaid(t, paywall.Policy{Settlement: x402.ModeSync})
	p := w.signed(t, "/v1/test/echo", 2)
	x402.SetPaymentIdentifier(p, "pay_retry-after-expiry-0001")
	h := enc(t, p)
	first := w.get(t, "/v1/test/echo", "a", map[string]string{x402.HeaderPaymentSignature: h})
	if first.status != 200 || first.receipt == nil || !first.receipt.Success {
		t.Fatalf("first: %d %s", first.status, first.body)
	}
	w.now.Add(5 * time.Minute) // the authorization was valid for MaxTimeoutSeconds (130 s)
	retry := w.get(t, "/v1/test/echo", "a", map[string]string{x402.HeaderPaymentSignature: h})
	if retry.status != 200 || retry.body != first.body || retry.receipt == nil || retry.receipt.Transaction != first.receipt.Transaction {
		t.Fatalf("retry after validBefore: %d %q %s", retry.status, retry.reason, retry.body)
	}
	// A new payment signed now is valid 130 s of the chain's time, not long enough at the
	// gate's clock: its fresh identifier holds nothing, so it is refused and released.
	fresh := w.signed(t, "/v1/test/echo", 2)
	x402.SetPaymentIdentifier(fresh, "pay_retry-after-expiry-0002")
	if a := w.get(t, "/v1/test/echo", "a", map[string]string{x402.HeaderPaymentSignature: enc(t, fresh)}); a.status != 402 || !reasonIs(a.reason, x402.ReasonValidBefore) {
		t.Fatalf("a new identifier on an authorization expiring too soon: %d %q", a.status, a.reason)
	}
	if n := w.held(); n != 1 {
		t.Fatalf("%d payments held or taken, want the first call's one", n)
	}
}
