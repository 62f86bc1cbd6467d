package paywall

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/peage/appliance/settle/x402"
)

// MCP transport of x402 (spec transports-v2/mcp.md): a tools/call carries its payment as a
// plain JSON object in params._meta["x402/payment"], and a paid result carries the receipt in
// _meta["x402/payment-response"]. These helpers map that onto the HTTP form the gate reads, so
// an MCP call goes through exactly the same Charge as an HTTP one.
const (
	MCPMetaPayment         = "x402/payment"
	MCPMetaPaymentResponse = "x402/payment-response"
)

// MCPPaymentHeader puts the payment of a tools/call's _meta (if any) into h as the header the
// gate reads: PAYMENT-SIGNATURE for version 2, X-PAYMENT for version 1.
func MCPPaymentHeader(meta map[string]any, h http.Header) error {
	return PaymentObjectHeader(meta[MCPMetaPayment], "_meta."+MCPMetaPayment, h)
}

// PaymentObjectHeader puts a payment a transport carries as a JSON object (MCP's _meta, A2A's
// message metadata) into h as the header the gate reads: PAYMENT-SIGNATURE for version 2,
// X-PAYMENT for version 1. where names the field in the refusal. A nil v is no payment.
func PaymentObjectHeader(v any, where string, h http.Header) error {
	if v == nil {
		return nil
	}
	// A payment that cannot be read is answered like one in a header: a fresh challenge naming
	// the fault (the gate's decoder judges the rest).
	raw, err := json.Marshal(v)
	if err != nil {
		return PaymentRequired(x402.ReasonInvalidPayload + ": " + where + " is not a JSON object")
	}
	var p x402.PaymentPayload
	if err := json.Unmarshal(raw, &p); err != nil {
		return PaymentRequired(x402.ReasonInvalidPayload + ": " + where + " is not an x402 payment payload")
	}
	enc, err := x402.Encode(json.RawMessage(raw))
	if err != nil {
		return err
	}
	if len(enc) > x402.MaxHeaderBytes {
		return PaymentRequired(fmt.Sprintf("%s: %s is larger than %d bytes encoded", x402.ReasonInvalidPayload, where, x402.MaxHeaderBytes))
	}
	if p.X402Version == 1 {
		h.Set(x402.HeaderXPayment, enc)
	} else {
		h.Set(x402.HeaderPaymentSignature, enc)
	}
	return nil
}

// MCPPaymentResponse returns the receipt the gate produced (from its headers) as the object
// to put in the result's _meta["x402/payment-response"], or nil when there is none. It is
// passed on whole: a batch-settlement receipt's extra (the charge and the channel's state) is
// what its client reconciles with.
func MCPPaymentResponse(hdr map[string]string) map[string]any {
	for _, name := range []string{x402.HeaderPaymentResponse, x402.HeaderXPaymentResponse} {
		if v := hdr[name]; v != "" {
			if _, err := x402.DecodeSettlement(v); err != nil {
				continue
			}
			raw, _ := base64.StdEncoding.DecodeString(v)
			var receipt map[string]any
			if json.Unmarshal(raw, &receipt) == nil {
				return receipt
			}
		}
	}
	return nil
}
