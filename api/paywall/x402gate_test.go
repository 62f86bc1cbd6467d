package paywall

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/internal/receipt"
	"github.com/peage/appliance/settle/x402"
)

// scripted is a facilitator whose answers the test sets; it records what the gate asked.
type scripted struct {
	reserve     x402.ReserveResponse
	err         error
	settle      x402.SettlementResponse
	completeErr error
	abort       x402.SettlementResponse
	reserves    []*x402.ReserveRequest
	modes       []string
	released    []string
	aborted     []string
}

func (s *scripted) Reserve(_ context.Context, r *x402.ReserveRequest) (x402.ReserveResponse, error) {
	s.reserves = append(s.reserves, r)
	return s.reserve, s.err
}
func (s *scripted) Release(_ context.Context, id string) error {
	s.released = append(s.released, id)
	return nil
}
func (s *scripted) Complete(_ context.Context, _ string, mode string) (x402.SettlementResponse, error) {
	s.modes = append(s.modes, mode)
	return s.settle, s.completeErr
}
func (s *scripted) Abort(_ context.Context, id string) (x402.SettlementResponse, error) {
	s.aborted = append(s.aborted, id)
	return s.abort, nil
}

// refusing is a facilitator error that is a verdict (4xx), not worth a retry.
type refusing struct{}

func (refusing) Error() string   { return "facilitator answered 409" }
func (refusing) HTTPStatus() int { return 409 }

type revocable struct{ revoked bool }

func (r *revocable) Revoke(context.Context) error { r.revoked = true; return nil }

// sideEffect is a result as the server encodes it when the handler handed something out.
func sideEffect(r *revocable) *catalog.Raw {
	return &catalog.Raw{Body: []byte(`{"key":"k"}`), OnRevoke: r.Revoke}
}

