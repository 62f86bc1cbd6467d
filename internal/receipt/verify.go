package receipt

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Evidence is what a buyer kept of a paid answer: the payment response header and the body,
// and optionally what it asked for, to check the receipt is this call's.
type Evidence struct {
	PaymentResponse string // the PAYMENT-RESPONSE (or X-PAYMENT-RESPONSE) header, base64 JSON
	Body            []byte
	ContentType     string // the Content-Type delivered; "" skips its check
	// ResourceURL, when set, is the resource the buyer called.
	ResourceURL string
	// Request, when set, is the request the buyer made (method, path, params digest).
	Request *StatementRequest
}

// Verified is what a valid receipt proves.
type Verified struct {
	Receipt   ReceiptPayload
	Format    string
	Signer    string // the JWS kid or the EIP-712 signer address
	Statement Statement
}

// Failure lists everything that does not hold, each named.
type Failure struct{ Problems []string }

func (f *Failure) Error() string { return "receipt not valid: " + strings.Join(f.Problems, "; ") }

type paymentResponse struct {
	Success     bool                       `json:"success"`
	Payer       string                     `json:"payer"`
	Transaction string                     `json:"transaction"`
	Network     string                     `json:"network"`
	Extensions  map[string]json.RawMessage `json:"extensions"`
}

// ExtractReceipt reads the receipt and the delivery statement of a payment response header,
// where extractReceiptFromResponse and the box put them.
func ExtractReceipt(header string) (SignedReceipt, string, error) {
	var r SignedReceipt
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(header))
	if err != nil {
		return r, "", fmt.Errorf("payment response is not base64: %w", err)
	}
	var pr paymentResponse
	if err := json.Unmarshal(raw, &pr); err != nil {
		return r, "", fmt.Errorf("payment response is not JSON: %w", err)
	}
	var ext struct {
		Info struct {
			Receipt   *SignedReceipt `json:"receipt"`
			Statement string         `json:"statement"`
		} `json:"info"`
	}
	if b, ok := pr.Extensions[Extension]; !ok || json.Unmarshal(b, &ext) != nil || ext.Info.Receipt == nil {
		return r, "", errors.New(`payment response carries no extensions["offer-receipt"].info.receipt`)
	}
	r = *ext.Info.Receipt
	ext.Info.Statement = ""
	if b, ok := pr.Extensions[DeliveryExtension]; ok {
		_ = json.Unmarshal(b, &ext)
	}
	return r, ext.Info.Statement, nil
}

// VerifyReceipt checks a signed receipt's signature against the published keys at now and
// returns its payload and signer.
func (p *Published) VerifyReceipt(r SignedReceipt, now time.Time) (ReceiptPayload, string, error) {
	switch r.Format {
	case FormatEIP712:
		if r.Payload == nil {
			return ReceiptPayload{}, "", errors.New("EIP-712 receipt has no payload")
		}
		signer, err := recoverSigner(ReceiptHash(r.Payload), r.Signature)
		if err != nil {
			return *r.Payload, "", fmt.Errorf("receipt signature: %w", err)
		}
		k, err := p.byAddress(signer)
		if err == nil {
			err = k.usable(now)
		}
		if err != nil {
			return *r.Payload, signer, fmt.Errorf("receipt signature: %w (the payload was altered or signed by another key)", err)
		}
		return *r.Payload, signer, nil
	case FormatJWS:
		var pl ReceiptPayload
		kid, err := p.verifyJWS(r.Signature, now, &pl)
		if err != nil {
			return pl, kid, fmt.Errorf("receipt signature: %w", err)
		}
		return pl, kid, nil
	}
	return ReceiptPayload{}, "", fmt.Errorf("unknown receipt format %q", r.Format)
}

// VerifyOffer checks a signed offer's signature at now and returns its payload; the caller
// compares it with the accepts entry it pays (see MatchOffer).
func (p *Published) VerifyOffer(o SignedOffer, now time.Time) (OfferPayload, error) {
	switch o.Format {
	case FormatEIP712:
		if o.Payload == nil {
			return OfferPayload{}, errors.New("EIP-712 offer has no payload")
		}
		signer, err := recoverSigner(OfferHash(o.Payload), o.Signature)
		if err != nil {
			return *o.Payload, fmt.Errorf("offer signature: %w", err)
		}
		k, err := p.byAddress(signer)
		if err == nil {
			err = k.usable(now)
		}
		if err != nil {
			return *o.Payload, fmt.Errorf("offer signature: %w (the offer was altered or signed by another key)", err)
		}
		return *o.Payload, nil
	case FormatJWS:
		var pl OfferPayload
		if _, err := p.verifyJWS(o.Signature, now, &pl); err != nil {
			return pl, fmt.Errorf("offer signature: %w", err)
		}
		return pl, nil
	}
	return OfferPayload{}, fmt.Errorf("unknown offer format %q", o.Format)
}

