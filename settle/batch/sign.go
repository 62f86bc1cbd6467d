package batch

import (
	"crypto/ecdsa"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/peage/appliance/settle/exact"
)

// SignVoucher signs a cumulative ceiling for a channel (the payer authorizer's key).
func SignVoucher(key *ecdsa.PrivateKey, chainID uint64, channelID common.Hash, maxClaimable *big.Int) ([]byte, error) {
	return exact.SignDigest(key, VoucherDigest(chainID, channelID, maxClaimable))
}

// SignRefund signs a refund at nonce (the receiver authorizer's key).
func SignRefund(key *ecdsa.PrivateKey, chainID uint64, channelID common.Hash, nonce, amount *big.Int) ([]byte, error) {
	return exact.SignDigest(key, RefundDigest(chainID, channelID, nonce, amount))
}

// SignClaimBatch signs a claim batch (the receiver authorizer's key).
func SignClaimBatch(key *ecdsa.PrivateKey, chainID uint64, entries []ClaimEntry) ([]byte, error) {
	return exact.SignDigest(key, ClaimBatchDigest(chainID, entries))
}

// SignReceive signs the payer's ReceiveWithAuthorization of a deposit under the token's domain.
func SignReceive(key *ecdsa.PrivateKey, token exact.Domain, a *ReceiveAuthorization) ([]byte, error) {
	return exact.SignDigest(key, ReceiveDigest(token, a))
}
