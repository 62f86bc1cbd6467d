package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/batch"
	"github.com/peage/appliance/settle/devchain"
	"github.com/peage/appliance/settle/x402"
)

// batchRun is what settle/npm/batch-client.mjs prints.
type batchRun struct {
	Results []struct {
		Op      string                    `json:"op"`
		Status  int                       `json:"status"`
		Body    string                    `json:"body"`
		Error   string                    `json:"error"`
		Receipt *x402.BatchSettleResponse `json:"receipt"`
	} `json:"results"`
	Exchanges []batchExchange `json:"exchanges"`
}

type batchExchange struct {
	URL     string                    `json:"url"`
	Status  int                       `json:"status"`
	Type    string                    `json:"type"`
	Max     string                    `json:"max"`
	Deposit string                    `json:"deposit"`
	Header  string                    `json:"header"`
	Error   string                    `json:"error"`
	Receipt *x402.BatchSettleResponse `json:"receipt"`
}

// String leaves the payment header out of failure messages.
func (x batchExchange) String() string {
	x.Header = ""
	b, _ := json.Marshal(x)
	return string(b)
}

// paid are the exchanges that carried a payment.
func (r *batchRun) paid() []batchExchange {
	var out []batchExchange
	for _, x := range r.Exchanges {
		if x.Type != "" {
			out = append(out, x)
		}
	}
	return out
}

type devChainInfo struct {
	RPCURL             string `json:"rpc_url"`
	Asset              string `json:"asset"`
	PayTo              string `json:"pay_to"`
	ReceiverAuthorizer string `json:"receiver_authorizer"`
}

// devSettle calls the dev settle socket (its /dev/* endpoints).
func devSettle(t *testing.T, state, method, path string, out any) {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", filepath.Join(state, "settle.sock"))
	}}}
	req, _ := http.NewRequest(method, "http://settle"+path, nil)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || json.Unmarshal(b, out) != nil {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
}

func runBatchClient(t *testing.T, info devChainInfo, key string, steps ...map[string]any) *batchRun {
	t.Helper()
	script, err := os.ReadFile(filepath.Join("..", "..", "..", "settle", "npm", "batch-client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	arg, _ := json.Marshal(map[string]any{"rpc": info.RPCURL, "chainId": devchain.ChainID, "key": key, "asset": info.Asset,
		"cap": "1000000", "steps": steps})
	// Some 200 exchanges, each verified against the chain: minutes on a loaded machine.
	stdout, stderr, err := runNodeFor(t, 8*time.Minute, string(script), nil, string(arg))
	if err != nil {
		t.Fatalf("batch-client.mjs: %v\nstdout %.2000s\nstderr %s", err, stdout, stderr)
	}
	var run batchRun
	if err := json.Unmarshal([]byte(stdout), &run); err != nil {
		t.Fatalf("batch-client.mjs printed %.2000s: %v", stdout, err)
	}
	return &run
}

