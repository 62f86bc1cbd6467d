package batch_test

import (
	"encoding/hex"
	"encoding/json"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/peage/appliance/internal/testenv"
	"github.com/peage/appliance/settle/batch"
	"github.com/peage/appliance/settle/devchain"
	"github.com/peage/appliance/settle/exact"
	"github.com/peage/appliance/settle/usdc"
	"github.com/peage/appliance/settle/x402"
)

// official is what settle/npm/batch-sign.mjs prints: the official @x402/evm batch-settlement
// client's channel config, channel id, deposit payload and vouchers.
type official struct {
	ChannelConfig x402.ChannelConfig   `json:"channelConfig"`
	ChannelID     string               `json:"channelId"`
	Deposit       x402.BatchPayload    `json:"deposit"`
	Vouchers      []x402.SignedVoucher `json:"vouchers"`
}

func officialSign(t *testing.T, h *harness, deposit uint64, cumulative ...uint64) *official {
	t.Helper()
	testenv.NeedsNode(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed; run ops/setup.sh")
	}
	npm := filepath.Join("..", "npm")
	if _, err := os.Stat(filepath.Join(npm, "node_modules", "@x402", "evm", "package.json")); err != nil {
		t.Fatal("@x402/evm is not installed in settle/npm; run ops/setup.d/x402.sh")
	}
	args := []string{filepath.Join(npm, "batch-sign.mjs"), hex.EncodeToString(crypto.FromECDSA(h.chain.Payer)), devchain.Network,
		h.chain.USDC.Hex(), h.recv.Hex(), h.cfg.ReceiverAuthorizer.Hex(), strconv.Itoa(batch.MinWithdrawDelay), strconv.FormatUint(deposit, 10)}
	for _, c := range cumulative {
		args = append(args, strconv.FormatUint(c, 10))
	}
	out, err := exec.Command(node, args...).Output()
	if err != nil {
		t.Fatalf("batch-sign.mjs: %v", err)
	}
	var o official
	if err := json.Unmarshal(out, &o); err != nil {
		t.Fatalf("batch-sign.mjs printed %s: %v", out, err)
	}
	return &o
}

// TestOfficialClientInterop: what the official client signs verifies here byte for byte (channel
// id, one ECDSA recovery per voucher, the deposit authorization), and the chain accepts it: its
// deposit lands in the project's contract and its last voucher is claimed.
func TestOfficialClientInterop(t *testing.T) {
	h := newHarness(t)
	cumulative := []uint64{5000, 10_000, 15_000}
	o := officialSign(t, h, 1_000_000, cumulative...)

	cfg, bad := batch.ParseConfig(&o.ChannelConfig, x402.ReasonBatchVoucherPayload)
	if bad != nil {
		t.Fatal(bad)
	}
	if cfg.Payer != h.chain.PayerAddress() || cfg.PayerAuthorizer != cfg.Payer || cfg.Receiver != h.recv {
		t.Fatalf("unexpected config from the client: %+v", o.ChannelConfig)
	}
	id := batch.ChannelID(devchain.ChainID, cfg)
	if id.Hex() != o.ChannelID {
		t.Fatalf("channel id: Go %s, official client %s", id.Hex(), o.ChannelID)
	}
	for i, w := range o.Vouchers {
		v, bad := batch.ParseVoucher(&w)
		if bad != nil {
			t.Fatal(bad)
		}
		if v.MaxClaimableAmount.Uint64() != cumulative[i] {
			t.Fatalf("voucher %d is for %s", i, v.MaxClaimableAmount)
		}
		if wallet, bad := batch.CheckVoucher(devchain.ChainID, cfg, v); bad != nil || wallet {
			t.Fatalf("official voucher %d: wallet=%v %v", i, wallet, bad)
		}
		// The same signature over any other amount, or for another channel, is refused.
		v.MaxClaimableAmount = new(big.Int).Add(v.MaxClaimableAmount, big.NewInt(1))
		if _, bad := batch.CheckVoucher(devchain.ChainID, cfg, v); bad == nil || bad.Reason != x402.ReasonBatchVoucherSignature {
			t.Fatalf("voucher %d with a raised amount: %v", i, bad)
		}
		other := *cfg
		other.Salt[0] ^= 1
		v.MaxClaimableAmount.SetUint64(cumulative[i])
		if _, bad := batch.CheckVoucher(devchain.ChainID, &other, v); bad == nil || bad.Reason != x402.ReasonBatchChannelIDMismatch {
			t.Fatalf("voucher %d under another config: %v", i, bad)
		}
	}

	// The deposit payload: its first voucher and its ReceiveWithAuthorization.
	if o.Deposit.Type != x402.BatchDeposit || o.Deposit.Voucher == nil || o.Deposit.Voucher.MaxClaimableAmount != "5000" {
		t.Fatalf("deposit payload: %+v", o.Deposit)
	}
	d, bad := batch.ParseDeposit(o.Deposit.Deposit, cfg, id)
	if bad != nil {
		t.Fatal(bad)
	}
	token := exact.Domain{Name: devchain.TokenName, Version: devchain.TokenVersion, ChainID: devchain.ChainID, Contract: h.chain.USDC}
	if signer, ok := batch.Recover(d.Digest(token), d.Signature); !ok || signer != cfg.Payer {
		t.Fatalf("deposit authorization recovers to %s (%v), want the payer", signer.Hex(), ok)
	}

	// On chain: the client's deposit, then a claim of its last voucher and a sweep.
	if _, err := h.send(h.chain.Hot, h.abi.PackDeposit(bound(cfg), d.Amount, batch.ERC3009CollectorAddress, d.CollectorData())); err != nil {
		t.Fatalf("deposit of the official client's authorization: %v", err)
	}
	last, _ := batch.ParseVoucher(&o.Vouchers[len(o.Vouchers)-1])
	row := usdc.X402BatchSettlementVoucherClaim{
		Voucher:   usdc.X402BatchSettlementVoucher{Channel: bound(cfg), MaxClaimableAmount: last.MaxClaimableAmount},
		Signature: last.Signature, TotalClaimed: last.MaxClaimableAmount,
	}
	entry := batch.ClaimEntry{ChannelID: id, MaxClaimableAmount: last.MaxClaimableAmount, TotalClaimed: last.MaxClaimableAmount}
	if _, err := h.claim(h.auth, []usdc.X402BatchSettlementVoucherClaim{row}, []batch.ClaimEntry{entry}); err != nil {
		t.Fatalf("claim of the official client's voucher: %v", err)
	}
	h.must(h.chain.Hot, h.abi.PackSettle(h.recv, h.chain.USDC))
	if got := h.tokenBalance(h.recv); got != 15_000 {
		t.Fatalf("receiver holds %d, want 15000", got)
	}
}
