package exact

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/peage/appliance/settle/x402"
)

// The separators of the real USDC deployments (x402.md §3.3): a wrong name or version gives
// signatures that never recover, so these are pinned.
func TestDomainSeparators(t *testing.T) {
	cases := []struct {
		name string
		d    Domain
		want string
	}{
		{"base", Domain{"USD Coin", "2", 8453, common.HexToAddress("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")}, "0x02fa7265e7c5d81118673727957699e4d68f74cd74b7db77da710fe8a2c7834f"},
		{"base sepolia", Domain{"USDC", "2", 84532, common.HexToAddress("0x036CbD53842c5426634e7929541eC2318f3dCF7e")}, "0x71f17a3b2ff373b803d70a5a07c046c1a2bc8e89c09ef722fcb047abe94c9818"},
	}
	for _, c := range cases {
		if got := c.d.Separator().Hex(); got != c.want {
			t.Errorf("%s: separator %s, want %s", c.name, got, c.want)
		}
	}
	if TransferTypeHash.Hex() != "0x7c7c6cdb67a18743f49ec6fa9b35f50d52ed05cbed4cc592e13b44501c1a2267" {
		t.Errorf("type hash %s", TransferTypeHash.Hex())
	}
}

type fakeChain struct {
	used    bool
	balance int64
}

func (f fakeChain) AuthorizationState(context.Context, common.Address, common.Address, common.Hash) (bool, error) {
	return f.used, nil
}
func (f fakeChain) BalanceOf(context.Context, common.Address, common.Address) (*big.Int, error) {
	return big.NewInt(f.balance), nil
}
func (fakeChain) IsValidSignature(context.Context, common.Address, common.Hash, []byte) (bool, error) {
	return false, nil
}

func TestVerifyLocal(t *testing.T) {
	key, _ := crypto.GenerateKey()
	now := time.Unix(1_800_000_000, 0)
	r := x402.PaymentRequirements{Scheme: "exact", Network: "eip155:8453", Amount: "10000", Asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
		PayTo: common.Address{9}.Hex(), MaxTimeoutSeconds: 60, Extra: &x402.Extra{Name: "USD Coin", Version: "2"}}
	fr := &x402.FacilitatorRequirements{PaymentRequirements: r}
	cases := []struct {
		name   string
		chain  fakeChain
		edit   func(p *x402.PaymentPayload)
		reason string
	}{
		{"valid", fakeChain{balance: 10000}, nil, ""},
		{"nonce used on chain", fakeChain{used: true, balance: 10000}, nil, x402.ReasonNonceUsed},
		{"balance short by one", fakeChain{balance: 9999}, nil, x402.ReasonInsufficientFunds},
		{"high-s signature", fakeChain{balance: 10000}, func(p *x402.PaymentPayload) {
			sig := common.FromHex(p.Payload.Signature)
			s := new(big.Int).SetBytes(sig[32:64])
			s.Sub(crypto.S256().Params().N, s)
			copy(sig[32:64], common.LeftPadBytes(s.Bytes(), 32))
			sig[64] ^= 1
			p.Payload.Signature = "0x" + common.Bytes2Hex(sig)
		}, x402.ReasonSignature},
		{"value not decimal", fakeChain{balance: 10000}, func(p *x402.PaymentPayload) { p.Payload.Authorization.Value = "0x10" }, x402.ReasonInvalidPayload},
		{"value with sign", fakeChain{balance: 10000}, func(p *x402.PaymentPayload) { p.Payload.Authorization.Value = "+10000" }, x402.ReasonInvalidPayload},
		{"from not an address", fakeChain{balance: 10000}, func(p *x402.PaymentPayload) { p.Payload.Authorization.From = "0x12" }, x402.ReasonInvalidPayload},
		{"signature not hex", fakeChain{balance: 10000}, func(p *x402.PaymentPayload) { p.Payload.Signature = "zz" }, x402.ReasonInvalidPayload},
		{"truncated signature", fakeChain{balance: 10000}, func(p *x402.PaymentPayload) { p.Payload.Signature = p.Payload.Signature[:60] }, x402.ReasonSignature},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := NewPayload(key, 2, &r, nil, now)
			if err != nil {
				t.Fatal(err)
			}
			if c.edit != nil {
				c.edit(p)
			}
			v := &Verifier{Reader: c.chain, Now: func() time.Time { return now }, ValidBeforeMargin: 6 * time.Second, Skew: 5 * time.Second}
			pay, bad, err := v.Verify(context.Background(), p, fr)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if bad != nil {
				got = bad.Reason
			}
			if got != c.reason {
				t.Fatalf("reason %q, want %q (%v)", got, c.reason, bad)
			}
			if c.reason == "" && pay.Payer() != crypto.PubkeyToAddress(key.PublicKey).Hex() {
				t.Fatalf("payer %s", pay.Payer())
			}
		})
	}
}