// TestDevBatchSettlement: the official @x402/evm batch-settlement client pays calls against
// `appliance dev`: one deposit, then one voucher per call; a failed call (its upstream answers
// 503) leaves the channel as it was; a voucher below or above the expected cumulative amount
// gets the corrective 402 and the client recovers; a replayed voucher is refused; two
// concurrent requests on one channel are never both charged; one claim and one sweep put
// exactly the sum of the prices in the payee's wallet; a cooperative refund returns the rest.
func TestDevBatchSettlement(t *testing.T) {
	var banCalls atomic.Int32
	ban := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		banCalls.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable) // the geocoder down: an empty 503
	}))
	t.Cleanup(ban.Close)
	cfgPath := filepath.Join(t.TempDir(), "appliance.toml")
	// The background claimer waits a day: the test's own claim round (POST /dev/claim) is the
	// one that claims.
	conf := fmt.Sprintf("[upstream.override.ban]\nbase_url = %q\n[settle]\nclaim_interval_seconds = 86400\nclaim_withdraw_margin_seconds = 86490\n", ban.URL)
	if err := os.WriteFile(cfgPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDev(t, "--config", cfgPath, "--allow-egress", strings.TrimPrefix(ban.URL, "http://"))
	var info devChainInfo
	devSettle(t, d.state, http.MethodGet, "/dev/chain", &info)
	keyHex, err := os.ReadFile(filepath.Join(d.state, "dev-payer.key"))
	if err != nil {
		t.Fatal(err)
	}
	key := strings.TrimSpace(string(keyHex))
	base := "http://" + d.api
	tva := base + "/v1/fr/tva?siren=542065479"
	geocode := base + "/v1/fr/geocode?q=8%20bd%20du%20port%20amiens"
	const price = 5_000

	// The 402 offers both schemes at the catalog's price, with the dev settle's authorizer.
	resp, err := http.Get(tva)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	raw, _ := base64.StdEncoding.DecodeString(resp.Header.Get(x402.HeaderPaymentRequired))
	var challenge struct {
		Accepts []x402.BatchRequirements `json:"accepts"`
	}
	if err := json.Unmarshal(raw, &challenge); err != nil || len(challenge.Accepts) != 2 || challenge.Accepts[0].Scheme != x402.SchemeExact ||
		challenge.Accepts[1].Scheme != x402.SchemeBatchSettlement || challenge.Accepts[1].Amount != strconv.Itoa(price) ||
		challenge.Accepts[1].Extra.ReceiverAuthorizer != info.ReceiverAuthorizer {
		t.Fatalf("challenge %s", raw)
	}

	run := runBatchClient(t, info, key,
		map[string]any{"op": "pay", "url": tva, "n": 100},
		map[string]any{"op": "pay", "url": geocode, "n": 1},
		map[string]any{"op": "pay", "url": tva, "n": 1},
		map[string]any{"op": "skew", "url": tva, "delta": "-5000"},
		map[string]any{"op": "pay", "url": tva, "n": 1},
		map[string]any{"op": "skew", "url": tva, "delta": "10000"},
		map[string]any{"op": "pay", "url": tva, "n": 1},
	)
	paid := run.paid()
	// 100 calls: one deposit, then 99 vouchers, each for the charged amount plus the price.
	for i, x := range paid[:100] {
		want := "voucher"
		if i == 0 {
			want = "deposit"
		}
		if x.Status != 200 || x.Type != want || x.Max != strconv.Itoa((i+1)*price) || x.Receipt == nil || !x.Receipt.Success ||
			x.Receipt.Extra == nil || x.Receipt.Extra.ChargedAmount != strconv.Itoa(price) ||
			x.Receipt.Extra.ChannelState.ChargedCumulativeAmount != strconv.Itoa((i+1)*price) {
			t.Fatalf("paid call %d: %v", i, x)
		}
		if (i == 0) != (x.Receipt.Transaction != "") || (i > 0 && x.Receipt.Amount != "") {
			t.Fatalf("paid call %d receipt: %+v", i, x.Receipt)
		}
	}
	if paid[0].Deposit != "1000000" || paid[0].Receipt.Amount != "1000000" {
		t.Fatalf("deposit %v (the 402's minDeposit is 1 USDC)", paid[0])
	}
	// The failed call: its voucher is not charged, and the next call uses the same amount.
	rest := paid[100:]
	if rest[0].Status < 500 || rest[0].Max != strconv.Itoa(101*price) || rest[0].Receipt != nil || banCalls.Load() == 0 {
		t.Fatalf("failed call %v (geocoder asked %d times)", rest[0], banCalls.Load())
	}
	if rest[1].Status != 200 || rest[1].Max != strconv.Itoa(101*price) {
		t.Fatalf("call after the failure %v", rest[1])
	}
	// Below, then above: the corrective 402, then the same call paid at the right amount.
	for i, wrong := range []int{101 * price, 105 * price} {
		bad, good := rest[2+2*i], rest[3+2*i]
		right := strconv.Itoa((102 + i) * price)
		if bad.Status != 402 || bad.Error != x402.ReasonBatchCumulativeMismatch || bad.Max != strconv.Itoa(wrong) {
			t.Fatalf("voucher for %d: %v", wrong, bad)
		}
		if good.Status != 200 || good.Max != right || good.Receipt.Extra.ChannelState.ChargedCumulativeAmount != right {
			t.Fatalf("after the corrective 402: %v", good)
		}
	}
	for _, r := range run.Results {
		if r.Op == "pay" && r.Status != 200 && !strings.Contains(r.Body, "upstream") && r.Status != 502 {
			t.Fatalf("a call failed: %+v", r)
		}
	}
	charged := 103 * price

	// A replayed voucher is refused with the corrective 402, and charges nothing.
	last := rest[len(rest)-1]
	if code, reason := sendPayment(t, tva, last.Header); code != 402 || reason != x402.ReasonBatchCumulativeMismatch {
		t.Fatalf("replayed voucher: %d %s", code, reason)
	}

	// Two requests at once with the same next voucher: one is served, the other refused (it
	// waited for the channel, then its amount was no longer the next one). One charge.
	next := resign(t, last.Header, key, charged+price)
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _ = sendPayment(t, tva, next)
		}()
	}
	wg.Wait()
	if !(codes[0] == 200 && codes[1] == 402 || codes[0] == 402 && codes[1] == 200) {
		t.Fatalf("concurrent requests on one channel answered %v", codes)
	}
	charged += price

	// One claim, one sweep: the payee holds exactly the sum of the prices.
	var claim struct {
		Channels     int    `json:"channels"`
		Claimed      string `json:"claimed"`
		ClaimTx      string `json:"claim_tx"`
		Swept        string `json:"swept"`
		SweepTx      string `json:"sweep_tx"`
		PayToBalance string `json:"pay_to_balance"`
	}
	devSettle(t, d.state, http.MethodPost, "/dev/claim", &claim)
	sum := strconv.Itoa(charged)
	if claim.Channels != 1 || claim.Claimed != sum || claim.Swept != sum || claim.ClaimTx == "" || claim.SweepTx == "" || claim.PayToBalance != sum {
		t.Fatalf("claim round %+v, want %s claimed, swept and held by the payee", claim, sum)
	}

	// A new client process (its channel state recovered from the chain) asks a cooperative
	// refund: the rest of the deposit comes back, the route's work is not run.
	refund := runBatchClient(t, info, key, map[string]any{"op": "refund", "url": tva})
	r := refund.Results[0]
	if r.Error != "" || r.Receipt == nil || !r.Receipt.Success || r.Receipt.Amount != strconv.Itoa(1_000_000-charged) || r.Receipt.Transaction == "" {
		t.Fatalf("refund %+v", refund)
	}
}

