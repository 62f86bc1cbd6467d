package batch

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/peage/appliance/settle/exact"
	"github.com/peage/appliance/settle/x402"
)

func TestParseRefusesMalformed(t *testing.T) {
	good := x402.ChannelConfig{
		Payer: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", PayerAuthorizer: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
		Receiver: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", ReceiverAuthorizer: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
		Token: "0x5FbDB2315678afecb367f032d93F642f64180aa3", WithdrawDelay: 900, Salt: "0x00000000000000000000000000000000000000000000000000000000000000a7",
	}
	if _, bad := ParseConfig(&good, x402.ReasonBatchVoucherPayload); bad != nil {
		t.Fatalf("good config refused: %v", bad)
	}
	for _, tc := range []struct {
		name   string
		edit   func(c *x402.ChannelConfig)
		reason string
	}{
		{"short payer", func(c *x402.ChannelConfig) { c.Payer = "0x7099" }, x402.ReasonBatchVoucherPayload},
		{"payer without 0x", func(c *x402.ChannelConfig) { c.Payer = c.Payer[2:] }, x402.ReasonBatchVoucherPayload},
		{"token not hex", func(c *x402.ChannelConfig) { c.Token = "0xZZbDB2315678afecb367f032d93F642f64180aa3" }, x402.ReasonBatchVoucherPayload},
		{"short salt", func(c *x402.ChannelConfig) { c.Salt = "0xa7" }, x402.ReasonBatchVoucherPayload},
		{"delay beyond uint40", func(c *x402.ChannelConfig) { c.WithdrawDelay = 1 << 40 }, x402.ReasonBatchDelayOutOfRange},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := good
			tc.edit(&c)
			if _, bad := ParseConfig(&c, x402.ReasonBatchVoucherPayload); bad == nil || bad.Reason != tc.reason {
				t.Fatalf("got %v, want %s", bad, tc.reason)
			}
		})
	}
	for _, tc := range []struct {
		name string
		v    x402.SignedVoucher
	}{
		{"amount beyond uint128", x402.SignedVoucher{ChannelID: "0x" + hash64, MaxClaimableAmount: "340282366920938463463374607431768211456", Signature: "0x00"}},
		{"negative amount", x402.SignedVoucher{ChannelID: "0x" + hash64, MaxClaimableAmount: "-1", Signature: "0x00"}},
		{"decimal amount", x402.SignedVoucher{ChannelID: "0x" + hash64, MaxClaimableAmount: "1.5", Signature: "0x00"}},
		{"short channel id", x402.SignedVoucher{ChannelID: "0xab", MaxClaimableAmount: "1", Signature: "0x00"}},
		{"signature not hex", x402.SignedVoucher{ChannelID: "0x" + hash64, MaxClaimableAmount: "1", Signature: "zz"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, bad := ParseVoucher(&tc.v); bad == nil || bad.Reason != x402.ReasonBatchVoucherPayload {
				t.Fatalf("got %v", bad)
			}
		})
	}
}

const hash64 = "55550f0227f9331c6191ed6b7a7dee0dbf3eada82b74451d38cec228cfe583aa"

// TestRecoverOnlyContractForm: the contract takes v 27/28 and low s only, so a voucher in any
// other form would verify here and then fail its claim; it must be refused here too.
func TestRecoverOnlyContractForm(t *testing.T) {
	key, _ := crypto.GenerateKey()
	who := crypto.PubkeyToAddress(key.PublicKey)
	digest := VoucherDigest(1337, common.Hash{1}, big.NewInt(5000))
	sig, err := exact.SignDigest(key, digest)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := Recover(digest, sig); !ok || got != who {
		t.Fatal("a canonical signature did not recover")
	}
	raw := append([]byte(nil), sig...)
	raw[64] -= 27
	highS := append([]byte(nil), sig...)
	s := new(big.Int).Sub(crypto.S256().Params().N, new(big.Int).SetBytes(sig[32:64]))
	s.FillBytes(highS[32:64])
	highS[64] ^= 1 // 27 <-> 28
	for name, bad := range map[string][]byte{"v 0/1": raw, "high s": highS, "64 bytes": sig[:64]} {
		if _, ok := Recover(digest, bad); ok {
			t.Errorf("%s recovered", name)
		}
	}
}
