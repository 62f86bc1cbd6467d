package paywall

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/settle/x402"
)

// FuzzCharge feeds arbitrary payments to the gate, in PAYMENT-SIGNATURE, in X-PAYMENT and as an
// MCP _meta["x402/payment"] value, with a facilitator that accepts whatever reaches it: Charge
// must never panic, and every refusal is a 402 naming its fault (or a 409 of the payment
// identifier). A v1 payload in PAYMENT-SIGNATURE once killed the process (issue 34);
// testdata/fuzz/FuzzCharge holds it with the other faults of the audit.
func FuzzCharge(f *testing.F) {
	cfg := DefaultConfig()
	cfg.PayTo = "0x000000000000000000000000000000000000dEaD"
	cfg.ReceiverAuthorizer = "0x000000000000000000000000000000000000bEEF"
	e := &catalog.Entry{ID: "a", Price: 1_000, Timeout: 10 * time.Second, FreeFirstCall: true}
	valid := payload(f, cfg, e, time.Hour, "pay_0123456789abcdef")
	f.Add(uint8(0), valid)
	f.Add(uint8(1), valid)
	f.Add(uint8(2), `{"x402Version":2,"accepted":{"scheme":"exact"},"payload":{}}`)
	f.Fuzz(func(t *testing.T, via uint8, value string) {
		h := http.Header{}
		switch via % 3 {
		case 0:
			h.Set(x402.HeaderPaymentSignature, value)
		case 1:
			h.Set(x402.HeaderXPayment, value)
		case 2:
			var meta any
			if json.Unmarshal([]byte(value), &meta) != nil {
				return
			}
			if err := MCPPaymentHeader(map[string]any{MCPMetaPayment: meta}, h); err != nil {
				if ae := apierr.From(err); ae.Code != apierr.CodePayment || ae.Message == "" {
					t.Fatalf("MCP payment refused with %v, not a 402 naming the fault", err)
				}
				return
			}
		}
		f := &scripted{reserve: x402.ReserveResponse{VerifyResponse: x402.VerifyResponse{IsValid: true, Payer: "0xP"}, ID: "id"},
			settle: x402.SettlementResponse{Success: true}}
		g := New(cfg, Policy{Settlement: x402.ModeSync, SettleTimeoutSeconds: 1}, f, GateOptions{})
		c := &Call{Entry: e, Request: &catalog.Request{Header: h, ClientIP: "192.0.2.1"}, ResourceURL: "https://x/v1/a", Key: "k"}
		_, _, err := g.Charge(context.Background(), c, func(context.Context) (any, error) {
			return &catalog.Raw{Body: []byte(`{}`)}, nil
		})
		if err == nil {
			return
		}
		switch ae := apierr.From(err); {
		case ae.Code == apierr.CodePayment && ae.Message != "":
		case ae.Code == apierr.CodeConflict:
		default:
			t.Fatalf("refusal %v is not a 402 naming the fault", err)
		}
	})
}
