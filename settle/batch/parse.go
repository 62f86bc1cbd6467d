package batch

import (
	"encoding/hex"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/peage/appliance/settle/exact"
	"github.com/peage/appliance/settle/x402"
)

// Invalid is a payload that fails a check, with the spec's reason code: exact's verdict type
// (its Payer is left empty here).
type Invalid = exact.Invalid

func invalid(reason, format string, args ...any) *Invalid {
	return &Invalid{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

// maxUint128 bounds every amount the contract stores.
var maxUint128 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 128), big.NewInt(1))

// maxUint256 bounds the ERC-3009 fields.
var maxUint256 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

// ParseConfig reads a wire channel config strictly (20-byte hex addresses, a 32-byte salt).
func ParseConfig(w *x402.ChannelConfig, reason string) (*ChannelConfig, *Invalid) {
	if w == nil {
		return nil, invalid(reason, "channelConfig is missing")
	}
	c := &ChannelConfig{WithdrawDelay: w.WithdrawDelay}
	for _, f := range []struct {
		name string
		text string
		dst  *common.Address
	}{
		{"payer", w.Payer, &c.Payer}, {"payerAuthorizer", w.PayerAuthorizer, &c.PayerAuthorizer},
		{"receiver", w.Receiver, &c.Receiver}, {"receiverAuthorizer", w.ReceiverAuthorizer, &c.ReceiverAuthorizer},
		{"token", w.Token, &c.Token},
	} {
		a, err := ParseAddress(f.text)
		if err != nil {
			return nil, invalid(reason, "channelConfig.%s: %v", f.name, err)
		}
		*f.dst = a
	}
	salt, err := ParseHash(w.Salt)
	if err != nil {
		return nil, invalid(reason, "channelConfig.salt: %v", err)
	}
	c.Salt = salt
	if w.WithdrawDelay >= 1<<40 {
		return nil, invalid(x402.ReasonBatchDelayOutOfRange, "withdrawDelay %d does not fit uint40", w.WithdrawDelay)
	}
	return c, nil
}

// Wire renders the config as the client writes it (checksummed addresses, lower-case salt).
func (c *ChannelConfig) Wire() x402.ChannelConfig {
	return x402.ChannelConfig{
		Payer: c.Payer.Hex(), PayerAuthorizer: c.PayerAuthorizer.Hex(), Receiver: c.Receiver.Hex(),
		ReceiverAuthorizer: c.ReceiverAuthorizer.Hex(), Token: c.Token.Hex(), WithdrawDelay: c.WithdrawDelay,
		Salt: c.Salt.Hex(),
	}
}

// Voucher is a parsed signed voucher.
type Voucher struct {
	ChannelID          common.Hash
	MaxClaimableAmount *big.Int
	Signature          []byte
}

// ParseVoucher reads a wire voucher strictly.
func ParseVoucher(w *x402.SignedVoucher) (*Voucher, *Invalid) {
	if w == nil {
		return nil, invalid(x402.ReasonBatchVoucherPayload, "voucher is missing")
	}
	id, err := ParseHash(w.ChannelID)
	if err != nil {
		return nil, invalid(x402.ReasonBatchVoucherPayload, "voucher.channelId: %v", err)
	}
	max, err := ParseAmount(w.MaxClaimableAmount, maxUint128)
	if err != nil {
		return nil, invalid(x402.ReasonBatchVoucherPayload, "voucher.maxClaimableAmount: %v", err)
	}
	sig, err := ParseBytes(w.Signature)
	if err != nil {
		return nil, invalid(x402.ReasonBatchVoucherPayload, "voucher.signature: %v", err)
	}
	return &Voucher{ChannelID: id, MaxClaimableAmount: max, Signature: sig}, nil
}

// CheckVoucher checks that cfg hashes to the voucher's channel id on chainID and that the
// voucher is signed by the channel's payer authorizer: one ECDSA recovery, no chain read.
// A channel without a payer authorizer (the payer is the signer, possibly a smart wallet
// answering ERC-1271) reports needsWallet instead: only the chain can say.
func CheckVoucher(chainID uint64, cfg *ChannelConfig, v *Voucher) (needsWallet bool, bad *Invalid) {
	if id := ChannelID(chainID, cfg); id != v.ChannelID {
		return false, invalid(x402.ReasonBatchChannelIDMismatch, "channelConfig hashes to %s, not %s", id.Hex(), v.ChannelID.Hex())
	}
	digest := VoucherDigest(chainID, v.ChannelID, v.MaxClaimableAmount)
	signer, ok := Recover(digest, v.Signature)
	if cfg.PayerAuthorizer == (common.Address{}) {
		if ok && signer == cfg.Payer {
			return false, nil
		}
		return true, nil
	}
	if !ok || signer != cfg.PayerAuthorizer {
		return false, invalid(x402.ReasonBatchVoucherSignature, "voucher is not signed by payerAuthorizer %s", cfg.PayerAuthorizer.Hex())
	}
	return false, nil
}

// ParseAddress reads a 0x-prefixed 20-byte hex address (any case).
func ParseAddress(s string) (common.Address, error) {
	b, err := ParseBytes(s)
	if err != nil {
		return common.Address{}, err
	}
	if len(b) != 20 {
		return common.Address{}, fmt.Errorf("%q is not a 20-byte address", s)
	}
	return common.BytesToAddress(b), nil
}

// ParseHash reads a 0x-prefixed 32-byte hex value.
func ParseHash(s string) (common.Hash, error) {
	b, err := ParseBytes(s)
	if err != nil {
		return common.Hash{}, err
	}
	if len(b) != 32 {
		return common.Hash{}, fmt.Errorf("%q is not 32 bytes", s)
	}
	return common.BytesToHash(b), nil
}

// ParseBytes reads 0x-prefixed hex.
func ParseBytes(s string) ([]byte, error) {
	if !strings.HasPrefix(s, "0x") && !strings.HasPrefix(s, "0X") {
		return nil, fmt.Errorf("%q is not 0x-prefixed hex", s)
	}
	b, err := hex.DecodeString(s[2:])
	if err != nil {
		return nil, fmt.Errorf("%q is not hex", s)
	}
	return b, nil
}

// ParseAmount reads a non-negative decimal integer no larger than max.
func ParseAmount(s string, max *big.Int) (*big.Int, error) {
	if s == "" || len(s) > 78 {
		return nil, fmt.Errorf("%q is not an amount", s)
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return nil, fmt.Errorf("%q is not a decimal integer", s)
		}
	}
	v, _ := new(big.Int).SetString(s, 10)
	if v.Cmp(max) > 0 {
		return nil, fmt.Errorf("%s is out of range", s)
	}
	return v, nil
}