func payload(t testing.TB, cfg Config, e *catalog.Entry, validFor time.Duration, id string) string {
	t.Helper()
	req := cfg.Requirements(e)
	p := x402.PaymentPayload{X402Version: 2, Accepted: &req, Resource: &x402.ResourceInfo{URL: "https://x/v1/a"},
		Payload: x402.ExactPayload{Signature: "0x01", Authorization: x402.Authorization{From: "0xP", Nonce: "0x02",
			ValidBefore: strconv.FormatInt(time.Now().Add(validFor).Unix(), 10)}}}
	if id != "" {
		p.Extensions = map[string]any{x402.ExtPaymentIdentifier: map[string]any{"info": map[string]any{"id": id}}}
	}
	enc, err := x402.Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

func call(e *catalog.Entry, header string) *Call {
	h := http.Header{}
	h.Set(x402.HeaderPaymentSignature, header)
	return &Call{Entry: e, Request: &catalog.Request{Header: h}, ResourceURL: "https://x/v1/a", Key: "k"}
}

func paidCall(t *testing.T, cfg Config, e *catalog.Entry) *Call {
	t.Helper()
	return call(e, payload(t, cfg, e, time.Hour, ""))
}

func TestGatePolicy(t *testing.T) {
	cfg := DefaultConfig()
	cfg.PayTo = "0x000000000000000000000000000000000000dEaD"
	ok := x402.ReserveResponse{VerifyResponse: x402.VerifyResponse{IsValid: true, Payer: "0xP"}, ID: "id1"}
	settled := x402.SettlementResponse{Success: true, Transaction: "0x1"}
	pending := x402.SettlementResponse{ErrorReason: x402.ReasonSettlementPending}
	cheap := &catalog.Entry{ID: "a", Price: 1_000, Timeout: 10 * time.Second}
	pricey := &catalog.Entry{ID: "b", Price: 1_000_000, Timeout: 10 * time.Second}
	proxy := &catalog.Entry{ID: "proxy.1gb", Price: 1_000, Tier: catalog.TierMetered, Timeout: 10 * time.Second}
	fails := func(err error) func(*revocable) (any, error) {
		return func(*revocable) (any, error) { return nil, err }
	}
	handsOut := func(r *revocable) (any, error) { return sideEffect(r), nil }
	cases := []struct {
		name      string
		entry     *catalog.Entry
		f         scripted
		work      func(*revocable) (any, error)
		code      apierr.Code // "" for success
		mode      string      // settlement mode used, "" when none
		released  bool
		revoked   bool
		aborted   bool
		delivered bool
	}{
		{name: "cheap call is optimistic", entry: cheap, f: scripted{reserve: ok, settle: x402.SettlementResponse{Success: true}}, mode: x402.ModeOptimistic, delivered: true},
		{name: "pricey call is synchronous", entry: pricey, f: scripted{reserve: ok, settle: settled}, mode: x402.ModeSync, delivered: true},
		{name: "proxy sale is synchronous", entry: proxy, f: scripted{reserve: ok, settle: settled}, work: handsOut, mode: x402.ModeSync, delivered: true},
		{name: "a cheap result with a side effect is synchronous", entry: cheap, f: scripted{reserve: ok, settle: settled}, work: handsOut, mode: x402.ModeSync, delivered: true},
		{name: "failed work releases", entry: cheap, f: scripted{reserve: ok}, work: fails(apierr.Upstream("u", errors.New("x"), "down")), code: apierr.CodeUpstream, released: true},
		{name: "non-2xx result releases", entry: cheap, f: scripted{reserve: ok}, work: func(*revocable) (any, error) { return &catalog.Raw{Status: 502}, nil }, released: true},
		{name: "invalid payment", entry: cheap, f: scripted{reserve: x402.ReserveResponse{VerifyResponse: x402.VerifyResponse{InvalidReason: x402.ReasonInsufficientFunds}}}, code: apierr.CodePayment},
		{name: "reused nonce is never replayed", entry: cheap, f: scripted{reserve: x402.ReserveResponse{VerifyResponse: x402.VerifyResponse{InvalidReason: x402.ReasonNonceUsed}}}, code: apierr.CodePayment},
		{name: "identifier conflict", entry: cheap, f: scripted{reserve: x402.ReserveResponse{Conflict: true, VerifyResponse: x402.VerifyResponse{InvalidReason: x402.ReasonIdentifierConflict}}}, code: apierr.CodeConflict},
		{name: "facilitator down", entry: cheap, f: scripted{err: errors.New("dial unix: no such file")}, code: apierr.CodeUnavailable},
		{name: "settlement fails: revoke", entry: proxy, f: scripted{reserve: ok, settle: x402.SettlementResponse{ErrorReason: x402.ReasonTransactionFailed}}, work: handsOut, code: apierr.CodePayment, mode: x402.ModeSync, revoked: true},
		{name: "settlement pending: not delivered", entry: pricey, f: scripted{reserve: ok, settle: pending, abort: pending}, work: handsOut, code: apierr.CodeUnavailable, mode: x402.ModeSync, revoked: true, aborted: true},
		{name: "unknown outcome: not delivered", entry: cheap, f: scripted{reserve: ok, completeErr: refusing{}, abort: pending}, work: handsOut, code: apierr.CodeUnavailable, mode: x402.ModeSync, revoked: true, aborted: true},
		{name: "unknown outcome found settled by the abort: delivered", entry: cheap, f: scripted{reserve: ok, completeErr: refusing{}, abort: settled}, mode: x402.ModeOptimistic, aborted: true, delivered: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := c.f
			g := New(cfg, Policy{Settlement: x402.ModeOptimistic, OptimisticMaxPrice: 50_000, SettleTimeoutSeconds: 1}, &f, GateOptions{})
			res := &revocable{}
			work := func(context.Context) (any, error) {
				if c.work != nil {
					return c.work(res)
				}
				return &catalog.Raw{Body: []byte(`{}`)}, nil
			}
			out, hdr, err := g.Charge(context.Background(), paidCall(t, cfg, c.entry), work)
			var code apierr.Code
			if err != nil {
				code = apierr.From(err).Code
			}
			if code != c.code {
				t.Fatalf("code %q, want %q (%v)", code, c.code, err)
			}
			mode := ""
			if len(f.modes) > 0 {
				mode = f.modes[0]
			}
			if mode != c.mode || (len(f.released) > 0) != c.released || res.revoked != c.revoked || (len(f.aborted) > 0) != c.aborted {
				t.Fatalf("mode %q released %v revoked %v aborted %v", mode, f.released, res.revoked, f.aborted)
			}
			if delivered := err == nil && out != nil && succeeded(out); delivered != c.delivered {
				t.Fatalf("delivered %v, want %v", delivered, c.delivered)
			}
			if c.delivered && hdr[x402.HeaderPaymentResponse] == "" {
				t.Fatal("no PAYMENT-RESPONSE with a delivered result")
			}
		})
	}
}

