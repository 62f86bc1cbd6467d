package x402

import (
	"encoding/json"
	"strings"
)

// The wire types of the batch-settlement scheme on EVM (coinbase/x402
// specs/schemes/batch-settlement/scheme_batch_settlement_evm.md). Amounts are decimal text of
// atomic units, addresses and hashes 0x-hex; withdrawDelay and withdrawRequestedAt are JSON
// numbers, as the official client writes them. settle/batch parses and checks them.

// SchemeBatchSettlement is the scheme's name.
const SchemeBatchSettlement = "batch-settlement"

// Batch payload types (payload.type).
const (
	BatchDeposit = "deposit"
	BatchVoucher = "voucher"
	BatchRefund  = "refund"
	BatchClaim   = "claim"
	BatchSettle  = "settle"
)

// ChannelConfig is the immutable channel configuration whose EIP-712 hash is the channel id.
type ChannelConfig struct {
	Payer              string `json:"payer"`
	PayerAuthorizer    string `json:"payerAuthorizer"`
	Receiver           string `json:"receiver"`
	ReceiverAuthorizer string `json:"receiverAuthorizer"`
	Token              string `json:"token"`
	WithdrawDelay      uint64 `json:"withdrawDelay"`
	Salt               string `json:"salt"`
}

// SignedVoucher is the payer's signature over a cumulative ceiling for one channel.
type SignedVoucher struct {
	ChannelID          string `json:"channelId"`
	MaxClaimableAmount string `json:"maxClaimableAmount"`
	Signature          string `json:"signature"`
}

// ERC3009Deposit is the payer's ReceiveWithAuthorization to the ERC-3009 deposit collector; the
// authorization nonce is derived from the channel id and Salt.
type ERC3009Deposit struct {
	ValidAfter  string `json:"validAfter"`
	ValidBefore string `json:"validBefore"`
	Salt        string `json:"salt"`
	Signature   string `json:"signature"`
}

// DepositAuthorization holds exactly one transfer method (only ERC-3009 is accepted here).
type DepositAuthorization struct {
	ERC3009 *ERC3009Deposit `json:"erc3009Authorization,omitempty"`
	// Permit2 is kept raw for round-trips only: a deposit without the ERC-3009 part is refused
	// (batch.ParseDeposit, ReasonBatchERC3009Required), permit2 or not.
	Permit2 map[string]any `json:"permit2Authorization,omitempty"`
}

// Deposit is the escrow part of a deposit payload.
type Deposit struct {
	Amount        string               `json:"amount"`
	Authorization DepositAuthorization `json:"authorization"`
}

// ClaimRow is one row of a claim: the voucher (with its full channel config), the payer's
// signature and the cumulative total the receiver side claims.
type ClaimRow struct {
	Voucher struct {
		Channel            ChannelConfig `json:"channel"`
		MaxClaimableAmount string        `json:"maxClaimableAmount"`
	} `json:"voucher"`
	Signature    string `json:"signature"`
	TotalClaimed string `json:"totalClaimed"`
}

// BatchPayload is payload of a batch-settlement payment (deposit, voucher, refund) or of a
// server-authored claim or settle.
type BatchPayload struct {
	Type          string         `json:"type"`
	ChannelConfig *ChannelConfig `json:"channelConfig,omitempty"`
	Voucher       *SignedVoucher `json:"voucher,omitempty"`
	Deposit       *Deposit       `json:"deposit,omitempty"`
	// Amount is the refund requested (refund; empty means all of it).
	Amount string `json:"amount,omitempty"`
	// Completed by the server before a refund or claim reaches the facilitator.
	RefundNonce               string     `json:"refundNonce,omitempty"`
	Claims                    []ClaimRow `json:"claims,omitempty"`
	RefundAuthorizerSignature string     `json:"refundAuthorizerSignature,omitempty"`
	ClaimAuthorizerSignature  string     `json:"claimAuthorizerSignature,omitempty"`
	// settle
	Receiver string `json:"receiver,omitempty"`
	Token    string `json:"token,omitempty"`
}

// Payer is the payer the channel config names ("" without one), for an answer that refuses
// the payload before its config is parsed.
func (p *BatchPayload) Payer() string {
	if p.ChannelConfig == nil {
		return ""
	}
	return p.ChannelConfig.Payer
}

