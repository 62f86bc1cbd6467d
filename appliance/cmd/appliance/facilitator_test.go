package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/internal/freeport"
	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/devchain"
	"github.com/peage/appliance/settle/exact"
	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/pay"
	"github.com/peage/appliance/settle/x402"
)

// officialFacilitator runs settle/npm/facilitator.mjs (the official @x402/core facilitator
// with @x402/evm's exact scheme, cataloguing like a Bazaar facilitator) on addr against the
// dev chain, signing with key, until the test ends or stop is called.
func officialFacilitator(t *testing.T, addr string, info devChainInfo, key string, extra ...string) (stop func()) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed; run ops/setup.sh")
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "..", "settle", "npm", "facilitator.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := strings.Cut(addr, ":")
	cmd := exec.Command(node, append([]string{script, port, info.RPCURL, strconv.Itoa(devchain.ChainID), key}, extra...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	stop = func() {
		_ = cmd.Process.Kill()
		<-done
	}
	t.Cleanup(stop)
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "listening") {
		stop()
		t.Fatalf("facilitator.mjs: %q %v\n%s", line, err, stderr.String())
	}
	return stop
}

// usdcBalance reads who's test USDC balance from the dev chain.
func usdcBalance(t *testing.T, info devChainInfo, who string) *big.Int {
	t.Helper()
	data := "0x70a08231" + strings.Repeat("0", 24) + strings.TrimPrefix(strings.ToLower(who), "0x")
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "eth_call",
		"params": []any{map[string]string{"to": info.Asset, "data": data}, "latest"}})
	resp, err := http.Post(info.RPCURL, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Result string `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	b, ok := new(big.Int).SetString(strings.TrimPrefix(r.Result, "0x"), 16)
	if !ok {
		t.Fatalf("balanceOf: %q", r.Result)
	}
	return b
}

// devWithFacilitator starts appliance dev settling through a remote facilitator on a free
// loopback address (settlement, when set, is the [settlement] mode, with a 5 s settle timeout),
// and returns the stack, its chain, the facilitator's address (not started) and the demo
// payer's key, hex (the facilitator signs with it) and loaded (the client pays with it).
func devWithFacilitator(t *testing.T, settlement string) (d devStack, info devChainInfo, facAddr, key string, payer *ecdsa.PrivateKey) {
	t.Helper()
	facAddr = freeport.Addr(t)
	cfgPath := filepath.Join(t.TempDir(), "appliance.toml")
	conf := fmt.Sprintf("[payment]\nfacilitator_url = %q\n", "http://"+facAddr)
	if settlement != "" {
		conf += fmt.Sprintf("[settlement]\nsettlement = %q\nsettle_timeout_seconds = 5\n", settlement)
	}
	if err := os.WriteFile(cfgPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	d = startDev(t, "--config", cfgPath)
	devSettle(t, d.state, http.MethodGet, "/dev/chain", &info)
	keyHex, err := os.ReadFile(filepath.Join(d.state, "dev-payer.key"))
	if err != nil {
		t.Fatal(err)
	}
	payer, err = settle.LoadKey(filepath.Join(d.state, "dev-payer.key"))
	if err != nil {
		t.Fatal(err)
	}
	return d, info, facAddr, strings.TrimSpace(string(keyHex)), payer
}

// TestRemoteFacilitator: with payment.facilitator_url naming a standard x402 v2 facilitator
// (the official TypeScript one on loopback, against the embedded chain), `appliance pay`'s
// call is verified and settled through it by the settle daemon, which keeps the payment in
// the box's own ledger (settled, with the transaction the client got, in the revenue), and
// the facilitator catalogues the route from the payment's Bazaar declaration, input schema
// included. Synchronous settlement, so that the failures below are at settlement: the
// facilitator gone between verification and settlement is a 503 with nothing delivered,
// taken or owed (released in the ledger); lost while settling, nothing is delivered or taken
// and the ledger never counts it settled.
func TestRemoteFacilitator(t *testing.T) {
	d, info, facAddr, key, payer := devWithFacilitator(t, "sync")
	base := "http://" + d.api
	ctx := context.Background()
	tva := pay.Request{URL: base + "/v1/fr/tva", Params: map[string]string{"siren": "542065479"}}

	stop := officialFacilitator(t, facAddr, info, key)
	before := usdcBalance(t, info, info.PayTo)
	res, err := (&pay.Client{Key: payer}).Do(ctx, tva)
	if err != nil || res.Status != 200 || res.Receipt == nil || !res.Receipt.Success || res.Receipt.Transaction == "" {
		t.Fatalf("paid call through the remote facilitator: %v %+v %s", err, res, res.Body)
	}
	if got := new(big.Int).Sub(usdcBalance(t, info, info.PayTo), before); got.Cmp(big.NewInt(5_000)) != 0 {
		t.Fatalf("payee received %s, want the price 5000", got)
	}
	resp, err := http.Get("http://" + facAddr + "/discovery/resources")
	if err != nil {
		t.Fatal(err)
	}
	var listed struct {
		Items []struct {
			ResourceURL   string `json:"resourceUrl"`
			Method        string `json:"method"`
			ServiceName   string `json:"serviceName"`
			DiscoveryInfo struct {
				Input struct {
					QueryParams map[string]any `json:"queryParams"`
				} `json:"input"`
			} `json:"discoveryInfo"`
			Extensions map[string]struct {
				Schema map[string]any `json:"schema"`
			} `json:"extensions"`
		} `json:"items"`
	}
	err = json.NewDecoder(resp.Body).Decode(&listed)
	resp.Body.Close()
	if err != nil || len(listed.Items) != 1 {
		t.Fatalf("catalogued: %v %+v", err, listed)
	}
	item := listed.Items[0]
	schema, _ := json.Marshal(item.Extensions["bazaar"].Schema)
	if item.ResourceURL != base+"/v1/fr/tva" || item.Method != "GET" || item.ServiceName != "peage" ||
		item.DiscoveryInfo.Input.QueryParams["siren"] != "542065479" || !strings.Contains(string(schema), `"siren"`) {
		t.Fatalf("catalogued entry %+v schema %s", item, schema)
	}

	// The box's own ledger holds the payment, settled by the transaction the client was given,
	// as `appliance ledger` shows it.
	pays := recentPayments(t, d.state)
	if len(pays) != 1 || pays[0].Status != ledger.Settled || pays[0].Tx != res.Receipt.Transaction || pays[0].Amount != 5_000 || pays[0].Route != "fr.tva" {
		t.Fatalf("ledger after the paid call: %+v (receipt %+v)", pays, res.Receipt)
	}
	var shown bytes.Buffer
	if err := ledgerTo(ctx, &shown, []string{"-state-dir", d.state}); err != nil || !strings.Contains(shown.String(), res.Receipt.Transaction) {
		t.Fatalf("appliance ledger: %v\n%s", err, shown.String())
	}

	// Gone between verification and settlement: the settlement never reached it, so the
	// payment is released: nothing delivered, nothing taken, nothing owed.
	stop()
	officialFacilitator(t, facAddr, info, key, "--exit-after-verify")
	payerAddr := res.Receipt.Payer
	payerBefore, payeeBefore := usdcBalance(t, info, payerAddr), usdcBalance(t, info, info.PayTo)
	res, err = (&pay.Client{Key: payer}).Do(ctx, tva)
	if err != nil || res.Status != http.StatusServiceUnavailable || res.Receipt != nil || strings.Contains(string(res.Body), "tva") ||
		!strings.Contains(string(res.Body), x402.ReasonSettlementNotSent) {
		t.Fatalf("call whose facilitator was gone: %v %+v %s", err, res, res.Body)
	}
	pays = recentPayments(t, d.state)
	if len(pays) != 2 || pays[0].Status != ledger.Released {
		t.Fatalf("ledger after the call whose facilitator was gone: %+v", pays)
	}

	// Lost while settling (the request sent, no answer): nothing delivered, nothing taken;
	// the ledger keeps the outcome open (never settled, never owed as delivered) for the chain
	// to decide, and marks it undelivered.
	officialFacilitator(t, facAddr, info, key, "--crash-on-settle")
	res, err = (&pay.Client{Key: payer}).Do(ctx, tva)
	if err != nil || res.Status != http.StatusServiceUnavailable || res.Receipt != nil || strings.Contains(string(res.Body), "tva") {
		t.Fatalf("call whose facilitator was lost: %v %+v %s", err, res, res.Body)
	}
	if payerAfter, payeeAfter := usdcBalance(t, info, payerAddr), usdcBalance(t, info, info.PayTo); payerAfter.Cmp(payerBefore) != 0 || payeeAfter.Cmp(payeeBefore) != 0 {
		t.Fatalf("money moved for an undelivered call: payer %s → %s, payee %s → %s", payerBefore, payerAfter, payeeBefore, payeeAfter)
	}
	pays = recentPayments(t, d.state)
	if len(pays) != 3 || pays[0].Status == ledger.Settled || pays[0].Status == ledger.Queued || !pays[0].Undelivered {
		t.Fatalf("ledger after the call whose facilitator was lost: %+v", pays)
	}
	var revenue []ledger.RevenueRow
	devSettle(t, d.state, http.MethodGet, "/revenue", &revenue)
	if len(revenue) != 1 || revenue[0].Amount != 5_000 {
		t.Fatalf("revenue: %+v, want the one settled call", revenue)
	}
}

// recentPayments reads the dev settle daemon's ledger, newest first.
func recentPayments(t *testing.T, state string) []ledger.Summary {
	t.Helper()
	var pays []ledger.Summary
	devSettle(t, state, http.MethodGet, "/payments?limit=10", &pays)
	return pays
}

// TestRemoteFacilitatorSettlementPending: a remote facilitator that answers settlement_pending
// (the official one, waiting only 300 ms for a receipt: it has broadcast the transaction and
// not seen it mined) is never taken for a success nor for a failure: the call is asked to
// settle once more, answered 503 while the outcome is unknown, and a retry with the same
// payment identifier and payload gets the result once the transaction is mined; never a 402
// that would make the client pay again, and the payer is charged once.
func TestRemoteFacilitatorSettlementPending(t *testing.T) {
	d, info, facAddr, key, payer := devWithFacilitator(t, "sync")
	officialFacilitator(t, facAddr, info, key, "--confirmation-timeout-ms=300")

	tva := "http://" + d.api + "/v1/fr/tva?siren=542065479"
	resp, err := http.Get(tva)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	pr, err := x402.DecodeRequired(resp.Header.Get(x402.HeaderPaymentRequired))
	if err != nil || len(pr.Accepts) == 0 {
		t.Fatalf("challenge: %v", err)
	}
	p, err := exact.NewPayload(payer, 2, &pr.Accepts[0], &pr.Resource, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	x402.SetPaymentIdentifier(p, x402.NewPaymentIdentifier())
	header, err := x402.Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	from := p.Payload.Authorization.From
	payerBefore, payeeBefore := usdcBalance(t, info, from), usdcBalance(t, info, info.PayTo)
	var statuses []int
	for attempt := 0; ; attempt++ {
		req, _ := http.NewRequest(http.MethodGet, tva, nil)
		req.Header.Set(x402.HeaderPaymentSignature, header)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		statuses = append(statuses, resp.StatusCode)
		if resp.StatusCode == http.StatusOK {
			break
		}
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), x402.ReasonSettlementPending) || attempt == 20 {
			t.Fatalf("attempts %v: the last answered %d %s", statuses, resp.StatusCode, body)
		}
		time.Sleep(time.Second) // the embedded chain mines the broadcast transaction meanwhile
	}
	price := big.NewInt(5_000)
	paid := new(big.Int).Sub(payerBefore, usdcBalance(t, info, from))
	received := new(big.Int).Sub(usdcBalance(t, info, info.PayTo), payeeBefore)
	if paid.Cmp(price) != 0 || received.Cmp(price) != 0 {
		t.Fatalf("attempts %v: payer paid %s, payee received %s, want %s once", statuses, paid, received, price)
	}
	t.Logf("attempts: %v", statuses)
}

// TestRemoteFacilitatorOptimistic: with the default optimistic settlement, a call within the
// exposure caps is delivered against the verified payment (the receipt says so, without a
// transaction yet), and the settle daemon's queue then settles it through the remote
// facilitator: the ledger shows it settled with the facilitator's transaction, and the payee
// holds the price.
func TestRemoteFacilitatorOptimistic(t *testing.T) {
	d, info, facAddr, key, payer := devWithFacilitator(t, "")
	officialFacilitator(t, facAddr, info, key)
	before := usdcBalance(t, info, info.PayTo)
	res, err := (&pay.Client{Key: payer}).Do(context.Background(), pay.Request{URL: "http://" + d.api + "/v1/fr/tva", Params: map[string]string{"siren": "542065479"}})
	if err != nil || res.Status != 200 || res.Receipt == nil || !res.Receipt.Success {
		t.Fatalf("optimistic call: %v %+v", err, res)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		pays := recentPayments(t, d.state)
		if len(pays) != 1 || (pays[0].Status != ledger.Queued && pays[0].Status != ledger.Broadcast && pays[0].Status != ledger.Settled) {
			t.Fatalf("ledger: %+v", pays)
		}
		if pays[0].Status == ledger.Settled {
			if pays[0].Tx == "" {
				t.Fatalf("settled without the facilitator's transaction: %+v", pays[0])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the queue never settled the optimistic payment: %+v", pays[0])
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got := new(big.Int).Sub(usdcBalance(t, info, info.PayTo), before); got.Cmp(big.NewInt(5_000)) != 0 {
		t.Fatalf("payee received %s, want the price 5000", got)
	}
}