func TestV1AcceptsAtLeastThePrice(t *testing.T) {
	key, _ := crypto.GenerateKey()
	now := time.Unix(1_800_000_000, 0)
	r := x402.PaymentRequirements{Scheme: "exact", Network: "eip155:8453", Amount: "10001", Asset: common.Address{8}.Hex(),
		PayTo: common.Address{9}.Hex(), MaxTimeoutSeconds: 60, Extra: &x402.Extra{Name: "USD Coin", Version: "2"}}
	p, err := NewPayload(key, 1, &r, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	v := &Verifier{Reader: fakeChain{balance: 1 << 40}, Now: func() time.Time { return now }}
	for price, want := range map[string]string{"10000": "", "10001": "", "10002": x402.ReasonValueV1} {
		req := r
		req.Amount = ""
		fr := &x402.FacilitatorRequirements{PaymentRequirements: req, MaxAmountRequired: price}
		_, bad, err := v.Verify(context.Background(), p, fr)
		got := ""
		if bad != nil {
			got = bad.Reason
		}
		if err != nil || got != want {
			t.Errorf("price %s: reason %q err %v, want %q", price, got, err, want)
		}
	}
}

// barrierChain answers a read only once both of Verify's chain reads (nonce state and
// balance) are asked: a verifier that makes them one after the other never gets an answer.
type barrierChain struct {
	asked chan struct{} // one send per read
	both  chan struct{} // closed once both were asked
}

func (b *barrierChain) wait(ctx context.Context) error {
	b.asked <- struct{}{}
	select {
	case <-b.both:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *barrierChain) AuthorizationState(ctx context.Context, _, _ common.Address, _ common.Hash) (bool, error) {
	return false, b.wait(ctx)
}
func (b *barrierChain) BalanceOf(ctx context.Context, _, _ common.Address) (*big.Int, error) {
	return big.NewInt(1 << 40), b.wait(ctx)
}
func (*barrierChain) IsValidSignature(context.Context, common.Address, common.Hash, []byte) (bool, error) {
	return false, nil
}

// TestVerifyReadsTheChainAtOnce: the nonce state and the balance are asked together, so a
// verification on a remote RPC costs one round trip, not two.
func TestVerifyReadsTheChainAtOnce(t *testing.T) {
	key, _ := crypto.GenerateKey()
	now := time.Unix(1_800_000_000, 0)
	r := x402.PaymentRequirements{Scheme: "exact", Network: "eip155:8453", Amount: "10000", Asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
		PayTo: common.Address{9}.Hex(), MaxTimeoutSeconds: 60, Extra: &x402.Extra{Name: "USD Coin", Version: "2"}}
	p, err := NewPayload(key, 2, &r, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	b := &barrierChain{asked: make(chan struct{}, 2), both: make(chan struct{})}
	go func() { <-b.asked; <-b.asked; close(b.both) }()
	// Only a verifier that waits for one read before asking the other gets here: its wait
	// ends with the context instead of hanging the test.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v := &Verifier{Reader: b, Now: func() time.Time { return now }, ValidBeforeMargin: 6 * time.Second, Skew: 5 * time.Second}
	pay, bad, err := v.Verify(ctx, p, &x402.FacilitatorRequirements{PaymentRequirements: r})
	if err != nil || bad != nil || pay.Balance.Int64() != 1<<40 {
		t.Fatalf("verify with both reads asked at once: %v %v", err, bad)
	}
}

// TestRecheckTakesTheSignerAsRecorded: the settlement queue's Recheck applies Check's rules
// but takes the signer's kind from the ledger instead of recovering it again.
func TestRecheckTakesTheSignerAsRecorded(t *testing.T) {
	key, _ := crypto.GenerateKey()
	now := time.Now()
	r := x402.PaymentRequirements{Scheme: "exact", Network: "eip155:8453", Amount: "10000", Asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
		PayTo: common.Address{9}.Hex(), MaxTimeoutSeconds: 60, Extra: &x402.Extra{Name: "USD Coin", Version: "2"}}
	fr := &x402.FacilitatorRequirements{PaymentRequirements: r}
	v := &Verifier{Now: func() time.Time { return now }, ValidBeforeMargin: 6 * time.Second}
	p, err := NewPayload(key, 2, &r, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		recovered bool
	}{{"an ECDSA signer", true}, {"a wallet's signature", false}} {
		pay, bad := v.Recheck(p, fr, c.recovered)
		if bad != nil || pay.Recovered != c.recovered {
			t.Errorf("%s: %v, recovered %v", c.name, bad, pay != nil && pay.Recovered)
		}
	}
	late := &Verifier{Now: func() time.Time { return now.Add(time.Minute) }, ValidBeforeMargin: 6 * time.Second}
	if _, bad := late.Recheck(p, fr, true); bad == nil || bad.Reason != x402.ReasonValidBefore {
		t.Errorf("expired authorization rechecked: %v", bad)
	}
}
