// Package exact implements the x402 "exact" scheme on EVM with EIP-3009: it parses the
// authorization a payer signed, computes its EIP-712 digest, recovers the signer (or asks a
// smart wallet through ERC-1271), and checks it against what the server asked for. The checks
// are pure functions over the wire types; the few facts only the chain knows (nonce state,
// balance, contract code) come from an injected Reader.
package exact

import (
	"encoding/binary"
	"math/big"
	"sync"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

var (
	// TransferTypeHash is keccak256 of the EIP-3009 TransferWithAuthorization type.
	TransferTypeHash = crypto.Keccak256Hash([]byte("TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"))
	// ReceiveTypeHash is keccak256 of the EIP-3009 ReceiveWithAuthorization type (the same
	// fields; only the payee may submit it).
	ReceiveTypeHash = crypto.Keccak256Hash([]byte("ReceiveWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"))
	// DomainTypeHash is keccak256 of the EIP-712 domain type USDC uses (no salt).
	DomainTypeHash = crypto.Keccak256Hash([]byte("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"))
)

// Domain is a token's EIP-712 domain.
type Domain struct {
	Name     string
	Version  string
	ChainID  uint64
	Contract common.Address
}

// Separator computes the domain separator.
func (d Domain) Separator() common.Hash {
	var chain [32]byte
	binary.BigEndian.PutUint64(chain[24:], d.ChainID)
	return crypto.Keccak256Hash(
		DomainTypeHash[:],
		crypto.Keccak256([]byte(d.Name)),
		crypto.Keccak256([]byte(d.Version)),
		chain[:],
		common.LeftPadBytes(d.Contract[:], 32),
	)
}

// separators caches domain separators: there are a handful of domains and verification is hot.
var separators sync.Map // Domain → common.Hash

func separatorOf(d Domain) common.Hash {
	if s, ok := separators.Load(d); ok {
		return s.(common.Hash)
	}
	s := d.Separator()
	separators.Store(d, s)
	return s
}

// Authorization is a parsed EIP-3009 TransferWithAuthorization message.
type Authorization struct {
	From        common.Address
	To          common.Address
	Value       *big.Int
	ValidAfter  *big.Int
	ValidBefore *big.Int
	Nonce       common.Hash
}

// Digest is the EIP-712 digest the payer signed: keccak256(0x1901 ‖ domainSeparator ‖ structHash).
func Digest(d Domain, a *Authorization) common.Hash {
	return TypedDigest(d, structHash(TransferTypeHash, a))
}

// ReceiveDigest is the EIP-712 digest of a as an EIP-3009 ReceiveWithAuthorization.
func ReceiveDigest(d Domain, a *Authorization) common.Hash {
	return TypedDigest(d, structHash(ReceiveTypeHash, a))
}

// TypedDigest is the EIP-712 digest of any struct hash under domain d (the separator is
// cached); the batch-settlement scheme's vouchers, refunds and claim batches use it too.
func TypedDigest(d Domain, structHash common.Hash) common.Hash {
	var buf [2 + 32 + 32]byte
	buf[0], buf[1] = 0x19, 0x01
	sep := separatorOf(d)
	copy(buf[2:34], sep[:])
	copy(buf[34:], structHash[:])
	return crypto.Keccak256Hash(buf[:])
}

// structHash encodes the six fields in one array on the stack (every field is one word).
func structHash(typeHash common.Hash, a *Authorization) common.Hash {
	var buf [7 * 32]byte
	copy(buf[0:32], typeHash[:])
	copy(buf[32+12:64], a.From[:])
	copy(buf[64+12:96], a.To[:])
	fillWord(buf[96:128], a.Value)
	fillWord(buf[128:160], a.ValidAfter)
	fillWord(buf[160:192], a.ValidBefore)
	copy(buf[192:224], a.Nonce[:])
	return crypto.Keccak256Hash(buf[:])
}

// fillWord writes v into the 32-byte word w (nil is zero).
func fillWord(w []byte, v *big.Int) {
	if v != nil {
		v.FillBytes(w)
	}
}

// Word is v as one 32-byte ABI word (EIP-712 encodes every uint so); nil is zero.
func Word(v *big.Int) []byte {
	var w [32]byte
	if v != nil {
		v.FillBytes(w[:])
	}
	return w[:]
}