// verifyJWS checks a compact JWS by its kid among the published keys and decodes its payload.
func (p *Published) verifyJWS(jws string, now time.Time, into any) (string, error) {
	h, payload, err := parseJWS(jws)
	if err != nil {
		return "", err
	}
	if h.Alg != "EdDSA" {
		return h.Kid, fmt.Errorf("JWS algorithm %q is not the box's EdDSA", h.Alg)
	}
	k, err := p.byKID(h.Kid)
	if err == nil {
		err = k.usable(now)
	}
	if err != nil {
		return h.Kid, err
	}
	pub, err := k.ed25519()
	if err != nil {
		return h.Kid, err
	}
	if err := verifyJWS(jws, pub); err != nil {
		return h.Kid, err
	}
	if err := json.Unmarshal(payload, into); err != nil {
		return h.Kid, fmt.Errorf("JWS payload: %w", err)
	}
	return h.Kid, nil
}

// Verify checks a kept paid answer: the receipt's signature, the delivery statement's
// signature and its binding to the receipt, and the body (and, when given, the resource and
// request) against what the statement says was delivered. A *Failure names each fault.
func (p *Published) Verify(ev Evidence, now time.Time) (*Verified, error) {
	r, stmtJWS, err := ExtractReceipt(ev.PaymentResponse)
	if err != nil {
		return nil, &Failure{Problems: []string{err.Error()}}
	}
	var f Failure
	fail := func(format string, a ...any) { f.Problems = append(f.Problems, fmt.Sprintf(format, a...)) }
	v := &Verified{Format: r.Format}
	v.Receipt, v.Signer, err = p.VerifyReceipt(r, now)
	if err != nil {
		fail("%v", err)
	}
	if ev.ResourceURL != "" && v.Receipt.ResourceURL != ev.ResourceURL {
		fail("receipt is for %s, not %s", v.Receipt.ResourceURL, ev.ResourceURL)
	}
	if stmtJWS == "" {
		fail(`payment response carries no delivery statement (extensions[%q])`, DeliveryExtension)
		return v, &f
	}
	s := &v.Statement
	if _, err := p.verifyJWS(stmtJWS, now, s); err != nil {
		fail("delivery statement signature: %v", err)
		return v, &f
	}
	if s.Receipt != ReceiptDigest(r) {
		fail("delivery statement belongs to another receipt")
	}
	if s.ResourceURL != v.Receipt.ResourceURL || !strings.EqualFold(s.Payer, v.Receipt.Payer) || s.Network != v.Receipt.Network {
		fail("delivery statement names another resource, payer or network than the receipt")
	}
	if v.Receipt.Transaction != "" && s.Transaction != v.Receipt.Transaction {
		fail("delivery statement names transaction %q, the receipt %q", s.Transaction, v.Receipt.Transaction)
	}
	if got := SHA256Hex(ev.Body); got != s.Response.SHA256 || len(ev.Body) != s.Response.Length {
		fail("body is not the one delivered: SHA-256 %s and %d bytes, delivered %s and %d bytes", got, len(ev.Body), s.Response.SHA256, s.Response.Length)
	}
	if ev.ContentType != "" && !strings.EqualFold(ev.ContentType, s.Response.ContentType) {
		fail("content type %q is not the one delivered, %q", ev.ContentType, s.Response.ContentType)
	}
	if rq := ev.Request; rq != nil {
		if rq.Method != "" && !strings.EqualFold(rq.Method, s.Request.Method) {
			fail("request method %s is not the one answered, %s", rq.Method, s.Request.Method)
		}
		if rq.Path != "" && rq.Path != s.Request.Path {
			fail("request path %s is not the one answered, %s", rq.Path, s.Request.Path)
		}
		if rq.ParamsSHA256 != "" && rq.ParamsSHA256 != s.Request.ParamsSHA256 {
			fail("request parameters are not the ones answered")
		}
	}
	if len(f.Problems) > 0 {
		return v, &f
	}
	return v, nil
}

// MatchOffer says how an offer payload differs from the accepts entry it claims to sign, or "".
func MatchOffer(p OfferPayload, resourceURL string, t OfferTerms) string {
	var diffs []string
	for _, c := range []struct{ name, got, want string }{
		{"resourceUrl", p.ResourceURL, resourceURL}, {"scheme", p.Scheme, t.Scheme}, {"network", p.Network, t.Network},
		{"asset", p.Asset, t.Asset}, {"payTo", p.PayTo, t.PayTo}, {"amount", p.Amount, t.Amount},
	} {
		if c.got != c.want {
			diffs = append(diffs, fmt.Sprintf("%s %q is not %q", c.name, c.got, c.want))
		}
	}
	return strings.Join(diffs, "; ")
}
