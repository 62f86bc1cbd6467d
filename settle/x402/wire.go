// Package x402 holds the x402 wire types (v2 and legacy v1) and their header encoding. It is
// pure Go with no chain dependency, so the API edge and the facilitator share it.
package x402

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Header names (HTTP is case-insensitive; these are the canonical spellings).
const (
	HeaderPaymentRequired  = "PAYMENT-REQUIRED"
	HeaderPaymentSignature = "PAYMENT-SIGNATURE"
	HeaderPaymentResponse  = "PAYMENT-RESPONSE"
	HeaderXPayment         = "X-PAYMENT"
	HeaderXPaymentResponse = "X-PAYMENT-RESPONSE"
	SchemeExact            = "exact"
	MaxHeaderBytes         = 8 << 10
	ExposeHeadersValue     = "PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-PAYMENT-RESPONSE"
)

// ResourceInfo describes what is being paid for (v2).
type ResourceInfo struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
	// Service metadata of the bazaar extension (specs/extensions/bazaar.md), echoed by clients:
	// printable ASCII name and tags, an http(s) icon on a named host.
	ServiceName string   `json:"serviceName,omitempty"`
	Tags        []string `json:"tags,omitempty"`
	IconURL     string   `json:"iconUrl,omitempty"`
}

// Extra carries the token's EIP-712 domain for exact/EVM.
type Extra struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// PaymentRequirements is one acceptable way to pay (v2). Amount is atomic units as text.
type PaymentRequirements struct {
	Scheme            string `json:"scheme"`
	Network           string `json:"network"`
	Amount            string `json:"amount"`
	Asset             string `json:"asset"`
	PayTo             string `json:"payTo"`
	MaxTimeoutSeconds int    `json:"maxTimeoutSeconds"`
	Extra             *Extra `json:"extra,omitempty"`
}

// PaymentRequired is the v2 challenge carried base64-encoded in PAYMENT-REQUIRED.
type PaymentRequired struct {
	X402Version int                   `json:"x402Version"`
	Error       string                `json:"error,omitempty"`
	Resource    ResourceInfo          `json:"resource"`
	Accepts     []PaymentRequirements `json:"accepts"`
	Extensions  map[string]any        `json:"extensions,omitempty"`
}

// RequirementsV1 is one legacy (v1) requirement, carried in the 402 body.
type RequirementsV1 struct {
	Scheme            string         `json:"scheme"`
	Network           string         `json:"network"`
	MaxAmountRequired string         `json:"maxAmountRequired"`
	Resource          string         `json:"resource"`
	Description       string         `json:"description"`
	MimeType          string         `json:"mimeType"`
	OutputSchema      map[string]any `json:"outputSchema,omitempty"`
	PayTo             string         `json:"payTo"`
	MaxTimeoutSeconds int            `json:"maxTimeoutSeconds"`
	Asset             string         `json:"asset"`
	Extra             *Extra         `json:"extra,omitempty"`
}

// Authorization is the EIP-3009 TransferWithAuthorization message; every field is text.
type Authorization struct {
	From        string `json:"from"`
	To          string `json:"to"`
	Value       string `json:"value"`
	ValidAfter  string `json:"validAfter"`
	ValidBefore string `json:"validBefore"`
	Nonce       string `json:"nonce"`
}

// ExactPayload is the scheme payload of exact/EIP-3009.
type ExactPayload struct {
	Signature     string        `json:"signature"`
	Authorization Authorization `json:"authorization"`
}

// PaymentPayload is what the client sends: v2 in PAYMENT-SIGNATURE (Accepted set), v1 in
// X-PAYMENT (Scheme and Network set at top level instead).
type PaymentPayload struct {
	X402Version int                  `json:"x402Version"`
	Resource    *ResourceInfo        `json:"resource,omitempty"`
	Accepted    *PaymentRequirements `json:"accepted,omitempty"`
	Scheme      string               `json:"scheme,omitempty"`
	Network     string               `json:"network,omitempty"`
	Payload     ExactPayload         `json:"payload"`
	Extensions  map[string]any       `json:"extensions,omitempty"`
}

// SettlementResponse is the receipt carried in PAYMENT-RESPONSE (and /settle's answer).
type SettlementResponse struct {
	Success     bool   `json:"success"`
	ErrorReason string `json:"errorReason,omitempty"`
	Payer       string `json:"payer,omitempty"`
	Transaction string `json:"transaction"`
	Network     string `json:"network"`
	Amount      string `json:"amount,omitempty"`
	// Extensions carries what the server adds to its answer: the offer-receipt extension's
	// signed receipt and the box's delivery statement.
	Extensions map[string]any `json:"extensions,omitempty"`
}