// sendPayment sends one request with a PAYMENT-SIGNATURE and returns the status and, for a 402,
// the challenge's error.
func sendPayment(t *testing.T, url, header string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set(x402.HeaderPaymentSignature, header)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	resp.Body.Close()
	if resp.StatusCode != 402 {
		return resp.StatusCode, ""
	}
	raw, _ := base64.StdEncoding.DecodeString(resp.Header.Get(x402.HeaderPaymentRequired))
	var pr struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(raw, &pr)
	return 402, pr.Error
}

// resign is a voucher payment like header's, for another cumulative amount, signed by the payer.
func resign(t *testing.T, header, keyHex string, max int) string {
	t.Helper()
	p, err := x402.DecodeBatchPayment(header)
	if err != nil {
		t.Fatal(err)
	}
	key, err := settle.LoadKey(writeKey(t, keyHex))
	if err != nil {
		t.Fatal(err)
	}
	sig, err := batch.SignVoucher(key, devchain.ChainID, common.HexToHash(p.Payload.Voucher.ChannelID), big.NewInt(int64(max)))
	if err != nil {
		t.Fatal(err)
	}
	p.Payload.Type, p.Payload.Deposit = x402.BatchVoucher, nil
	p.Payload.Voucher.MaxClaimableAmount, p.Payload.Voucher.Signature = strconv.Itoa(max), "0x"+fmt.Sprintf("%x", sig)
	b, _ := json.Marshal(p)
	return base64.StdEncoding.EncodeToString(bytes.TrimSpace(b))
}

func writeKey(t *testing.T, keyHex string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(path, []byte(keyHex), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
