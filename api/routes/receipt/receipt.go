// Package receipt serves the free verification of the box's signed receipts
// (/free/receipt/verify): a buyer without the verifier at hand posts what it kept and learns
// whether it is valid, or exactly what fails.
package receipt

import (
	"context"
	"encoding/base64"
	"net/url"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/internal/receipt"
)

// Routes verifies against the box's own published keys.
type Routes struct {
	pub *receipt.Published
	now func() time.Time
}

// New serves verification against keys' public form.
func New(keys *receipt.Keyring, now func() time.Time) *Routes {
	if now == nil {
		now = time.Now
	}
	return &Routes{pub: keys.Published(), now: now}
}

// Bind attaches the handler to its catalog entry.
func (r *Routes) Bind(c *catalog.Catalog) error {
	return c.Bind("free.receipt.verify", r.verify, nil)
}

// Verdict is the answer: valid, or the list of what fails; what the receipt proves either way.
type Verdict struct {
	Valid     bool                    `json:"valid"`
	Problems  []string                `json:"problems,omitempty"`
	Format    string                  `json:"format,omitempty"`
	Signer    string                  `json:"signer,omitempty"`
	Receipt   *receipt.ReceiptPayload `json:"receipt,omitempty"`
	Statement *receipt.Statement      `json:"statement,omitempty"`
}

func (r *Routes) verify(_ context.Context, req *catalog.Request) (any, error) {
	a := req.Args
	ev := receipt.Evidence{PaymentResponse: a.Str("payment_response"), ContentType: a.Str("content_type")}
	if _, err := base64.StdEncoding.DecodeString(ev.PaymentResponse); err != nil {
		return nil, apierr.BadParam("payment_response", "payment_response is the PAYMENT-RESPONSE header as received: standard base64")
	}
	text, b64 := a.Str("body"), a.Str("body_base64")
	switch {
	case text != "" && b64 != "":
		return nil, apierr.BadParam("body_base64", "give the body once: as text in body, or as base64 in body_base64")
	case b64 != "":
		b, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, apierr.BadParam("body_base64", "body_base64 is not standard base64")
		}
		ev.Body = b
	default:
		ev.Body = []byte(text)
	}
	if u := a.Str("url"); u != "" {
		p, err := url.Parse(u)
		if err != nil || p.Host == "" {
			return nil, apierr.BadParam("url", "url is the absolute URL that was called")
		}
		p.RawQuery, p.Fragment = "", ""
		ev.ResourceURL = p.String()
	}
	v, err := r.pub.Verify(ev, r.now())
	out := Verdict{Valid: err == nil}
	if f, ok := err.(*receipt.Failure); ok {
		out.Problems = f.Problems
	} else if err != nil {
		out.Problems = []string{err.Error()}
	}
	if v != nil {
		out.Format, out.Signer, out.Receipt = v.Format, v.Signer, &v.Receipt
		if v.Statement.Version != 0 {
			out.Statement = &v.Statement
		}
	}
	return out, nil
}