func TestGateRefusesShortValidity(t *testing.T) {
	cfg := DefaultConfig()
	cfg.PayTo = "0x000000000000000000000000000000000000dEaD"
	e := &catalog.Entry{ID: "slow", Price: 1_000, Timeout: 45 * time.Second}
	f := scripted{reserve: x402.ReserveResponse{VerifyResponse: x402.VerifyResponse{IsValid: true}, ID: "id"}}
	g := New(cfg, DefaultPolicy(), &f, GateOptions{})
	ran := false
	_, _, err := g.Charge(context.Background(), call(e, payload(t, cfg, e, 7*time.Second, "")), func(context.Context) (any, error) {
		ran = true
		return &catalog.Raw{}, nil
	})
	if apierr.From(err).Code != apierr.CodePayment || ran || len(f.reserves) != 0 {
		t.Fatalf("an authorization valid 7 s for a 45 s route: err %v, work ran %v, reserved %d", err, ran, len(f.reserves))
	}
	if !strings.Contains(err.Error(), x402.ReasonValidBefore) {
		t.Fatalf("the refusal does not name the reason: %v", err)
	}
	// Valid long enough when presented, expired by the time the work is done: not delivered.
	clock := time.Now()
	g = New(cfg, DefaultPolicy(), &f, GateOptions{Now: func() time.Time { return clock }})
	out, _, err := g.Charge(context.Background(), call(e, payload(t, cfg, e, 80*time.Second, "")), func(context.Context) (any, error) {
		clock = clock.Add(70 * time.Second)
		return &catalog.Raw{Body: []byte(`{}`)}, nil
	})
	if err == nil || out != nil || len(f.modes) != 0 || len(f.aborted) != 1 {
		t.Fatalf("expired during the work: out %v err %v completes %v aborts %v", out, err, f.modes, f.aborted)
	}
}

func TestGateReplaysOnlyToTheIdentifier(t *testing.T) {
	cfg := DefaultConfig()
	cfg.PayTo = "0x000000000000000000000000000000000000dEaD"
	e := &catalog.Entry{ID: "a", Price: 1_000, Timeout: 10 * time.Second}
	receipt := x402.SettlementResponse{Success: true, Transaction: "0x1"}
	f := scripted{reserve: x402.ReserveResponse{VerifyResponse: x402.VerifyResponse{IsValid: true}, ID: "id"}, settle: receipt}
	g := New(cfg, DefaultPolicy(), &f, GateOptions{})
	runs := 0
	work := func(context.Context) (any, error) {
		runs++
		return &catalog.Raw{Body: []byte(`{"n":` + strconv.Itoa(runs) + `}`)}, nil
	}
	const id = "pay_0123456789abcdef"
	h := payload(t, cfg, e, time.Hour, id)
	first, _, err := g.Charge(context.Background(), call(e, h), work)
	if err != nil {
		t.Fatal(err)
	}
	if r := f.reserves[0]; r.IdentifierHash != x402.HashIdentifier(id) || r.PayloadHash == "" || r.IdentifierHash == id {
		t.Fatalf("the facilitator was not given the hashed identifier: %+v", r)
	}
	f.reserve = x402.ReserveResponse{Replay: &receipt, ID: "id"}
	again, _, err := g.Charge(context.Background(), call(e, h), work)
	if err != nil || string(again.(*catalog.Raw).Body) != string(first.(*catalog.Raw).Body) || runs != 1 {
		t.Fatalf("a retry with the identifier: %v %v, work ran %d times", again, err, runs)
	}
	// A malformed identifier is refused before anything else, with a fresh challenge.
	reserved := len(f.reserves)
	if _, _, err := g.Charge(context.Background(), call(e, payload(t, cfg, e, time.Hour, "short")), work); apierr.From(err).Code != apierr.CodePayment || len(f.reserves) != reserved {
		t.Fatalf("short identifier: %v", err)
	}
}

