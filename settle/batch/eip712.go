// Package batch implements the hashing and checks of x402's `batch-settlement` scheme on EVM
// (coinbase/x402 specs/schemes/batch-settlement/scheme_batch_settlement_evm.md): the channel
// config and its id, the payer's cumulative vouchers, the receiver authorizer's refunds and claim
// batches, all EIP-712 under the x402BatchSettlement contract's domain, and the ERC-3009 deposit
// authorization the client signs to the deposit collector. Every digest matches the official
// `@x402/evm` client byte for byte (interop_test.go signs with it). A voucher is verified with
// one ECDSA recovery; nothing here reads the chain.
package batch

import (
	"encoding/binary"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/peage/appliance/settle/exact"
)

// Scheme is the scheme's name on the wire.
const Scheme = "batch-settlement"

// The canonical deployments (CREATE2, the same on every chain). The embedded chain places the
// project's own build of these contracts at the same addresses in its genesis.
var (
	SettlementAddress       = common.HexToAddress("0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003")
	ERC3009CollectorAddress = common.HexToAddress("0x4020806089470a89826cB9fB1f4059150b550004")
	Permit2CollectorAddress = common.HexToAddress("0x4020425FAf3B746C082C2f942b4E5159887B0005")
)

// Withdrawal delay bounds of the contract, in seconds (15 minutes to 30 days).
const (
	MinWithdrawDelay = 15 * 60
	MaxWithdrawDelay = 30 * 24 * 60 * 60
)

// The contract's EIP-712 domain name and version.
const (
	DomainName    = "x402 Batch Settlement"
	DomainVersion = "1"
)

var (
	ChannelConfigTypeHash = crypto.Keccak256Hash([]byte("ChannelConfig(address payer,address payerAuthorizer,address receiver,address receiverAuthorizer,address token,uint40 withdrawDelay,bytes32 salt)"))
	VoucherTypeHash       = crypto.Keccak256Hash([]byte("Voucher(bytes32 channelId,uint128 maxClaimableAmount)"))
	RefundTypeHash        = crypto.Keccak256Hash([]byte("Refund(bytes32 channelId,uint256 nonce,uint128 amount)"))
	ClaimEntryTypeHash    = crypto.Keccak256Hash([]byte("ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)"))
	ClaimBatchTypeHash    = crypto.Keccak256Hash([]byte("ClaimBatch(ClaimEntry[] claims)ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)"))
)

// Domain is the settlement contract's EIP-712 domain on chainID.
func Domain(chainID uint64) exact.Domain {
	return exact.Domain{Name: DomainName, Version: DomainVersion, ChainID: chainID, Contract: SettlementAddress}
}

// ChannelConfig is the immutable configuration a channel id is the hash of.
type ChannelConfig struct {
	Payer              common.Address
	PayerAuthorizer    common.Address // zero: vouchers are checked against Payer (ERC-1271 possible)
	Receiver           common.Address
	ReceiverAuthorizer common.Address
	Token              common.Address
	WithdrawDelay      uint64 // uint40 on chain
	Salt               common.Hash
}

// ChannelID is the EIP-712 hash of the config under the contract's domain on chainID.
func ChannelID(chainID uint64, c *ChannelConfig) common.Hash {
	var delay [32]byte
	binary.BigEndian.PutUint64(delay[24:], c.WithdrawDelay)
	sh := crypto.Keccak256Hash(
		ChannelConfigTypeHash[:],
		addressWord(c.Payer), addressWord(c.PayerAuthorizer), addressWord(c.Receiver),
		addressWord(c.ReceiverAuthorizer), addressWord(c.Token), delay[:], c.Salt[:],
	)
	return exact.TypedDigest(Domain(chainID), sh)
}

// VoucherDigest is what the payer (or its payer authorizer) signs for a cumulative ceiling.
func VoucherDigest(chainID uint64, channelID common.Hash, maxClaimable *big.Int) common.Hash {
	return exact.TypedDigest(Domain(chainID), crypto.Keccak256Hash(VoucherTypeHash[:], channelID[:], exact.Word(maxClaimable)))
}

// RefundDigest is what the receiver authorizer signs for refundWithSignature at nonce.
func RefundDigest(chainID uint64, channelID common.Hash, nonce, amount *big.Int) common.Hash {
	return exact.TypedDigest(Domain(chainID), crypto.Keccak256Hash(RefundTypeHash[:], channelID[:], exact.Word(nonce), exact.Word(amount)))
}

// ClaimEntry is one row of a claim batch as the receiver authorizer signs it.
type ClaimEntry struct {
	ChannelID          common.Hash
	MaxClaimableAmount *big.Int
	TotalClaimed       *big.Int
}

// ClaimBatchDigest is what the receiver authorizer signs for claimWithSignature.
func ClaimBatchDigest(chainID uint64, entries []ClaimEntry) common.Hash {
	hashes := make([]byte, 0, 32*len(entries))
	for _, e := range entries {
		h := crypto.Keccak256Hash(ClaimEntryTypeHash[:], e.ChannelID[:], exact.Word(e.MaxClaimableAmount), exact.Word(e.TotalClaimed))
		hashes = append(hashes, h[:]...)
	}
	root := crypto.Keccak256Hash(hashes)
	return exact.TypedDigest(Domain(chainID), crypto.Keccak256Hash(ClaimBatchTypeHash[:], root[:]))
}

// DepositNonce is the ERC-3009 nonce of a deposit: keccak256(abi.encode(channelId, salt)), which
// binds the payer's authorization to one channel.
func DepositNonce(channelID common.Hash, salt *big.Int) common.Hash {
	return crypto.Keccak256Hash(channelID[:], exact.Word(salt))
}

// ReceiveAuthorization is the EIP-3009 ReceiveWithAuthorization a deposit carries (the fields
// of exact's TransferWithAuthorization); To is always the ERC-3009 deposit collector.
type ReceiveAuthorization = exact.Authorization

// ReceiveDigest is the digest the payer signs under the token's domain.
func ReceiveDigest(token exact.Domain, a *ReceiveAuthorization) common.Hash {
	return exact.ReceiveDigest(token, a)
}

// Recover returns the signer of an ECDSA signature over digest in the only form the contract
// accepts (65 bytes, v 27 or 28, low s): a voucher valid here is claimable on chain.
func Recover(digest common.Hash, sig []byte) (common.Address, bool) {
	if len(sig) != 65 || (sig[64] != 27 && sig[64] != 28) {
		return common.Address{}, false
	}
	return exact.Signer(digest, sig)
}

func addressWord(a common.Address) []byte { return common.LeftPadBytes(a[:], 32) }
