package chain_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/routes/chain"
	"github.com/peage/appliance/api/upstream/chainrpc"
	"github.com/peage/appliance/api/upstream/chainrpc/testtoken"
	"github.com/peage/appliance/internal/testenv"
	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/devchain"
	"github.com/peage/appliance/settle/exact"
	"github.com/peage/appliance/settle/pay"
	"github.com/peage/appliance/settle/settletest"
	"github.com/peage/appliance/settle/x402"
)

// world is the appliance on the embedded chain: the settle daemon of `appliance dev`, a real
// verifying gate, and the chain routes reading the same chain over its loopback JSON-RPC.
type world struct {
	dev  *settle.Dev
	base string
	cfg  paywall.Config
	pay  *pay.Client
	cat  *catalog.Catalog
}

// newWorld starts the world; rpcURL overrides the chain endpoint the routes read.
func newWorld(t *testing.T, rpcURL string) *world { return newWorldWith(t, rpcURL, nil) }

// newWorldWith starts the world and lets more collaborators into the family's Parts, once the
// embedded chain runs.
func newWorldWith(t *testing.T, rpcURL string, more func(*settle.Dev, *chain.Parts)) *world {
	t.Helper()
	testenv.NeedsChain(t)
	dev, fc := settletest.StartDev(t)
	cfg := paywall.Config{Network: dev.Network, Asset: dev.Asset, PayTo: dev.PayTo, TokenName: dev.TokenName, TokenVersion: dev.TokenVersion, MaxTimeoutSeconds: 60}
	gate := paywall.New(cfg, paywall.Policy{Settlement: x402.ModeSync}, fc, paywall.GateOptions{})
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	cc := chainrpc.DefaultConfig()
	cc.RPC, cc.USDC, cc.RatePerSecond, cc.Burst, cc.Timeout = dev.RPCURL, dev.Asset, 1000, 1000, 5*time.Second
	if rpcURL != "" {
		cc.RPC = rpcURL
	}
	rc, err := chainrpc.New(cc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.Close)
	deps := chain.Parts{Client: rc}
	if more != nil {
		more(dev, &deps)
	}
	if err := chain.With(deps).Bind(cat); err != nil {
		t.Fatal(err)
	}
	h := apitest.Start(t, cat, apitest.Options{CheckShapes: true, Gate: gate, Pay: cfg})
	key, err := settle.LoadKey(dev.PayerKey)
	if err != nil {
		t.Fatal(err)
	}
	return &world{dev: dev, base: h.BaseURL, cfg: cfg, pay: &pay.Client{Key: key}, cat: cat}
}