// ChannelState is the channel snapshot in verify and settle answers, payment responses and the
// corrective 402. ChargedCumulativeAmount is the server's own figure (absent from the
// facilitator's answers).
type ChannelState struct {
	ChannelID               string `json:"channelId"`
	Balance                 string `json:"balance"`
	TotalClaimed            string `json:"totalClaimed"`
	WithdrawRequestedAt     uint64 `json:"withdrawRequestedAt"`
	RefundNonce             string `json:"refundNonce"`
	ChargedCumulativeAmount string `json:"chargedCumulativeAmount,omitempty"`
}

// VoucherState is the last voucher the server holds, offered in a corrective 402 so the client
// can check its own signature before adopting the server's cumulative amount.
type VoucherState struct {
	SignedMaxClaimable string `json:"signedMaxClaimable"`
	Signature          string `json:"signature"`
}

// BatchExtra is the extra of a batch-settlement requirement.
type BatchExtra struct {
	ReceiverAuthorizer  string        `json:"receiverAuthorizer"`
	WithdrawDelay       uint64        `json:"withdrawDelay"`
	Name                string        `json:"name"`
	Version             string        `json:"version"`
	AssetTransferMethod string        `json:"assetTransferMethod,omitempty"`
	MinDeposit          string        `json:"minDeposit,omitempty"`
	ChannelState        *ChannelState `json:"channelState,omitempty"`
	VoucherState        *VoucherState `json:"voucherState,omitempty"`
}

// BatchResponseExtra is the extra of a batch-settlement payment response: the request's charge
// (absent for a refund) and the channel snapshot.
type BatchResponseExtra struct {
	ChargedAmount string        `json:"chargedAmount,omitempty"`
	ChannelState  *ChannelState `json:"channelState,omitempty"`
}

// Batch-settlement reason codes used by this implementation (the spec's table has them all).
const (
	ReasonBatchCumulativeMismatch  = "invalid_batch_settlement_evm_cumulative_amount_mismatch"
	ReasonBatchCumulativeBelow     = "invalid_batch_settlement_evm_cumulative_below_claimed"
	ReasonBatchExceedsBalance      = "invalid_batch_settlement_evm_cumulative_exceeds_balance"
	ReasonBatchChannelBusy         = "invalid_batch_settlement_evm_channel_busy"
	ReasonBatchChannelIDMismatch   = "invalid_batch_settlement_evm_channel_id_mismatch"
	ReasonBatchChannelNotFound     = "invalid_batch_settlement_evm_channel_not_found"
	ReasonBatchVoucherSignature    = "invalid_batch_settlement_evm_voucher_signature"
	ReasonBatchVoucherPayload      = "invalid_batch_settlement_evm_voucher_payload"
	ReasonBatchDepositPayload      = "invalid_batch_settlement_evm_deposit_payload"
	ReasonBatchRefundPayload       = "invalid_batch_settlement_evm_refund_payload"
	ReasonBatchPayloadType         = "invalid_batch_settlement_evm_payload_type"
	ReasonBatchTokenMismatch       = "invalid_batch_settlement_evm_token_mismatch"
	ReasonBatchReceiverMismatch    = "invalid_batch_settlement_evm_receiver_mismatch"
	ReasonBatchAuthorizerMismatch  = "invalid_batch_settlement_evm_receiver_authorizer_mismatch"
	ReasonBatchDelayMismatch       = "invalid_batch_settlement_evm_withdraw_delay_mismatch"
	ReasonBatchDelayOutOfRange     = "invalid_batch_settlement_evm_withdraw_delay_out_of_range"
	ReasonBatchERC3009Required     = "invalid_batch_settlement_evm_erc3009_authorization_required"
	ReasonBatchReceiveSignature    = "invalid_batch_settlement_evm_receive_authorization_signature"
	ReasonBatchValidBefore         = "invalid_batch_settlement_evm_payload_authorization_valid_before"
	ReasonBatchValidAfter          = "invalid_batch_settlement_evm_payload_authorization_valid_after"
	ReasonBatchInsufficientBalance = "invalid_batch_settlement_evm_insufficient_balance"
	ReasonBatchScheme              = "invalid_batch_settlement_evm_scheme"
	ReasonBatchNetworkMismatch     = "invalid_batch_settlement_evm_network_mismatch"
	ReasonBatchRefundAmountInvalid = "invalid_batch_settlement_evm_refund_amount_invalid"
	ReasonBatchRefundNoBalance     = "invalid_batch_settlement_evm_refund_no_balance"
	ReasonBatchChargeExceedsSigned = "invalid_batch_settlement_evm_charge_exceeds_signed_cumulative"
	ReasonBatchMissingEIP712Domain = "invalid_batch_settlement_evm_missing_eip712_domain"
)

