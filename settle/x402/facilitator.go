package x402

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Reason codes of invalid or failed payments. The spec's names are used where the spec has one
// (v2 §9), the reference implementation's otherwise; clients treat them as opaque strings.
const (
	ReasonInvalidVersion      = "invalid_x402_version"
	ReasonInvalidPayload      = "invalid_payload"
	ReasonInvalidScheme       = "invalid_scheme"
	ReasonInvalidNetwork      = "invalid_network"
	ReasonInvalidRequirements = "invalid_payment_requirements"
	ReasonMissingDomain       = "invalid_exact_evm_missing_eip712_domain"
	ReasonRecipientMismatch   = "invalid_exact_evm_payload_recipient_mismatch"
	ReasonValueMismatch       = "invalid_exact_evm_payload_authorization_value_mismatch"
	ReasonValueV1             = "invalid_exact_evm_payload_authorization_value"
	ReasonValidAfter          = "invalid_exact_evm_payload_authorization_valid_after"
	ReasonValidBefore         = "invalid_exact_evm_payload_authorization_valid_before"
	ReasonSignature           = "invalid_exact_evm_payload_signature"
	ReasonNonceUsed           = "invalid_exact_evm_nonce_already_used"
	ReasonInsufficientFunds   = "insufficient_funds"
	ReasonTransactionFailed   = "invalid_exact_evm_transaction_failed"
	ReasonSettlementPending   = "settlement_pending"
	// ReasonSettlementNotSent: the settlement could not be sent (the chain or the remote
	// facilitator was unreachable); the payment was released, nothing is owed.
	ReasonSettlementNotSent = "settlement_not_sent"
	ReasonTransactionState  = "invalid_transaction_state"
	ReasonUnexpectedVerify  = "unexpected_verify_error"
	ReasonUnexpectedSettle  = "unexpected_settle_error"
	// ReasonOtherResource: a v2 payload names a resource other than the one being called.
	ReasonOtherResource = "payment_for_another_resource"
)

// FacilitatorRequirements is the server's own copy of what it offered, as sent to a facilitator.
// It is the v2 PaymentRequirements plus the v1-only fields, so one envelope carries both versions.
type FacilitatorRequirements struct {
	PaymentRequirements
	MaxAmountRequired string `json:"maxAmountRequired,omitempty"`
	Resource          string `json:"resource,omitempty"`
	Description       string `json:"description,omitempty"`
	MimeType          string `json:"mimeType,omitempty"`
}

// Required is the amount due in atomic units as text (v1 names it maxAmountRequired).
func (r *FacilitatorRequirements) Required() string {
	if r.Amount != "" {
		return r.Amount
	}
	return r.MaxAmountRequired
}

// FacilitatorRequest is the body of POST /verify and POST /settle.
type FacilitatorRequest struct {
	X402Version         int                     `json:"x402Version"`
	PaymentPayload      PaymentPayload          `json:"paymentPayload"`
	PaymentRequirements FacilitatorRequirements `json:"paymentRequirements"`
}

// SupportedKind is one (version, scheme, network) a facilitator handles.
type SupportedKind struct {
	X402Version int            `json:"x402Version"`
	Scheme      string         `json:"scheme"`
	Network     string         `json:"network"`
	Extra       map[string]any `json:"extra,omitempty"`
}

// SupportedResponse is the body of GET /supported.
type SupportedResponse struct {
	Kinds      []SupportedKind     `json:"kinds"`
	Extensions []string            `json:"extensions"`
	Signers    map[string][]string `json:"signers"`
}

// The calls below extend the standard facilitator API for a resource server that must hold a
// payment while its work runs: reserve (verify and durably claim the nonce), then either release
// (the work failed: nothing is charged) or complete (settle now, or queue it).

// ReserveRequest asks the facilitator to verify a payment and claim its nonce for one request.
type ReserveRequest struct {
	FacilitatorRequest
	Route string `json:"route"` // catalog entry ID, for revenue by route
	Key   string `json:"key"`   // request hash: the request this payment pays for
	// IdentifierHash is HashIdentifier of the payload's payment identifier, "" without one. Only
	// a payment carrying the same identifier, payload and key is ever replayed.
	IdentifierHash string `json:"identifier_hash,omitempty"`
	PayloadHash    string `json:"payload_hash,omitempty"`
	// WorkSeconds is the route's deadline: the authorization must outlive it plus the
	// facilitator's settlement margin, or it could expire between delivery and settlement.
	WorkSeconds int64 `json:"work_seconds,omitempty"`
}

// ReserveResponse answers a reservation. When Replay is set the payment was already taken for
// the same identifier, payload and request: the caller returns its stored result and does not
// charge again. Conflict is set when the identifier was used with another payload or request.
type ReserveResponse struct {
	VerifyResponse
	ID       string              `json:"id,omitempty"`
	Replay   *SettlementResponse `json:"replay,omitempty"`
	Conflict bool                `json:"conflict,omitempty"`
}

