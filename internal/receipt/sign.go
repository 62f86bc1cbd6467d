package receipt

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// OfferTerms is one accepts entry of a 402, what an offer promises.
type OfferTerms struct {
	AcceptIndex                           int
	Scheme, Network, Asset, PayTo, Amount string
}

// Offer signs terms for resourceURL, valid until validUntil (Unix seconds), in format.
func (kr *Keyring) Offer(format, resourceURL string, t OfferTerms, validUntil int64) (SignedOffer, error) {
	p := &OfferPayload{Version: Version, ResourceURL: resourceURL, Scheme: t.Scheme, Network: t.Network,
		Asset: t.Asset, PayTo: t.PayTo, Amount: t.Amount, ValidUntil: validUntil}
	switch format {
	case FormatEIP712:
		return SignedOffer{Format: FormatEIP712, AcceptIndex: t.AcceptIndex, Payload: p,
			Signature: signDigest(kr.Current.ec, OfferHash(p))}, nil
	case FormatJWS:
		return SignedOffer{Format: FormatJWS, AcceptIndex: t.AcceptIndex, Signature: signJWS(kr.Current.ed, kr.header(), p.canonical())}, nil
	}
	return SignedOffer{}, fmt.Errorf("unknown offer format %q", format)
}

// Receipt signs p (Version is set here) in format.
func (kr *Keyring) Receipt(format string, p ReceiptPayload) (SignedReceipt, error) {
	p.Version = Version
	switch format {
	case FormatEIP712:
		return SignedReceipt{Format: FormatEIP712, Payload: &p, Signature: signDigest(kr.Current.ec, ReceiptHash(&p))}, nil
	case FormatJWS:
		return SignedReceipt{Format: FormatJWS, Signature: signJWS(kr.Current.ed, kr.header(), p.jwsCanonical())}, nil
	}
	return SignedReceipt{}, fmt.Errorf("unknown receipt format %q", format)
}

// Statement signs a delivery statement for receipt (s.Receipt and s.Version are set here).
func (kr *Keyring) Statement(receipt SignedReceipt, s Statement) (string, error) {
	s.Version, s.Receipt = Version, ReceiptDigest(receipt)
	return signJWS(kr.Current.ed, kr.header(), s.canonical()), nil
}

// ReceiptDigest is what a delivery statement names its receipt by: the SHA-256 of its
// signature string (which covers the payload in both formats).
func ReceiptDigest(r SignedReceipt) string { return SHA256Hex([]byte(r.Signature)) }

// SHA256Hex is the lower-case hex SHA-256 of b.
func SHA256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Resettle re-signs a kept receipt and delivery statement (the extensions JSON a payment
// response carried, as the ledger keeps it) for a payment settled since by transaction tx:
// the same resource, payer, request and body, now naming the transaction.
func (kr *Keyring) Resettle(kept []byte, tx string, issuedAt int64) (map[string]any, error) {
	var ext struct {
		Receipt struct {
			Info struct {
				Receipt SignedReceipt `json:"receipt"`
			} `json:"info"`
		} `json:"offer-receipt"`
		Delivery struct {
			Info struct {
				Statement string `json:"statement"`
			} `json:"info"`
		} `json:"peage-delivery"`
	}
	if err := json.Unmarshal(kept, &ext); err != nil {
		return nil, fmt.Errorf("kept receipt: %w", err)
	}
	old := ext.Receipt.Info.Receipt
	var p ReceiptPayload
	switch {
	case old.Payload != nil:
		p = *old.Payload
	case old.Format == FormatJWS:
		_, payload, err := parseJWS(old.Signature)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(payload, &p); err != nil {
			return nil, err
		}
	default:
		return nil, errors.New("kept receipt has no payload")
	}
	_, payload, err := parseJWS(ext.Delivery.Info.Statement)
	if err != nil {
		return nil, fmt.Errorf("kept statement: %w", err)
	}
	var s Statement
	if err := json.Unmarshal(payload, &s); err != nil {
		return nil, err
	}
	p.Transaction, p.IssuedAt = tx, issuedAt
	r, err := kr.Receipt(old.Format, p)
	if err != nil {
		return nil, err
	}
	s.Settlement, s.Transaction, s.IssuedAt = Settled, tx, issuedAt
	stmt, err := kr.Statement(r, s)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		Extension:         map[string]any{"info": map[string]any{"receipt": r}},
		DeliveryExtension: map[string]any{"info": map[string]any{"statement": stmt}},
	}, nil
}