func TestWithFreeFirstCall(t *testing.T) {
	report := []byte(`{"granted":true,"note":"n"}`)
	cases := []struct{ in, want string }{
		{`{"a":1}`, `{"free_first_call":{"granted":true,"note":"n"},"a":1}`},
		{`{}`, `{"free_first_call":{"granted":true,"note":"n"}}`},
		{`[1]`, `[1]`},
	}
	for _, c := range cases {
		out := withFreeFirstCall(&catalog.Raw{ContentType: "application/json", Body: []byte(c.in)}, report).(*catalog.Raw)
		if string(out.Body) != c.want {
			t.Errorf("%s → %s, want %s", c.in, out.Body, c.want)
		}
	}
}

// A retry answered from the facilitator's replay record (the result made again, the gate's
// own copy gone) carries a signed receipt whose statement binds the body made again; a
// first answer's receipt does not verify that body.
func TestReplayedResultCarriesItsReceipt(t *testing.T) {
	cfg := DefaultConfig()
	cfg.PayTo = "0x000000000000000000000000000000000000dEaD"
	e := &catalog.Entry{ID: "a", Path: "/v1/a", Price: 1_000, Timeout: 10 * time.Second}
	settled := x402.SettlementResponse{Success: true, Transaction: "0x1", Payer: "0xP", Network: cfg.Network}
	f := scripted{reserve: x402.ReserveResponse{VerifyResponse: x402.VerifyResponse{IsValid: true, Payer: "0xP"}, ID: "id"}, settle: settled}
	text, _ := receipt.NewKeyText()
	keys, err := receipt.ParseKeyring(text, "https://x", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	g := New(cfg, Policy{Settlement: x402.ModeSync}, &f, GateOptions{Receipts: keys, ReplayTTL: time.Nanosecond})
	runs := 0
	work := func(context.Context) (any, error) {
		runs++
		return &catalog.Raw{ContentType: "application/json", Body: []byte(`{"n":` + strconv.Itoa(runs) + `}`)}, nil
	}
	h := payload(t, cfg, e, time.Hour, "pay_0123456789abcdef")
	first, firstHdr, err := g.Charge(context.Background(), call(e, h), work)
	if err != nil {
		t.Fatal(err)
	}
	f.reserve = x402.ReserveResponse{Replay: &settled, ID: "id", VerifyResponse: x402.VerifyResponse{Payer: "0xP"}}
	again, hdr, err := g.Charge(context.Background(), call(e, h), work)
	if err != nil || runs != 2 {
		t.Fatalf("replay through the facilitator: %v, work ran %d times", err, runs)
	}
	pub := keys.Published()
	for _, c := range []struct {
		name string
		hdr  map[string]string
		body any
		ok   bool
	}{
		{"first answer", firstHdr, first, true},
		{"answer made again", hdr, again, true},
		{"first receipt on the body made again", firstHdr, again, false},
	} {
		_, err := pub.Verify(receipt.Evidence{PaymentResponse: c.hdr[x402.HeaderPaymentResponse], Body: c.body.(*catalog.Raw).Body}, time.Now())
		if (err == nil) != c.ok {
			t.Errorf("%s: verify %v, want ok %v", c.name, err, c.ok)
		}
	}
}
