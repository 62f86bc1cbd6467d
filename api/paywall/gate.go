// Package paywall stands between a validated request and its handler on paid routes: it
// derives the 402 challenge from the catalog entry, and (through a Gate) verifies a payment
// before the work and settles it only after the work succeeded.
package paywall

import (
	"context"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/settle/x402"
)

// Call is one paid call as the gate sees it.
type Call struct {
	Entry   *catalog.Entry
	Request *catalog.Request
	// ResourceURL is the absolute URL named in the challenge's resource.url.
	ResourceURL string
	// Key is the entry ID plus the canonical encoding of its validated args: the request hash
	// of the ledger and the key of idempotent replay.
	Key string
	// Free is the client's allowance of calls served free, spent by a free first call
	// (nil: unlimited).
	Free FreeBucket

	paymentRead            bool
	paymentHeader, payment string
}

// Payment is the call's payment and the header that carries it (v2 PAYMENT-SIGNATURE first,
// then v1 X-PAYMENT), or "", "": read from the request once, since both the call's key and
// the gate ask.
func (c *Call) Payment() (header, value string) {
	if !c.paymentRead {
		c.paymentRead = true
		c.paymentHeader = x402.HeaderPaymentSignature
		if c.payment = c.Request.HeaderValue(c.paymentHeader); c.payment == "" {
			c.paymentHeader = x402.HeaderXPayment
			if c.payment = c.Request.HeaderValue(c.paymentHeader); c.payment == "" {
				c.paymentHeader = ""
			}
		}
	}
	return c.paymentHeader, c.payment
}

// Gate charges paid calls. Charge runs work only when the call is paid for (or free by policy)
// and settles only when work succeeded. It returns the result and the headers to add
// (PAYMENT-RESPONSE, ...). An *apierr.Error with code payment_required makes the server answer
// 402 with a fresh challenge whose "error" is the error's message.
type Gate interface {
	Charge(ctx context.Context, call *Call, work func(context.Context) (any, error)) (any, map[string]string, error)
}

// ChallengeOnly is the gate used while no facilitator is configured: it challenges every call
// and refuses payments it cannot verify, so nothing ever runs unpaid.
type ChallengeOnly struct{}

func (ChallengeOnly) Charge(_ context.Context, call *Call, _ func(context.Context) (any, error)) (any, map[string]string, error) {
	if _, p := call.Payment(); p == "" {
		return nil, nil, PaymentRequired("")
	}
	return nil, nil, apierr.Unavailable("payment verification is not configured on this appliance")
}

// PaymentRequired is the error that turns into a 402 with a fresh challenge.
func PaymentRequired(reason string) *apierr.Error {
	if reason == "" {
		reason = "PAYMENT-SIGNATURE header is required"
	}
	return &apierr.Error{Code: apierr.CodePayment, Message: reason}
}

// PaymentHeader returns the payment the request carries (v2 PAYMENT-SIGNATURE first, then v1
// X-PAYMENT), or "".
func PaymentHeader(r *catalog.Request) string {
	if r == nil {
		return ""
	}
	_, v := (&Call{Request: r}).Payment()
	return v
}
