// Package receipt serves the box's signed receipts again (/free/receipt: kept in the settle
// daemon's ledger with the payment, re-signed once an optimistic payment has settled) and
// their free verification (/free/receipt/verify): a buyer without the verifier at hand posts
// what it kept and learns whether it is valid, or exactly what fails.
package receipt

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/internal/receipt"
	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/x402"
)

// Payments reads a payment from the ledger that keeps its receipt (settle/client.Client).
type Payments interface {
	Payment(ctx context.Context, payer, nonce string) (ledger.Summary, error)
	PaymentByIdentifier(ctx context.Context, identifierHash string) (ledger.Summary, error)
}

// KeptFor is how long /free/receipt serves a payment's receipt.
const KeptFor = 30 * 24 * time.Hour

// Routes verifies against the box's own published keys.
type Routes struct {
	keys     *receipt.Keyring
	pub      *receipt.Published
	payments Payments // nil: /free/receipt is not served (503)
	now      func() time.Time
}

// With serves verification against keys' public form, and kept receipts from payments.
func With(keys *receipt.Keyring, payments Payments, now func() time.Time) *Routes {
	if now == nil {
		now = time.Now
	}
	return &Routes{keys: keys, pub: keys.Published(), payments: payments, now: now}
}

// Bind attaches the handlers to their catalog entries.
func (r *Routes) Bind(c *catalog.Catalog) error {
	if r.payments != nil {
		if err := c.Bind("free.receipt", r.kept, nil); err != nil {
			return err
		}
	}
	return c.Bind("free.receipt.verify", r.verify, nil)
}

// Kept is /free/receipt's answer: the payment response to keep (as PAYMENT-RESPONSE carries
// it), and where the payment stands.
type Kept struct {
	PaymentResponse string `json:"payment_response"`
	Settlement      string `json:"settlement"` // settled or pending
	Status          string `json:"status"`     // the ledger's status of the payment
	Transaction     string `json:"transaction,omitempty"`
	// Resigned: the answer was delivered before settlement; this receipt, signed since,
	// names the transaction (the statement binds the same request and body).
	Resigned bool `json:"resigned"`
}

func (r *Routes) kept(ctx context.Context, req *catalog.Request) (any, error) {
	a := req.Args
	payer, nonce, pid := a.Str("payer"), a.Str("nonce"), a.Str("payment_identifier")
	var sum ledger.Summary
	var err error
	switch {
	case pid != "" && (payer != "" || nonce != ""):
		return nil, apierr.BadParam("payment_identifier", "give payer and nonce, or payment_identifier, not both")
	case pid != "":
		sum, err = r.payments.PaymentByIdentifier(ctx, x402.HashIdentifier(pid))
	case payer == "" || nonce == "":
		p := "payer"
		if payer != "" {
			p = "nonce"
		}
		return nil, apierr.BadParam(p, "give payer and nonce (the authorization's, or a voucher's channelId:maxClaimableAmount), or payment_identifier")
	default:
		sum, err = r.payments.Payment(ctx, payer, nonce)
	}
	var status interface{ HTTPStatus() int }
	if errors.As(err, &status) && status.HTTPStatus() == 404 {
		return nil, apierr.NotFound("no payment with this payer and nonce or payment identifier")
	}
	if err != nil {
		return nil, &apierr.Error{Code: apierr.CodeUnavailable, Message: "the ledger cannot be read right now", Cause: err}
	}
	if len(sum.Receipt) == 0 || r.now().Sub(sum.Reserved) > KeptFor {
		return nil, apierr.NotFound("this payment has no receipt kept (receipts are kept 30 days, for answers delivered with one)")
	}
	var ext map[string]any
	if err := json.Unmarshal(sum.Receipt, &ext); err != nil {
		return nil, err
	}
	out := Kept{Status: string(sum.Status), Transaction: sum.Tx, Settlement: receipt.Pending}
	stated, err := statedSettlement(sum.Receipt)
	if err != nil {
		return nil, err
	}
	switch {
	case stated == receipt.Settled:
		out.Settlement = receipt.Settled
	case sum.Status == ledger.Settled && sum.Tx != "":
		if ext, err = r.keys.Resettle(sum.Receipt, sum.Tx, r.now().Unix()); err != nil {
			return nil, err
		}
		out.Settlement, out.Resigned = receipt.Settled, true
	}
	resp := x402.SettlementResponse{Success: true, Payer: sum.Payer, Transaction: sum.Tx, Network: r.network(ext), Extensions: ext}
	if out.PaymentResponse, err = x402.Encode(resp); err != nil {
		return nil, err
	}
	return out, nil
}

// statedSettlement is what a kept delivery statement says of its settlement.
func statedSettlement(kept []byte) (string, error) {
	var ext struct {
		Delivery struct {
			Info struct {
				Statement string `json:"statement"`
			} `json:"info"`
		} `json:"peage-delivery"`
	}
	if err := json.Unmarshal(kept, &ext); err != nil {
		return "", err
	}
	var s receipt.Statement
	if parts := strings.Split(ext.Delivery.Info.Statement, "."); len(parts) == 3 {
		if err := receipt.DecodeJWSPayload(parts[1], &s); err != nil {
			return "", err
		}
	}
	return s.Settlement, nil
}

// network is the network the receipt names.
func (r *Routes) network(ext map[string]any) string {
	b, _ := json.Marshal(ext)
	rc, _, err := receipt.ExtractReceipt(base64.StdEncoding.EncodeToString([]byte(`{"extensions":` + string(b) + `}`)))
	if err != nil {
		return ""
	}
	if rc.Payload != nil {
		return rc.Payload.Network
	}
	var p receipt.ReceiptPayload
	if parts := strings.Split(rc.Signature, "."); len(parts) == 3 {
		_ = receipt.DecodeJWSPayload(parts[1], &p)
	}
	return p.Network
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