// BatchRequirements is a batch-settlement requirement (its extra differs from exact's).
type BatchRequirements struct {
	Scheme            string      `json:"scheme"`
	Network           string      `json:"network"`
	Amount            string      `json:"amount"`
	Asset             string      `json:"asset"`
	PayTo             string      `json:"payTo"`
	MaxTimeoutSeconds int         `json:"maxTimeoutSeconds"`
	Extra             *BatchExtra `json:"extra,omitempty"`
}

// BatchPaymentPayload is a client's batch-settlement payment (v2 only).
type BatchPaymentPayload struct {
	X402Version int                `json:"x402Version"`
	Resource    *ResourceInfo      `json:"resource,omitempty"`
	Accepted    *BatchRequirements `json:"accepted,omitempty"`
	Payload     BatchPayload       `json:"payload"`
	Extensions  map[string]any     `json:"extensions,omitempty"`
}

// BatchRequest is the body of POST /verify and POST /settle for the batch-settlement scheme.
type BatchRequest struct {
	X402Version         int                 `json:"x402Version"`
	PaymentPayload      BatchPaymentPayload `json:"paymentPayload"`
	PaymentRequirements BatchRequirements   `json:"paymentRequirements"`
	// WorkSeconds is the route's deadline (POST /batch/reserve only): the channel's hold lasts
	// it plus the facilitator's settlement margin, and a voucher is refused when a pending
	// withdrawal could finalize before the call's charge is claimed.
	WorkSeconds int64 `json:"work_seconds,omitempty"`
}

// BatchVerifyResponse is /verify's answer: the on-chain channel snapshot in extra.
type BatchVerifyResponse struct {
	IsValid        bool          `json:"isValid"`
	InvalidReason  string        `json:"invalidReason,omitempty"`
	InvalidMessage string        `json:"invalidMessage,omitempty"`
	Payer          string        `json:"payer,omitempty"`
	Extra          *ChannelState `json:"extra,omitempty"`
}

// BatchSettleResponse is /settle's answer and the payment response of a batch-settlement call.
// Transaction and Amount are "" for a voucher (nothing moved on chain).
type BatchSettleResponse struct {
	Success     bool                `json:"success"`
	ErrorReason string              `json:"errorReason,omitempty"`
	Payer       string              `json:"payer,omitempty"`
	Transaction string              `json:"transaction"`
	Network     string              `json:"network"`
	Amount      string              `json:"amount"`
	Asset       string              `json:"asset,omitempty"`
	Extra       *BatchResponseExtra `json:"extra,omitempty"`
	// Extensions: as SettlementResponse.Extensions.
	Extensions map[string]any `json:"extensions,omitempty"`
}

// Reasons of failed batch-settlement transactions.
const (
	ReasonBatchDepositFailed     = "invalid_batch_settlement_evm_deposit_transaction_failed"
	ReasonBatchSettleFailed      = "invalid_batch_settlement_evm_settle_transaction_failed"
	ReasonBatchRefundFailed      = "invalid_batch_settlement_evm_refund_transaction_failed"
	ReasonBatchClaimPayload      = "invalid_batch_settlement_evm_claim_payload"
	ReasonBatchUnknownAction     = "invalid_batch_settlement_evm_unknown_settle_action"
	ReasonBatchDepositSimulation = "invalid_batch_settlement_evm_deposit_simulation_failed"
	ReasonBatchRefundSimulation  = "invalid_batch_settlement_evm_refund_simulation_failed"
	ReasonBatchSettleSimulation  = "invalid_batch_settlement_evm_settle_simulation_failed"
)