// call makes a call the way an agent does: the day's free call if there is one, else paid.
func (w *world) call(t *testing.T, path string, params map[string]string) (map[string]any, *pay.Result) {
	t.Helper()
	res, err := w.pay.Do(context.Background(), pay.Request{Method: "GET", URL: w.base + path, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 200 {
		t.Fatalf("%s %v: %d %s", path, params, res.Status, res.Body)
	}
	var body map[string]any
	if err := json.Unmarshal(res.Body, &body); err != nil {
		t.Fatal(err)
	}
	// The paying client is not the harness's: the answer's shape is checked here.
	if lack := w.cat.ByPath(path).MissingFields(body); len(lack) > 0 {
		t.Errorf("%s: the answer lacks fields the spec names for it, or gives them another type: %s", path, strings.Join(lack, ", "))
	}
	return body, res
}

// get makes a call without paying.
func (w *world) get(t *testing.T, path string, params map[string]string, hdr map[string]string) (int, http.Header, map[string]any) {
	t.Helper()
	q := url.Values{}
	for k, v := range params {
		q.Set(k, v)
	}
	req, _ := http.NewRequest("GET", w.base+path+"?"+q.Encode(), nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var body map[string]any
	_ = json.Unmarshal(b, &body)
	return resp.StatusCode, resp.Header, body
}

func units(n int64, dec int64) *big.Int {
	return new(big.Int).Mul(big.NewInt(n), new(big.Int).Exp(big.NewInt(10), big.NewInt(dec), nil))
}

// expect compares the named fields of an answer, JSON-decoded, with what was done on chain.
func expect(t *testing.T, what string, got map[string]any, want map[string]any) {
	t.Helper()
	for k, v := range want {
		g, _ := json.Marshal(got[k])
		e, _ := json.Marshal(v)
		if string(g) != string(e) {
			t.Errorf("%s: %s = %s, want %s", what, k, g, e)
		}
	}
}

func TestChainRoutesOnTheEmbeddedChain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := newWorld(t, "")
	ch := w.dev.Chain
	d := testtoken.Deployer{B: ch.Client(), Key: ch.Deployer, ChainID: devchain.ChainID}
	deployer := crypto.PubkeyToAddress(ch.Deployer.PublicKey)
	hk, _ := crypto.GenerateKey()
	holder := crypto.PubkeyToAddress(hk.PublicKey)
	spender := common.HexToAddress("0x00000000000000000000000000000000000Aa11c")

	six, err := d.Token(ctx, "Six Decimals", "SIX", 6, units(1_000_000, 6))
	if err != nil {
		t.Fatal(err)
	}
	eighteen, err := d.Token(ctx, "Eighteen Decimals", "EIGHT", 18, units(21_000_000, 18))
	if err != nil {
		t.Fatal(err)
	}
	b32, err := d.Bytes32Token(ctx, "Bytes Token", "BYT", 18, units(500, 18))
	if err != nil {
		t.Fatal(err)
	}
	sixTx, err := d.Transfer(ctx, six, holder, big.NewInt(1_234_500_000)) // 1234.5 SIX
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Transfer(ctx, eighteen, holder, new(big.Int).Add(units(2, 18), big.NewInt(1))); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Transfer(ctx, b32, holder, units(3, 18)); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Approve(ctx, six, spender, big.NewInt(42_500_000)); err != nil {
		t.Fatal(err)
	}
	maxUint := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
	if _, err := d.Approve(ctx, eighteen, spender, maxUint); err != nil {
		t.Fatal(err)
	}

	// block: the chain's latest block, read just before.
	head, err := ch.Client().HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := w.call(t, "/v1/chain/block", nil)
	expect(t, "block", body, map[string]any{"chain": "dev", "chain_id": devchain.ChainID, "network": devchain.Network,
		"block_number": head.Number.Uint64(), "hash": head.Hash().Hex(), "gas_used": head.GasUsed, "timestamp": head.Time,
		"timestamp_iso": time.Unix(int64(head.Time), 0).UTC().Format(time.RFC3339), "transactions": 1,
		"base_fee_wei": head.BaseFee.String()})

	// gas: the spec's table, the estimates from gas_price_wei, the gate's free_first_call.
	body, _ = w.call(t, "/v1/chain/gas", nil)
	expect(t, "gas", body, map[string]any{"chain": "dev", "chain_id": devchain.ChainID, "network": devchain.Network,
		"this_route": "/v1/chain/gas", "free_first_call": map[string]any{"granted": true, "note": body["free_first_call"].(map[string]any)["note"]}})
	price, ok := new(big.Int).SetString(body["gas_price_wei"].(string), 10)
	if !ok || price.Sign() <= 0 {
		t.Fatalf("gas_price_wei %v", body["gas_price_wei"])
	}
	est := body["estimates"].(map[string]any)
	for name, gas := range map[string]int64{"eth_transfer": 21000, "erc20_transfer": 65000, "usdc_transfer_x402": 80000} {
		wei := new(big.Int).Mul(price, big.NewInt(gas))
		expect(t, "gas estimate "+name, est[name].(map[string]any), map[string]any{"gas": gas, "wei": wei.String(), "eth": chainrpc.FormatUnits(wei, 18)})
	}
	for _, k := range []string{"gas_price_gwei", "base_fee_gwei", "priority_fee_gwei", "block_number"} {
		if _, ok := body[k].(float64); !ok {
			t.Errorf("gas: %s = %v, want a number", k, body[k])
		}
	}
	if next, _ := body["next"].(map[string]any); next["balance"] != "/v1/chain/balance?address=0x4200000000000000000000000000000000000006" || next["ens"] != nil {
		t.Errorf("gas: next = %v (only available routes, with their example)", body["next"])
	}
	// The second call of the day is paid, and the gate says so.
	body, res := w.call(t, "/v1/chain/gas", nil)
	if res.Receipt == nil || body["free_first_call"].(map[string]any)["granted"] != false {
		t.Errorf("second gas call: receipt %+v, free_first_call %v", res.Receipt, body["free_first_call"])
	}

	// balance: ETH and USDC always, then the tokens asked, amounts from each contract's decimals.
	body, _ = w.call(t, "/v1/chain/balance", map[string]string{"address": strings.ToLower(holder.Hex()),
		"tokens": strings.Join([]string{six.Hex(), strings.ToLower(eighteen.Hex()), b32.Hex()}, ",")})
	expect(t, "balance", body, map[string]any{"address": holder.Hex(), "chain_id": devchain.ChainID,
		"native": map[string]any{"symbol": "ETH", "decimals": 18, "amount": "0", "amount_atomic": "0"},
		"tokens": []map[string]any{
			{"address": w.dev.Asset, "symbol": "USDC", "decimals": 6, "amount": "0", "amount_atomic": "0"},
			{"address": six.Hex(), "symbol": "SIX", "decimals": 6, "amount": "1234.5", "amount_atomic": "1234500000"},
			{"address": eighteen.Hex(), "symbol": "EIGHT", "decimals": 18, "amount": "2.000000000000000001", "amount_atomic": "2000000000000000001"},
			{"address": b32.Hex(), "symbol": "BYT", "decimals": 18, "amount": "3", "amount_atomic": "3000000000000000000"},
		}})
	// The payer's balance, paid: its ETH and USDC as the chain has them before this call settles.
	payer := common.HexToAddress(w.dev.Payer)
	eth, err := ch.Client().BalanceAt(ctx, payer, nil)
	if err != nil {
		t.Fatal(err)
	}
	usdc, err := ch.Balance(ctx, payer)
	if err != nil {
		t.Fatal(err)
	}
	body, res = w.call(t, "/v1/chain/balance", map[string]string{"address": w.dev.Payer})
	if res.Receipt == nil {
		t.Fatal("second balance call was not paid")
	}
	expect(t, "payer balance", body, map[string]any{
		"native": map[string]any{"symbol": "ETH", "decimals": 18, "amount": chainrpc.FormatUnits(eth, 18), "amount_atomic": eth.String()},
		"tokens": []map[string]any{{"address": w.dev.Asset, "symbol": "USDC", "decimals": 6, "amount": chainrpc.FormatUnits(usdc, 6), "amount_atomic": usdc.String()}}})

	// allowance: a finite one in USDC-like units and an unlimited one.
	body, _ = w.call(t, "/v1/chain/allowance", map[string]string{"owner": deployer.Hex(), "spender": spender.Hex(), "token": six.Hex()})
	expect(t, "allowance", body, map[string]any{"owner": deployer.Hex(), "spender": spender.Hex(), "amount": "42.5", "amount_atomic": "42500000",
		"unlimited": false, "token": map[string]any{"address": six.Hex(), "symbol": "SIX", "decimals": 6}})
	body, _ = w.call(t, "/v1/chain/allowance", map[string]string{"owner": deployer.Hex(), "spender": spender.Hex(), "token": eighteen.Hex()})
	expect(t, "unlimited allowance", body, map[string]any{"amount_atomic": maxUint.String(), "unlimited": true})

	// token: a standard one and the bytes32 one.
	body, _ = w.call(t, "/v1/chain/token", map[string]string{"address": six.Hex()})
	expect(t, "token", body, map[string]any{"address": six.Hex(), "name": "Six Decimals", "symbol": "SIX", "decimals": 6,
		"total_supply": "1000000", "total_supply_atomic": "1000000000000", "text_encoding": "string", "chain_id": devchain.ChainID})
	body, res = w.call(t, "/v1/chain/token", map[string]string{"address": b32.Hex()})
	expect(t, "bytes32 token", body, map[string]any{"name": "Bytes Token", "symbol": "BYT", "decimals": 18, "total_supply": "500", "text_encoding": "bytes32"})
	if res.Receipt == nil || res.Receipt.Transaction == "" {
		t.Fatalf("second token call was not settled: %+v", res.Receipt)
	}
	settlement := res.Receipt.Transaction

	// tx: a plain ERC-20 transfer, then the x402 settlement of the paid call just made.
	body, _ = w.call(t, "/v1/chain/tx", map[string]string{"hash": sixTx.Hex()})
	expect(t, "transfer tx", body, map[string]any{"hash": sixTx.Hex(), "status": "success", "success": true, "from": deployer.Hex(),
		"to": six.Hex(), "method": "transfer", "x402": false, "x402_settlements": []any{},
		"transfers": []map[string]any{{"standard": "erc20", "token": six.Hex(), "symbol": "SIX", "decimals": 6, "from": deployer.Hex(),
			"to": holder.Hex(), "amount": "1234.5", "amount_atomic": "1234500000", "log_index": 0}}})
	body, _ = w.call(t, "/v1/chain/tx", map[string]string{"hash": settlement})
	expect(t, "settlement tx", body, map[string]any{"status": "success", "x402": true, "from": ch.HotAddress().Hex(), "to": w.dev.Asset})
	s, _ := body["x402_settlements"].([]any)
	if len(s) != 1 {
		t.Fatalf("settlements %v", body["x402_settlements"])
	}
	expect(t, "settlement", s[0].(map[string]any), map[string]any{"token": w.dev.Asset, "symbol": "USDC", "payer": w.dev.Payer,
		"pay_to": w.dev.PayTo, "amount": "0.005", "amount_atomic": "5000"})
	if n, _ := s[0].(map[string]any)["nonce"].(string); len(n) != 66 {
		t.Errorf("settlement nonce %q", n)
	}

	// What only the chain can refuse is found out once paid (the free calls are used), and
	// refused without a charge: a hash it does not know, an account that is no token.
	before, err := ch.Balance(ctx, payer)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path   string
		params map[string]string
		status int
		param  string
	}{
		{"/v1/chain/tx", map[string]string{"hash": "0x" + strings.Repeat("ab", 32)}, 404, ""},
		{"/v1/chain/token", map[string]string{"address": holder.Hex()}, 404, ""},
		{"/v1/chain/balance", map[string]string{"address": holder.Hex(), "tokens": deployer.Hex()}, 400, "tokens"},
		{"/v1/chain/allowance", map[string]string{"owner": holder.Hex(), "spender": spender.Hex(), "token": holder.Hex()}, 400, "token"},
	} {
		if st, _, _ := w.get(t, c.path, c.params, nil); st != 402 {
			t.Errorf("%s %v unpaid: %d, want 402", c.path, c.params, st)
		}
		res, err := w.pay.Do(ctx, pay.Request{URL: w.base + c.path, Params: c.params})
		if err != nil || res.Status != c.status || res.Receipt != nil || res.Paid == nil {
			t.Fatalf("%s %v paid: %v %+v", c.path, c.params, err, res)
		}
		var e struct{ Error struct{ Param string } }
		if json.Unmarshal(res.Body, &e) != nil || e.Error.Param != c.param {
			t.Errorf("%s %v: %s, want param %q", c.path, c.params, res.Body, c.param)
		}
	}
	if after, err := ch.Balance(ctx, payer); err != nil || after.Cmp(before) != 0 {
		t.Fatalf("payer charged for refused calls: %s → %s (%v)", before, after, err)
	}
}

// Bad input is refused before any payment is asked, naming the parameter; all-lowercase and
// all-uppercase addresses carry no checksum and are accepted.
func TestBadInputBeforeAny402(t *testing.T) {
	w := newWorld(t, "")
	const good = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
	flipped := "0x833589fcD6eDb6E08f4c7C32D4f71b54bdA02913"
	var eleven []string
	for i := range 11 {
		eleven = append(eleven, "0x"+strings.Repeat("0", 39)+string(rune('0'+i%10)))
	}
	for _, c := range []struct {
		path   string
		params map[string]string
		param  string // "" when accepted
	}{
		{"/v1/chain/balance", map[string]string{"address": flipped}, "address"},
		{"/v1/chain/balance", map[string]string{"address": good, "tokens": flipped}, "tokens"},
		{"/v1/chain/balance", map[string]string{"address": good, "tokens": strings.Join(eleven, ",")}, "tokens"},
		{"/v1/chain/balance", map[string]string{"address": "0x1234"}, "address"},
		{"/v1/chain/allowance", map[string]string{"owner": good, "spender": flipped}, "spender"},
		{"/v1/chain/allowance", map[string]string{"owner": good}, "spender"},
		{"/v1/chain/token", map[string]string{"address": flipped}, "address"},
		{"/v1/chain/tx", map[string]string{"hash": "0x1234"}, "hash"},
		{"/v1/chain/abi", map[string]string{"address": flipped}, "address"},
		{"/v1/chain/address", map[string]string{"address": flipped}, "address"},
		{"/v1/chain/ens", map[string]string{"address": flipped}, "address"},
		{"/v1/chain/ens", map[string]string{"name": "alice.com"}, "name"},
		{"/v1/chain/ens", map[string]string{"name": "ab--c.eth"}, "name"},
		{"/v1/chain/address", map[string]string{"address": good, "token": flipped}, "token"},
		{"/v1/chain/address", map[string]string{"address": strings.ToLower(good)}, ""},
		{"/v1/chain/abi", map[string]string{"address": good, "chain_id": "0"}, "chain_id"},
		{"/v1/chain/abi", map[string]string{"address": good, "chain_id": "base"}, "chain_id"},
		{"/v1/chain/tx", map[string]string{"hash": "0x" + strings.Repeat("g", 64)}, "hash"},
		{"/v1/chain/token", map[string]string{"address": strings.ToLower(good)}, ""},
		{"/v1/chain/token", map[string]string{"address": "0x" + strings.ToUpper(good[2:])}, ""},
	} {
		hdr := map[string]string{}
		if c.param == "" {
			// A well-formed call would be served free once: send a payment that cannot be
			// read, which the gate looks at only once the input has passed.
			hdr[x402.HeaderPaymentSignature] = "not-a-payment"
		}
		st, h, body := w.get(t, c.path, c.params, hdr)
		e, _ := body["error"].(map[string]any)
		if c.param == "" {
			// The legacy 402 body names the payment's fault in its error string.
			if st != 402 || !strings.HasPrefix(fmt.Sprint(body["error"]), "invalid_payload") {
				t.Errorf("%s %v: %d %v, want the input accepted and the payment refused", c.path, c.params, st, body)
			}
			continue
		}
		if st != 400 || e["param"] != c.param || h.Get(x402.HeaderPaymentRequired) != "" {
			t.Errorf("%s %v: %d %v, want 400 naming %s and no challenge", c.path, c.params, st, body, c.param)
		}
	}
}

// An endpoint that cannot be reached is 502 naming the upstream, and a paid call is not
// charged: the payer's USDC does not move and no receipt comes back.
func TestRPCDownIs502NotCharged(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String()
	_ = l.Close()
	w := newWorld(t, dead)
	ctx := context.Background()
	payer := common.HexToAddress(w.dev.Payer)
	before, err := w.dev.Chain.Balance(ctx, payer)
	if err != nil {
		t.Fatal(err)
	}
	r := w.cfg.Requirements(w.cat.ByPath("/v1/chain/block"))
	p, err := exact.NewPayload(w.pay.Key, 2, &r, &x402.ResourceInfo{URL: w.base + "/v1/chain/block"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	enc, err := x402.Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, hdr := range []map[string]string{nil, {x402.HeaderPaymentSignature: enc}} {
		st, h, body := w.get(t, "/v1/chain/block", nil, hdr)
		errBody, _ := body["error"].(map[string]any)
		if st != 502 || errBody["upstream"] != chainrpc.Name || h.Get(x402.HeaderPaymentResponse) != "" {
			t.Errorf("payment %v: %d %v, want 502 naming %s, no receipt", hdr != nil, st, body, chainrpc.Name)
		}
	}
	after, err := w.dev.Chain.Balance(ctx, payer)
	if err != nil {
		t.Fatal(err)
	}
	if before.Cmp(after) != 0 {
		t.Fatalf("payer charged: %s → %s", before, after)
	}
}

// Without a configured endpoint the routes are listed but answer 503 before any 402.
func TestUnconfiguredIs503Before402(t *testing.T) {
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	_, cerr := chainrpc.New(chainrpc.DefaultConfig())
	if err := chain.With(chain.Parts{ClientErr: cerr}).Bind(cat); err != nil {
		t.Fatal(err)
	}
	h := apitest.Start(t, cat, apitest.Options{CheckShapes: true})
	for _, path := range []string{"/v1/chain/block", "/v1/chain/gas", "/v1/chain/token?address=0x833589fcd6edb6e08f4c7c32d4f71b54bda02913",
		"/v1/chain/abi?address=0x833589fcd6edb6e08f4c7c32d4f71b54bda02913", "/v1/chain/ens?name=vitalik.eth",
		"/v1/chain/address?address=0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"} {
		resp, err := http.Get(h.BaseURL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 503 || resp.Header.Get(x402.HeaderPaymentRequired) != "" {
			t.Errorf("%s: %d, want 503 without a challenge", path, resp.StatusCode)
		}
	}
}
