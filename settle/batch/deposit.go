package batch

import (
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"

	"github.com/peage/appliance/settle/exact"
	"github.com/peage/appliance/settle/x402"
)

// Deposit is a parsed ERC-3009 deposit: the amount escrowed, the payer's ReceiveWithAuthorization
// to the collector and its signature, and the salt the authorization nonce derives from.
type Deposit struct {
	Amount    *big.Int
	Auth      ReceiveAuthorization
	Salt      *big.Int
	Signature []byte
}

// ParseDeposit reads the deposit of a payload for the channel channelID of cfg. Only the
// ERC-3009 method is accepted (the test USDC and USDC support it); a permit2 deposit is refused
// by name.
func ParseDeposit(w *x402.Deposit, cfg *ChannelConfig, channelID common.Hash) (*Deposit, *Invalid) {
	if w == nil {
		return nil, invalid(x402.ReasonBatchDepositPayload, "deposit is missing")
	}
	amount, err := ParseAmount(w.Amount, maxUint128)
	if err != nil || amount.Sign() == 0 {
		return nil, invalid(x402.ReasonBatchDepositPayload, "deposit.amount %q is not a positive uint128", w.Amount)
	}
	e := w.Authorization.ERC3009
	if e == nil {
		return nil, invalid(x402.ReasonBatchERC3009Required, "only erc3009Authorization deposits are accepted")
	}
	d := &Deposit{Amount: amount}
	fields := []struct {
		name, text string
		dst        **big.Int
	}{{"validAfter", e.ValidAfter, &d.Auth.ValidAfter}, {"validBefore", e.ValidBefore, &d.Auth.ValidBefore}}
	for _, f := range fields {
		v, err := ParseAmount(f.text, maxUint256)
		if err != nil {
			return nil, invalid(x402.ReasonBatchDepositPayload, "erc3009Authorization.%s: %v", f.name, err)
		}
		*f.dst = v
	}
	salt, err := ParseBytes(e.Salt)
	if err != nil || len(salt) > 32 {
		return nil, invalid(x402.ReasonBatchDepositPayload, "erc3009Authorization.salt %q is not a uint256", e.Salt)
	}
	d.Salt = new(big.Int).SetBytes(salt)
	if d.Signature, err = ParseBytes(e.Signature); err != nil {
		return nil, invalid(x402.ReasonBatchDepositPayload, "erc3009Authorization.signature: %v", err)
	}
	d.Auth.From = cfg.Payer
	d.Auth.To = ERC3009CollectorAddress
	d.Auth.Value = amount
	d.Auth.Nonce = DepositNonce(channelID, d.Salt)
	return d, nil
}

// Digest is the digest the payer signed under the token's domain.
func (d *Deposit) Digest(token exact.Domain) common.Hash { return ReceiveDigest(token, &d.Auth) }

// CollectorData is the collector's argument: abi.encode(validAfter, validBefore, salt, signature).
func (d *Deposit) CollectorData() []byte {
	b, err := collectorArgs.Pack(d.Auth.ValidAfter, d.Auth.ValidBefore, d.Salt, d.Signature)
	if err != nil {
		panic(err) // the types are fixed above; a failure here is a programming error
	}
	return b
}

var collectorArgs = func() abi.Arguments {
	u256, _ := abi.NewType("uint256", "", nil)
	b, _ := abi.NewType("bytes", "", nil)
	return abi.Arguments{{Type: u256}, {Type: u256}, {Type: u256}, {Type: b}}
}()