// BatchReserveResponse answers POST /batch/reserve: the payment is verified and its channel is
// held for this request (ID is the channel id), or it is refused; on a cumulative-amount
// mismatch Corrective carries what the corrective 402's extra needs.
type BatchReserveResponse struct {
	BatchVerifyResponse
	ID         string      `json:"id,omitempty"`
	Corrective *BatchExtra `json:"corrective,omitempty"`
	// Hold names this reservation of the channel: its completion carries it, so a request whose
	// hold expired cannot complete in the place of the request that holds the channel now,
	// even with the same voucher.
	Hold string `json:"hold,omitempty"`
}

// BatchCompleteRequest commits a reserved batch-settlement request after its work succeeded:
// Charged (atomic units, at most the requirement's amount) is added to the channel's charged
// cumulative amount. A refund has no work and ignores Charged.
//
// MaxClaimableAmount and Signature are the held request's voucher: a completion whose voucher
// is not the held request's commits nothing, and one whose voucher is that of the channel's
// last completed request answers that completion's result again (a retry after a lost answer)
// without charging anything more.
type BatchCompleteRequest struct {
	ID                 string `json:"id"`
	Charged            uint64 `json:"charged"`
	MaxClaimableAmount string `json:"maxClaimableAmount"`
	Signature          string `json:"signature"`
	// Hold is BatchReserveResponse.Hold of the request ("" matches on the voucher only).
	Hold string `json:"hold,omitempty"`
	// Box is the fleet box that served the call ("" for the appliance itself), counted with
	// the charge on the channel, as WithBox records it with an exact payment.
	Box string `json:"box,omitempty"`
}

// Completion is the BatchCompleteRequest of this request, held as id, charging charged.
func (r *BatchRequest) Completion(id string, charged uint64) *BatchCompleteRequest {
	c := &BatchCompleteRequest{ID: id, Charged: charged}
	if v := r.PaymentPayload.Payload.Voucher; v != nil {
		c.MaxClaimableAmount, c.Signature = v.MaxClaimableAmount, v.Signature
	}
	return c
}

// ReasonBatchDepositBelowMin is a deposit under the server's own minDeposit policy.
const ReasonBatchDepositBelowMin = "invalid_batch_settlement_evm_deposit_below_min_deposit"

// DecodeBatchPayment decodes a PAYMENT-SIGNATURE header carrying a batch-settlement payment.
func DecodeBatchPayment(h string) (*BatchPaymentPayload, error) {
	raw, err := decodeBase64(h)
	if err != nil {
		return nil, err
	}
	return decodeBatchPayment(raw)
}

func decodeBatchPayment(raw []byte) (*BatchPaymentPayload, error) {
	var p BatchPaymentPayload
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, malformed(ReasonInvalidPayload, "not JSON of a batch-settlement payment payload")
	}
	if p.X402Version != 2 || p.Accepted == nil || p.Accepted.Scheme != SchemeBatchSettlement {
		return nil, malformed(ReasonInvalidPayload, "a batch-settlement payment is x402 version 2 and names the scheme in accepted")
	}
	return &p, nil
}

// MatchBatch compares what a client says it accepted with the batch-settlement requirement
// offered now and returns "" or the reason code of the first difference.
func MatchBatch(accepted, offered *BatchRequirements) string {
	switch {
	case accepted == nil || accepted.Extra == nil:
		return ReasonBatchMissingEIP712Domain
	case accepted.Scheme != offered.Scheme:
		return ReasonBatchScheme
	case accepted.Network != offered.Network:
		return ReasonBatchNetworkMismatch
	case !strings.EqualFold(accepted.Asset, offered.Asset):
		return ReasonBatchTokenMismatch
	case !strings.EqualFold(accepted.PayTo, offered.PayTo):
		return ReasonBatchReceiverMismatch
	case accepted.Amount != offered.Amount:
		return ReasonInvalidRequirements
	case accepted.Extra.Name != offered.Extra.Name || accepted.Extra.Version != offered.Extra.Version:
		return ReasonBatchMissingEIP712Domain
	case !strings.EqualFold(accepted.Extra.ReceiverAuthorizer, offered.Extra.ReceiverAuthorizer):
		return ReasonBatchAuthorizerMismatch
	case accepted.Extra.WithdrawDelay != offered.Extra.WithdrawDelay:
		return ReasonBatchDelayMismatch
	}
	return ""
}
