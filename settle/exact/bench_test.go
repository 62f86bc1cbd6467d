package exact

import (
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/peage/appliance/settle/x402"
)

// benchPayment is a v2 payment signed for Base's USDC, as a client sends it.
func benchPayment(b *testing.B) (*x402.PaymentPayload, *x402.FacilitatorRequirements, *Verifier) {
	b.Helper()
	key, err := crypto.GenerateKey()
	if err != nil {
		b.Fatal(err)
	}
	r := x402.PaymentRequirements{Scheme: "exact", Network: "eip155:8453", Amount: "1000", Asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
		PayTo: common.Address{9}.Hex(), MaxTimeoutSeconds: 60, Extra: &x402.Extra{Name: "USD Coin", Version: "2"}}
	p, err := NewPayload(key, 2, &r, &x402.ResourceInfo{URL: "https://example.test/v1/x"}, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	return p, &x402.FacilitatorRequirements{PaymentRequirements: r}, &Verifier{ValidBeforeMargin: 6 * time.Second, Skew: 5 * time.Second}
}

// benchChecked is benchPayment as Check leaves it.
func benchChecked(b *testing.B) *Payment {
	b.Helper()
	p, r, v := benchPayment(b)
	pay, bad := v.Check(p, r)
	if bad != nil {
		b.Fatal(bad)
	}
	return pay
}

// BenchmarkCheck is the CPU an exact payment costs its reservation before any chain read:
// parsing, the EIP-712 digest and the signer's recovery (issue 33, item 2).
func BenchmarkCheck(b *testing.B) {
	p, r, v := benchPayment(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, bad := v.Check(p, r); bad != nil {
			b.Fatal(bad)
		}
	}
}

// BenchmarkSigner is one signer recovery of an EOA's 65-byte signature, against the way it was
// made before (crypto.SigToPub, which also parses the key and checks it is on the curve),
// measured in the same run.
func BenchmarkSigner(b *testing.B) {
	pay := benchChecked(b)
	b.Run("Signer", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := Signer(pay.Digest, pay.Signature); !ok {
				b.Fatal("no signer")
			}
		}
	})
	b.Run("SigToPub", func(b *testing.B) {
		sig := append([]byte(nil), pay.Signature...)
		sig[64] -= 27
		b.ReportAllocs()
		for b.Loop() {
			pub, err := crypto.SigToPub(pay.Digest[:], sig)
			if err != nil || crypto.PubkeyToAddress(*pub) != pay.Auth.From {
				b.Fatal("no signer")
			}
		}
	})
}

// BenchmarkRecheck is what the settlement queue checks of a payment reserved before: Check
// without the signer's recovery.
func BenchmarkRecheck(b *testing.B) {
	p, r, v := benchPayment(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, bad := v.Recheck(p, r, true); bad != nil {
			b.Fatal(bad)
		}
	}
}

// BenchmarkDigest is the EIP-712 digest of an authorization (its domain separator cached).
func BenchmarkDigest(b *testing.B) {
	pay := benchChecked(b)
	b.ReportAllocs()
	for b.Loop() {
		Digest(pay.Domain, &pay.Auth)
	}
}
