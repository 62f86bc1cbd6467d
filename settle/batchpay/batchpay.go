// Package batchpay is a payer's side of x402's batch-settlement scheme in Go: it derives a
// channel from a server's requirements and signs its deposit and cumulative vouchers, as the
// official @x402/evm client does. The benchmark and the operator tests pay with it; a Go agent
// may too.
package batchpay

import (
	"crypto/ecdsa"
	"fmt"
	"math/big"
	"strconv"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/peage/appliance/settle/batch"
	"github.com/peage/appliance/settle/exact"
	"github.com/peage/appliance/settle/x402"
)

// Channel is one channel of a payer, its own key authorizing vouchers.
type Channel struct {
	Key     *ecdsa.PrivateKey
	Config  batch.ChannelConfig
	ChainID uint64
	ID      common.Hash
	token   exact.Domain
	req     x402.BatchRequirements
}

// Open derives the channel the requirements describe for key's address, told apart from the
// payer's other channels by salt.
func Open(key *ecdsa.PrivateKey, req x402.BatchRequirements, salt common.Hash) (*Channel, error) {
	if req.Extra == nil || !common.IsHexAddress(req.Asset) || !common.IsHexAddress(req.PayTo) || !common.IsHexAddress(req.Extra.ReceiverAuthorizer) {
		return nil, fmt.Errorf("batchpay: requirements lack asset, payTo or receiverAuthorizer")
	}
	chainID, err := x402.ChainID(req.Network)
	if err != nil {
		return nil, err
	}
	payer := crypto.PubkeyToAddress(key.PublicKey)
	c := &Channel{Key: key, ChainID: chainID, req: req, Config: batch.ChannelConfig{Payer: payer, PayerAuthorizer: payer,
		Receiver: common.HexToAddress(req.PayTo), ReceiverAuthorizer: common.HexToAddress(req.Extra.ReceiverAuthorizer),
		Token: common.HexToAddress(req.Asset), WithdrawDelay: req.Extra.WithdrawDelay, Salt: salt}}
	c.ID = batch.ChannelID(chainID, &c.Config)
	c.token = exact.Domain{Name: req.Extra.Name, Version: req.Extra.Version, ChainID: chainID, Contract: c.Config.Token}
	return c, nil
}

// Voucher is a voucher payload whose cumulative ceiling is max.
func (c *Channel) Voucher(max uint64) (*x402.BatchRequest, error) {
	return c.payload(x402.BatchVoucher, max)
}

// Deposit is a deposit of amount with the voucher for max, its ReceiveWithAuthorization valid
// for an hour and told apart by nonceSalt.
func (c *Channel) Deposit(amount, max uint64, nonceSalt int64) (*x402.BatchRequest, error) {
	r, err := c.payload(x402.BatchDeposit, max)
	if err != nil {
		return nil, err
	}
	auth := batch.ReceiveAuthorization{From: c.Config.Payer, To: batch.ERC3009CollectorAddress, Value: new(big.Int).SetUint64(amount),
		ValidAfter: big.NewInt(0), ValidBefore: big.NewInt(time.Now().Add(time.Hour).Unix()), Nonce: batch.DepositNonce(c.ID, big.NewInt(nonceSalt))}
	sig, err := batch.SignReceive(c.Key, c.token, &auth)
	if err != nil {
		return nil, err
	}
	r.PaymentPayload.Payload.Deposit = &x402.Deposit{Amount: strconv.FormatUint(amount, 10), Authorization: x402.DepositAuthorization{
		ERC3009: &x402.ERC3009Deposit{ValidAfter: "0", ValidBefore: auth.ValidBefore.String(),
			Salt: hexBytes(common.BigToHash(big.NewInt(nonceSalt)).Bytes()), Signature: hexBytes(sig)}}}
	return r, nil
}

func (c *Channel) payload(typ string, max uint64) (*x402.BatchRequest, error) {
	sig, err := batch.SignVoucher(c.Key, c.ChainID, c.ID, new(big.Int).SetUint64(max))
	if err != nil {
		return nil, err
	}
	wire := c.Config.Wire()
	r := c.req
	return &x402.BatchRequest{X402Version: 2, PaymentRequirements: r, PaymentPayload: x402.BatchPaymentPayload{X402Version: 2, Accepted: &r,
		Payload: x402.BatchPayload{Type: typ, ChannelConfig: &wire,
			Voucher: &x402.SignedVoucher{ChannelID: c.ID.Hex(), MaxClaimableAmount: strconv.FormatUint(max, 10), Signature: hexBytes(sig)}}}}, nil
}

func hexBytes(b []byte) string { return "0x" + common.Bytes2Hex(b) }
