package paywall

import (
	"net/http"
	"testing"

	"github.com/peage/appliance/settle/x402"
)

func TestMCPPayment(t *testing.T) {
	cases := []struct {
		name    string
		meta    map[string]any
		header  string // header expected to be set ("" none)
		wantErr bool
	}{
		{"none", map[string]any{}, "", false},
		{"v2", map[string]any{MCPMetaPayment: map[string]any{"x402Version": 2, "accepted": map[string]any{"scheme": "exact"}, "payload": map[string]any{}}}, x402.HeaderPaymentSignature, false},
		{"v1", map[string]any{MCPMetaPayment: map[string]any{"x402Version": 1, "scheme": "exact", "network": "base", "payload": map[string]any{}}}, x402.HeaderXPayment, false},
		{"not an object", map[string]any{MCPMetaPayment: "abc"}, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{}
			err := MCPPaymentHeader(c.meta, h)
			if (err != nil) != c.wantErr {
				t.Fatalf("err %v", err)
			}
			if c.header == "" {
				if len(h) != 0 {
					t.Fatalf("headers set: %v", h)
				}
				return
			}
			p, err := x402.DecodePayment(h.Get(c.header))
			if err != nil {
				t.Fatalf("the gate could not decode it: %v", err)
			}
			if p.X402Version == 0 {
				t.Fatal("version lost")
			}
		})
	}
	enc, _ := x402.Encode(x402.SettlementResponse{Success: true, Transaction: "0xabc"})
	if s := MCPPaymentResponse(map[string]string{x402.HeaderPaymentResponse: enc}); s == nil || s["transaction"] != "0xabc" {
		t.Fatalf("receipt %+v", s)
	}
	// A batch-settlement receipt keeps its extra.
	enc, _ = x402.Encode(x402.BatchSettleResponse{Success: true, Extra: &x402.BatchResponseExtra{ChargedAmount: "5000"}})
	if s := MCPPaymentResponse(map[string]string{x402.HeaderPaymentResponse: enc}); s == nil || s["extra"].(map[string]any)["chargedAmount"] != "5000" {
		t.Fatalf("batch receipt %+v", s)
	}
	if MCPPaymentResponse(nil) != nil {
		t.Fatal("receipt from nothing")
	}
}