// VerifyResponse is the facilitator's /verify answer.
type VerifyResponse struct {
	IsValid       bool   `json:"isValid"`
	InvalidReason string `json:"invalidReason,omitempty"`
	Payer         string `json:"payer,omitempty"`
}

// Encode renders v as standard, padded base64 of its JSON (what the reference clients require).
func Encode(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// ErrMalformed marks a header that is not base64 JSON of the expected shape.
var ErrMalformed = errors.New("malformed payment header")

// DecodeError is a payment header refused before verification, with the reason code the
// client is shown (invalid_payload, or invalid_x402_version for a payload of the other
// version than its header's). It is ErrMalformed.
type DecodeError struct {
	Reason string
	Detail string
}

func (e *DecodeError) Error() string { return e.Reason + ": " + ErrMalformed.Error() + ": " + e.Detail }

func (e *DecodeError) Is(target error) bool { return target == ErrMalformed }

func malformed(reason, format string, args ...any) *DecodeError {
	return &DecodeError{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

// DecodePayment decodes a PAYMENT-SIGNATURE or X-PAYMENT header value. A version 2 payload
// always carries accepted; a version 1 payload scheme and network.
func DecodePayment(h string) (*PaymentPayload, error) {
	if len(h) > MaxHeaderBytes {
		return nil, malformed(ReasonInvalidPayload, "larger than %d bytes", MaxHeaderBytes)
	}
	raw, err := decodeBase64(h)
	if err != nil {
		return nil, err
	}
	return decodePayment(raw)
}

func decodePayment(raw []byte) (*PaymentPayload, error) {
	var p PaymentPayload
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, malformed(ReasonInvalidPayload, "not JSON of a payment payload")
	}
	if p.X402Version != 1 && p.X402Version != 2 {
		return nil, malformed(ReasonInvalidVersion, "x402Version must be 1 or 2")
	}
	if p.X402Version == 2 && p.Accepted == nil {
		return nil, malformed(ReasonInvalidPayload, "a version 2 payment must carry accepted")
	}
	if p.X402Version == 1 && (p.Scheme == "" || p.Network == "") {
		return nil, malformed(ReasonInvalidPayload, "a version 1 payment must carry scheme and network")
	}
	return &p, nil
}

// DecodePaymentHeaderOrBatch is DecodePaymentHeader for a server that takes batch-settlement
// payments too: a version 2 payment whose accepted names that scheme comes back decoded in its
// own shape (batch set, p nil), as DecodeBatchPayment has it. The value is decoded once in the
// usual cases: a payload that names the scheme nowhere is not tried as batch-settlement.
func DecodePaymentHeaderOrBatch(header, h string) (p *PaymentPayload, batch *BatchPaymentPayload, err error) {
	if strings.EqualFold(header, HeaderXPayment) {
		p, err = DecodePaymentHeader(header, h)
		return p, nil, err
	}
	raw, err := decodeBase64(h)
	if err != nil {
		return nil, nil, err
	}
	if bytes.Contains(raw, []byte(SchemeBatchSettlement)) {
		if b, err := decodeBatchPayment(raw); err == nil {
			return nil, b, nil
		}
	}
	if p, err = decodePayment(raw); err != nil {
		return nil, nil, err
	}
	if p.X402Version != 2 {
		return nil, nil, malformed(ReasonInvalidVersion, "a version %d payload in %s, which carries version 2", p.X402Version, header)
	}
	if p.Accepted.Scheme == SchemeBatchSettlement {
		// The scheme's name written with escapes, or a payload in neither shape.
		b, err := decodeBatchPayment(raw)
		return nil, b, err
	}
	return p, nil, nil
}

// DecodePaymentHeader decodes the value of the payment header named header: PAYMENT-SIGNATURE
// carries version 2 only, X-PAYMENT version 1 only. Whoever reads a payload from one header may
// so rely on that version's shape (accepted, or scheme and network) without looking again.
func DecodePaymentHeader(header, h string) (*PaymentPayload, error) {
	want := 2
	if strings.EqualFold(header, HeaderXPayment) {
		want = 1
	}
	p, err := DecodePayment(h)
	if err != nil {
		return nil, err
	}
	if p.X402Version != want {
		return nil, malformed(ReasonInvalidVersion, "a version %d payload in %s, which carries version %d", p.X402Version, header, want)
	}
	return p, nil
}

// decodeBase64 accepts standard base64, padded or not (some clients strip the padding).
func decodeBase64(h string) ([]byte, error) {
	if len(h) > MaxHeaderBytes {
		return nil, malformed(ReasonInvalidPayload, "larger than %d bytes", MaxHeaderBytes)
	}
	raw, err := base64.StdEncoding.DecodeString(h)
	if err != nil {
		raw, err = base64.RawStdEncoding.DecodeString(h)
		if err != nil {
			return nil, malformed(ReasonInvalidPayload, "not base64")
		}
	}
	return raw, nil
}
