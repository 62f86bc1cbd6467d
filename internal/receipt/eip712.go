package receipt

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
	"golang.org/x/crypto/sha3"
)

// The extension's EIP-712 domains and types (@x402/extensions 2.27, offer-receipt/signing.ts):
// fixed domains on chainId 1 with no verifying contract, whatever the payment network.
const (
	domainType  = "EIP712Domain(string name,string version,uint256 chainId)"
	offerType   = "Offer(uint256 version,string resourceUrl,string scheme,string network,string asset,string payTo,string amount,uint256 validUntil)"
	receiptType = "Receipt(uint256 version,string network,string resourceUrl,string payer,uint256 issuedAt,string transaction)"
)

var (
	offerDomainSeparator   = domainSeparator("x402 offer", "1", 1)
	receiptDomainSeparator = domainSeparator("x402 receipt", "1", 1)
	offerTypeHash          = keccak([]byte(offerType))
	receiptTypeHash        = keccak([]byte(receiptType))
)

func keccak(parts ...[]byte) []byte {
	h := sha3.NewLegacyKeccak256()
	for _, p := range parts {
		h.Write(p)
	}
	return h.Sum(nil)
}

func uint256(v uint64) []byte {
	b := make([]byte, 32)
	binary.BigEndian.PutUint64(b[24:], v)
	return b
}

func str(s string) []byte { return keccak([]byte(s)) }

func domainSeparator(name, version string, chainID uint64) []byte {
	return keccak(keccak([]byte(domainType)), str(name), str(version), uint256(chainID))
}

func typedDataHash(domain, structHash []byte) []byte {
	return keccak([]byte{0x19, 0x01}, domain, structHash)
}

// OfferHash is the EIP-712 digest of an offer payload.
func OfferHash(p *OfferPayload) []byte {
	return typedDataHash(offerDomainSeparator, keccak(offerTypeHash, uint256(uint64(p.Version)), str(p.ResourceURL),
		str(p.Scheme), str(p.Network), str(p.Asset), str(p.PayTo), str(p.Amount), uint256(uint64(p.ValidUntil))))
}

// ReceiptHash is the EIP-712 digest of a receipt payload.
func ReceiptHash(p *ReceiptPayload) []byte {
	return typedDataHash(receiptDomainSeparator, keccak(receiptTypeHash, uint256(uint64(p.Version)), str(p.Network),
		str(p.ResourceURL), str(p.Payer), uint256(uint64(p.IssuedAt)), str(p.Transaction)))
}

// signDigest is Ethereum's 65-byte r‖s‖v signature (v = 27 or 28), in 0x hex.
func signDigest(k *secp256k1.PrivateKey, digest []byte) string {
	compact := ecdsa.SignCompact(k, digest, false) // recovery byte first: 27 + recid
	sig := make([]byte, 65)
	copy(sig, compact[1:])
	sig[64] = compact[0]
	return "0x" + hex.EncodeToString(sig)
}

// recoverSigner is the address that made an Ethereum signature of digest.
func recoverSigner(digest []byte, sigHex string) (string, error) {
	sig, err := hex.DecodeString(strings.TrimPrefix(sigHex, "0x"))
	if err != nil || len(sig) != 65 {
		return "", errors.New("signature is not 65 bytes of 0x hex")
	}
	v := sig[64]
	if v < 27 {
		v += 27
	}
	if v != 27 && v != 28 {
		return "", fmt.Errorf("signature recovery byte %d is not 27 or 28", sig[64])
	}
	compact := append([]byte{v}, sig[:64]...)
	pub, _, err := ecdsa.RecoverCompact(compact, digest)
	if err != nil {
		return "", fmt.Errorf("signature does not recover a key: %w", err)
	}
	return address(pub), nil
}

// address is the EIP-55 checksummed Ethereum address of a public key.
func address(pub *secp256k1.PublicKey) string {
	h := keccak(pub.SerializeUncompressed()[1:])
	lower := hex.EncodeToString(h[12:])
	sum := hex.EncodeToString(keccak([]byte(lower)))
	out := []byte("0x" + lower)
	for i := range lower {
		if lower[i] >= 'a' && sum[i] >= '8' {
			out[2+i] = lower[i] - 32
		}
	}
	return string(out)
}