// AbortRequest tells the facilitator that a completed call's result was not delivered (its
// settlement outcome was unknown to the API): a payment not yet broadcast is released, one
// already on its way is marked undelivered for the operator.
type AbortRequest struct {
	ID string `json:"id"`
}

// ReleaseRequest gives a reserved nonce back: the work failed and nothing is charged.
type ReleaseRequest struct {
	ID string `json:"id"`
}

// Settlement modes of CompleteRequest.
const (
	ModeSync       = "sync"       // broadcast and wait for the receipt
	ModeOptimistic = "optimistic" // queue durably and answer at once (falls back to sync over the payer's exposure cap)
)

// CompleteRequest settles a reserved payment after its work succeeded.
type CompleteRequest struct {
	ID   string `json:"id"`
	Mode string `json:"mode"`
	// Box is the fleet box that served the call (WithBox), recorded with the payment.
	Box string `json:"box,omitempty"`
}

// KeepReceiptRequest stores, with a delivered payment, the signed extensions of its answer.
type KeepReceiptRequest struct {
	ID      string          `json:"id"`
	Receipt json.RawMessage `json:"receipt"`
}

// KeepVoucherReceiptRequest stores the signed extensions of a batch-settlement voucher's
// answer. A voucher has no payment record of its own (its money is its channel's), so the
// ledger keeps one for the receipt, found by Payer and Nonce ("channelId:maxClaimableAmount",
// as the delivery statement names it).
type KeepVoucherReceiptRequest struct {
	Payer   string `json:"payer"`
	Nonce   string `json:"nonce"`
	Route   string `json:"route"`
	Network string `json:"network"`
	Amount  string `json:"amount"` // charged for this call, atomic units
	// Transaction is the one the answer's receipt names (a deposit's), "" for a voucher
	// charged off chain until its channel is claimed.
	Transaction string          `json:"transaction,omitempty"`
	Receipt     json.RawMessage `json:"receipt"`
}

// Networks of legacy v1 names (the only spelling v1 clients know) and their CAIP-2 ids.
var v1Networks = map[string]string{
	"base":           "eip155:8453",
	"base-sepolia":   "eip155:84532",
	"avalanche":      "eip155:43114",
	"avalanche-fuji": "eip155:43113",
	"polygon":        "eip155:137",
	"polygon-amoy":   "eip155:80002",
	"iotex":          "eip155:4689",
	"sei":            "eip155:1329",
}

// CAIP2 returns the CAIP-2 id of a network written either way ("base" or "eip155:8453").
func CAIP2(network string) string {
	if c, ok := v1Networks[network]; ok {
		return c
	}
	return network
}

// V1Network returns the legacy name of a CAIP-2 network, or the CAIP-2 id when it has none.
func V1Network(caip2 string) string {
	for name, c := range v1Networks {
		if c == caip2 {
			return name
		}
	}
	return caip2
}

// ChainID parses the chain id of an EVM network ("eip155:8453" or a v1 name).
func ChainID(network string) (uint64, error) {
	rest, ok := strings.CutPrefix(CAIP2(network), "eip155:")
	if !ok {
		return 0, fmt.Errorf("network %q is not an EVM (eip155) network", network)
	}
	id, err := strconv.ParseUint(rest, 10, 64)
	if err != nil || id == 0 {
		return 0, fmt.Errorf("network %q has no valid chain id", network)
	}
	return id, nil
}

// Match compares what a v2 client says it accepted with what the server offers now and returns
// "" or the reason code of the first difference. The reference server requires deep equality;
// comparing field by field gives the payer a specific reason instead of "no match".
func Match(accepted, offered *PaymentRequirements) string {
	switch {
	case accepted == nil:
		return ReasonInvalidPayload
	case accepted.Scheme != offered.Scheme:
		return ReasonInvalidScheme
	case accepted.Network != offered.Network:
		return ReasonInvalidNetwork
	case !strings.EqualFold(accepted.Asset, offered.Asset):
		return ReasonInvalidRequirements
	case !strings.EqualFold(accepted.PayTo, offered.PayTo):
		return ReasonRecipientMismatch
	case accepted.Amount != offered.Amount:
		return ReasonValueMismatch
	case accepted.Extra == nil || offered.Extra == nil || *accepted.Extra != *offered.Extra:
		return ReasonMissingDomain
	case accepted.MaxTimeoutSeconds != offered.MaxTimeoutSeconds:
		return ReasonInvalidRequirements
	}
	return ""
}

// DecodeSettlement decodes a PAYMENT-RESPONSE or X-PAYMENT-RESPONSE header value.
func DecodeSettlement(h string) (*SettlementResponse, error) {
	raw, err := decodeBase64(h)
	if err != nil {
		return nil, err
	}
	var s SettlementResponse
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("%w: not JSON of a settlement response", ErrMalformed)
	}
	return &s, nil
}

// DecodeRequired decodes a PAYMENT-REQUIRED header value.
func DecodeRequired(h string) (*PaymentRequired, error) {
	raw, err := decodeBase64(h)
	if err != nil {
		return nil, err
	}
	var p PaymentRequired
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("%w: not JSON of a payment challenge", ErrMalformed)
	}
	return &p, nil
}
