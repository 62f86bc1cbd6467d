package x402

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// ExtPaymentIdentifier is the payment-identifier extension (coinbase/x402
// specs/extensions/payment_identifier.md): the client puts an id of its own in the payment
// payload, never on chain, and a retry with the same id and payload gets the stored answer.
// Because only the original caller knows the id, it is what makes a replay safe to serve.
const ExtPaymentIdentifier = "payment-identifier"

// Bounds of a payment identifier, as the extension's schema states them.
const (
	PaymentIDMinLength = 16
	PaymentIDMaxLength = 128
)

// ReasonIdentifierConflict: the same payment identifier came with another payload or request.
const ReasonIdentifierConflict = "payment_identifier_conflict"

// ReasonInProgress: the payment identifier belongs to a call still running.
const ReasonInProgress = "payment_in_progress"

// PaymentIdentifierDeclaration is what a 402 challenge advertises under
// extensions["payment-identifier"]: an info the client adds its id to, and the schema of that
// info. The id is optional (the 402's own info has none, and a client may echo it without one),
// as in the specification's declaration.
func PaymentIdentifierDeclaration() map[string]any {
	return map[string]any{
		"info": map[string]any{"required": false},
		"schema": map[string]any{
			"$schema": "https://json-schema.org/draft/2020-12/schema",
			"type":    "object",
			"properties": map[string]any{
				"id": map[string]any{"type": "string", "minLength": PaymentIDMinLength, "maxLength": PaymentIDMaxLength,
					"pattern": "^[a-zA-Z0-9_-]+$"},
			},
		},
	}
}

// PaymentIdentifier returns the payload's payment identifier, "" when it carries none, or an
// error saying why the one it carries is not acceptable.
func PaymentIdentifier(p *PaymentPayload) (string, error) {
	raw, ok := p.Extensions[ExtPaymentIdentifier]
	if !ok || raw == nil {
		return "", nil
	}
	ext, ok := raw.(map[string]any)
	if !ok {
		return "", fmt.Errorf("extensions.%s must be an object", ExtPaymentIdentifier)
	}
	info, ok := ext["info"].(map[string]any)
	if !ok {
		return "", nil // the declaration echoed back without an id
	}
	v, present := info["id"]
	if !present {
		return "", nil
	}
	id, ok := v.(string)
	if !ok || len(id) < PaymentIDMinLength || len(id) > PaymentIDMaxLength {
		return "", fmt.Errorf("extensions.%s.info.id must be a string of %d to %d characters", ExtPaymentIdentifier, PaymentIDMinLength, PaymentIDMaxLength)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return "", fmt.Errorf("extensions.%s.info.id may hold only letters, digits, - and _", ExtPaymentIdentifier)
		}
	}
	return id, nil
}

// HashIdentifier is how an identifier is stored: hashed, so the ledger never holds a value
// that would let its reader claim someone else's result.
func HashIdentifier(id string) string {
	sum := sha256.Sum256([]byte("x402-payment-identifier\x00" + id))
	return hex.EncodeToString(sum[:])
}

// HashPayload fingerprints a payment payload for "same id, same payload": the canonical JSON
// of the decoded payload, so re-encodings of the same payment compare equal.
func HashPayload(p *PaymentPayload) string {
	b, _ := json.Marshal(p) // a decoded payload always marshals
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// NewPaymentIdentifier makes a fresh identifier the way the reference client does: "pay_"
// and 32 random hex digits.
func NewPaymentIdentifier() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics rather than return an error)
	return "pay_" + hex.EncodeToString(b[:])
}

// SetPaymentIdentifier puts id in the payload's extensions, as a client does after the
// challenge advertised the extension.
func SetPaymentIdentifier(p *PaymentPayload, id string) {
	if p.Extensions == nil {
		p.Extensions = map[string]any{}
	}
	p.Extensions[ExtPaymentIdentifier] = map[string]any{"info": map[string]any{"id": id}}
}
