package batch

import (
	"crypto/ecdsa"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	gethsecp256k1 "github.com/ethereum/go-ethereum/crypto/secp256k1"

	"github.com/peage/appliance/settle/exact"
)

// secp256k1Impl names the secp256k1 go-ethereum signs and recovers with in this build, read
// from the curve its crypto package hands out: with cgo it is libsecp256k1's (crypto/secp256k1),
// without, a wrapper around decred's pure Go one. The shipped binary is built with cgo
// (ops/release.sh); a build without a C compiler silently is not.
func secp256k1Impl() string {
	if _, ok := crypto.S256().(*gethsecp256k1.BitCurve); ok {
		return "libsecp256k1"
	}
	return "decred_purego"
}

func benchVoucher(b *testing.B) (key *ecdsa.PrivateKey, digest common.Hash, sig []byte) {
	b.Helper()
	key, err := crypto.GenerateKey()
	if err != nil {
		b.Fatal(err)
	}
	channel, ceiling := common.Hash{7}, big.NewInt(5_000)
	if sig, err = SignVoucher(key, 8453, channel, ceiling); err != nil {
		b.Fatal(err)
	}
	return key, VoucherDigest(8453, channel, ceiling), sig
}

// BenchmarkRecover is one voucher's signer recovery, which every voucher and every exact
// payment costs settle (issue 33). It runs under the name of this build's implementation, so
// that `CGO_ENABLED=0 go test -run XXX -bench Recover ./settle/batch/` and the same with
// CGO_ENABLED=1 compare a build without cgo with the shipped one (docs/gas.md).
func BenchmarkRecover(b *testing.B) {
	key, digest, sig := benchVoucher(b)
	signer := crypto.PubkeyToAddress(key.PublicKey)
	b.Run(secp256k1Impl(), func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if got, ok := Recover(digest, sig); !ok || got != signer {
				b.Fatalf("recovered %s, %v; signed by %s", got, ok, signer)
			}
		}
	})
}

// BenchmarkSign is one signature over a digest, as settle makes for each settlement
// transaction and signed receipt, named as BenchmarkRecover is.
func BenchmarkSign(b *testing.B) {
	key, digest, sig := benchVoucher(b)
	if got, ok := Recover(digest, sig); !ok || got != crypto.PubkeyToAddress(key.PublicKey) {
		b.Fatalf("the signature recovers %s, %v", got, ok)
	}
	b.Run(secp256k1Impl(), func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := exact.SignDigest(key, digest); err != nil {
				b.Fatal(err)
			}
		}
	})
}
