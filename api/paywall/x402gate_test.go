package paywall

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/settle/x402"
)

// scripted is a facilitator whose answers the test sets; it records what the gate asked.
type scripted struct {
	reserve  x402.ReserveResponse
	err      error
	settle   x402.SettlementResponse
	modes    []string
	released []string
}

func (s *scripted) Reserve(context.Context, *x402.ReserveRequest) (x402.ReserveResponse, error) {
	return s.reserve, s.err
}
func (s *scripted) Release(_ context.Context, id string) error {
	s.released = append(s.released, id)
	return nil
}
func (s *scripted) Complete(_ context.Context, _ string, mode string) (x402.SettlementResponse, error) {
	s.modes = append(s.modes, mode)
	return s.settle, nil
}

type revocable struct{ revoked bool }

func (r *revocable) Revoke(context.Context) error { r.revoked = true; return nil }

func paidCall(t *testing.T, cfg Config, e *catalog.Entry) *Call {
	t.Helper()
	req := cfg.Requirements(e)
	enc, err := x402.Encode(x402.PaymentPayload{X402Version: 2, Accepted: &req, Resource: &x402.ResourceInfo{URL: "https://x/v1/a"}})
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set(x402.HeaderPaymentSignature, enc)
	return &Call{Entry: e, Request: &catalog.Request{Header: h}, ResourceURL: "https://x/v1/a", Key: "k"}
}

func TestGatePolicy(t *testing.T) {
	cfg := DefaultConfig()
	cfg.PayTo = "0x000000000000000000000000000000000000dEaD"
	ok := x402.ReserveResponse{VerifyResponse: x402.VerifyResponse{IsValid: true, Payer: "0xP"}, ID: "id1"}
	cheap := &catalog.Entry{ID: "a", Price: 1_000}
	pricey := &catalog.Entry{ID: "b", Price: 1_000_000}
	proxy := &catalog.Entry{ID: "proxy.1gb", Price: 1_000, Tier: catalog.TierMetered}
	cases := []struct {
		name     string
		entry    *catalog.Entry
		f        scripted
		work     func() (any, error)
		code     apierr.Code // "" for success
		mode     string      // settlement mode used, "" when none
		released bool
		revoked  bool
	}{
		{"cheap call is optimistic", cheap, scripted{reserve: ok, settle: x402.SettlementResponse{Success: true}}, nil, "", x402.ModeOptimistic, false, false},
		{"pricey call is synchronous", pricey, scripted{reserve: ok, settle: x402.SettlementResponse{Success: true, Transaction: "0x1"}}, nil, "", x402.ModeSync, false, false},
		{"proxy sale is synchronous", proxy, scripted{reserve: ok, settle: x402.SettlementResponse{Success: true, Transaction: "0x1"}}, nil, "", x402.ModeSync, false, false},
		{"failed work releases", cheap, scripted{reserve: ok}, func() (any, error) { return nil, apierr.Upstream("u", errors.New("x"), "down") }, apierr.CodeUpstream, "", true, false},
		{"non-2xx result releases", cheap, scripted{reserve: ok}, func() (any, error) { return &catalog.Raw{Status: 502}, nil }, "", "", true, false},
		{"invalid payment", cheap, scripted{reserve: x402.ReserveResponse{VerifyResponse: x402.VerifyResponse{InvalidReason: x402.ReasonInsufficientFunds}}}, nil, apierr.CodePayment, "", false, false},
		{"facilitator down", cheap, scripted{err: errors.New("dial unix: no such file")}, nil, apierr.CodeUnavailable, "", false, false},
		{"settlement fails: revoke", proxy, scripted{reserve: ok, settle: x402.SettlementResponse{ErrorReason: x402.ReasonTransactionFailed}}, nil, apierr.CodePayment, x402.ModeSync, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := c.f
			g := New(cfg, Policy{Settlement: x402.ModeOptimistic, OptimisticMaxPrice: 50_000}, &f, GateOptions{})
			res := &revocable{}
			work := func(context.Context) (any, error) {
				if c.work != nil {
					return c.work()
				}
				return res, nil
			}
			_, hdr, err := g.Charge(context.Background(), paidCall(t, cfg, c.entry), work)
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
			if mode != c.mode || (len(f.released) > 0) != c.released || res.revoked != c.revoked {
				t.Fatalf("mode %q released %v revoked %v", mode, f.released, res.revoked)
			}
			if c.mode != "" && hdr[x402.HeaderPaymentResponse] == "" {
				t.Fatal("no PAYMENT-RESPONSE after settlement")
			}
		})
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
