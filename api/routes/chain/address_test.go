package chain_test

import (
	"context"
	"crypto/ecdsa"
	"math/big"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/peage/appliance/api/routes/chain"
	"github.com/peage/appliance/api/upstream/blockscout"
	"github.com/peage/appliance/api/upstream/chainrpc/testtoken"
	"github.com/peage/appliance/api/upstream/upstreamtest"
	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/devchain"
	"github.com/peage/appliance/settle/pay"
)

func newHolder(t *testing.T) (*ecdsa.PrivateKey, common.Address) {
	t.Helper()
	k, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k, crypto.PubkeyToAddress(k.PublicKey)
}

// The address route on the embedded chain, from its logs: transfers made here and the x402
// settlements of calls paid to the appliance itself.
func TestAddressHistoryOnTheEmbeddedChain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := newWorld(t, "")
	ch := w.dev.Chain
	d := testtoken.Deployer{B: ch.Client(), Key: ch.Deployer, ChainID: devchain.ChainID}
	deployer := crypto.PubkeyToAddress(ch.Deployer.PublicKey)
	usdc := common.HexToAddress(w.dev.Asset)
	_, holder := newHolder(t)
	if err := ch.Mint(ctx, deployer, 10_000_000); err != nil {
		t.Fatal(err)
	}
	for _, v := range []int64{2_500_000, 1_250_000} {
		if _, err := d.Transfer(ctx, usdc, holder, big.NewInt(v)); err != nil {
			t.Fatal(err)
		}
	}
	six, err := d.Token(ctx, "Six Decimals", "SIX", 6, big.NewInt(1_000_000_000))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Transfer(ctx, six, holder, big.NewInt(7_000_000)); err != nil {
		t.Fatal(err)
	}
	// Paid calls: each second call of a route is settled by an EIP-3009 transfer of the payer.
	settled := 0
	for _, p := range []string{"/v1/chain/block", "/v1/chain/block", "/v1/chain/gas", "/v1/chain/gas"} {
		if _, res := w.call(t, p, nil); res.Receipt != nil {
			settled++
		}
	}
	if settled != 2 {
		t.Fatalf("%d settlements, want 2", settled)
	}

	// The holder: two USDC transfers in from the deployer, nothing out, no x402.
	body, res := w.call(t, "/v1/chain/address", map[string]string{"address": strings.ToLower(holder.Hex())})
	if res.Receipt != nil {
		settled++
	}
	expect(t, "holder", body, map[string]any{"address": holder.Hex(), "chain_id": devchain.ChainID, "source": "rpc_logs", "truncated": false,
		"truncation": nil, "transfers_in_window": 2, "token": map[string]any{"address": usdc.Hex(), "symbol": "USDC", "decimals": 6}})
	expect(t, "holder incoming", body["incoming"].(map[string]any), map[string]any{"count": 2, "total": "3.75", "total_atomic": "3750000",
		"distinct_senders": 1, "x402_settlements": 0})
	expect(t, "holder outgoing", body["outgoing"].(map[string]any), map[string]any{"count": 0, "total": "0", "distinct_recipients": 0, "last_at": nil})
	list := body["transfers"].([]any)
	if len(list) != 2 {
		t.Fatalf("transfers %v", list)
	}
	expect(t, "newest transfer", list[0].(map[string]any), map[string]any{"direction": "in", "counterparty": deployer.Hex(), "amount": "1.25", "x402": false})
	expect(t, "older transfer", list[1].(map[string]any), map[string]any{"amount": "2.5", "amount_atomic": "2500000"})
	if body["incoming"].(map[string]any)["last_at"] == nil {
		t.Error("holder: incoming.last_at is null")
	}

	// Another token, by its address.
	body, res = w.call(t, "/v1/chain/address", map[string]string{"address": holder.Hex(), "token": six.Hex()})
	if res.Receipt != nil {
		settled++
	}
	expect(t, "holder SIX", body["incoming"].(map[string]any), map[string]any{"count": 1, "total": "7"})

	// The payer: funded by the faucet (a mint, from the zero address), then its settlements.
	payer := common.HexToAddress(w.dev.Payer)
	paidBefore := settled
	body, res = w.call(t, "/v1/chain/address", map[string]string{"address": payer.Hex()})
	if res.Receipt != nil {
		settled++
	}
	expect(t, "payer incoming", body["incoming"].(map[string]any), map[string]any{"count": 1, "total": "1000", "x402_settlements": 0})
	expect(t, "payer outgoing", body["outgoing"].(map[string]any), map[string]any{"count": paidBefore, "total_atomic": big.NewInt(int64(5000 * paidBefore)).String(),
		"distinct_recipients": 1, "x402_settlements": paidBefore})
	if l := body["transfers"].([]any); len(l) != paidBefore+1 || l[0].(map[string]any)["x402"] != true || l[0].(map[string]any)["counterparty"] != w.dev.PayTo {
		t.Errorf("payer transfers %v", l)
	}

	// The appliance's own address: every settlement so far, this call's excepted.
	body, _ = w.call(t, "/v1/chain/address", map[string]string{"address": w.dev.PayTo})
	expect(t, "pay_to incoming", body["incoming"].(map[string]any), map[string]any{"count": settled, "x402_settlements": settled,
		"distinct_senders": 1, "total_atomic": big.NewInt(int64(5000 * settled)).String()})
}

// Without an indexer, a window of logs shorter than 60 days is declared.
func TestAddressHistoryTruncationIsDeclared(t *testing.T) {
	w := newWorldWith(t, "", func(_ *settle.Dev, d *chain.Parts) { d.LogsMaxBlocks = 2 })
	for _, p := range []string{"/v1/chain/block", "/v1/chain/block", "/v1/chain/gas", "/v1/chain/gas"} {
		w.call(t, p, nil) // two settlements, the two newest blocks
	}
	body, _ := w.call(t, "/v1/chain/address", map[string]string{"address": w.dev.Payer})
	win := body["window"].(map[string]any)
	if body["truncated"] != true || !strings.Contains(body["truncation"].(string), "last 2 blocks") || win["to_block"].(float64)-win["from_block"].(float64) != 1 {
		t.Fatalf("truncated %v, truncation %v, window %v", body["truncated"], body["truncation"], win)
	}
	// The faucet's mint is older than the window: not counted; the settlements are.
	expect(t, "payer incoming", body["incoming"].(map[string]any), map[string]any{"count": 0})
	expect(t, "payer outgoing", body["outgoing"].(map[string]any), map[string]any{"count": 2, "x402_settlements": 2})
}

// With the indexer, the answer is Blockscout's (its recorded tokentx example), and the 60 days
// count from the route's clock.
func TestAddressHistoryFromTheIndexer(t *testing.T) {
	const holder, mkr = "0x21e21ba085289f81a86921de890eed30f1ad2375", "0x9f8f72aa9304c8b593d555f12ef6589cc3a579a2"
	var now atomic.Int64
	now.Store(time.Date(2018, 8, 1, 0, 0, 0, 0, time.UTC).Unix())
	ix := upstreamtest.New(t)
	ix.Expect("/api", upstreamtest.Query("module", "account", "action", "tokentx", "address", holder, "contractaddress", mkr, "sort", "desc", "page", "1", "offset", "100"),
		upstreamtest.File(t, "../../upstream/blockscout/testdata/tokentx.json"))
	w := newWorldWith(t, "", func(_ *settle.Dev, d *chain.Parts) {
		d.Indexer = blockscout.New(ix.Client(t, blockscout.Name))
		d.Now = func() time.Time { return time.Unix(now.Load(), 0) }
	})
	params := map[string]string{"address": holder, "token": mkr}
	body, _ := w.call(t, "/v1/chain/address", params)
	expect(t, "indexer", body, map[string]any{"source": "indexer", "truncated": false, "transfers_in_window": 1,
		"token": map[string]any{"address": common.HexToAddress(mkr).Hex(), "symbol": "MKR", "decimals": 18}})
	expect(t, "indexer incoming", body["incoming"].(map[string]any), map[string]any{"count": 1, "total": "10", "total_atomic": "10000000000000000000",
		"distinct_senders": 1, "x402_settlements": 0, "last_at": "2018-07-20T11:42:26Z"})
	expect(t, "indexer transfer", body["transfers"].([]any)[0].(map[string]any), map[string]any{"hash": "0xd65b788c610949704a5f9aac2228c7c777434dfe11c863a12306f57fcbd8cdbb",
		"block_number": 5997843, "direction": "in", "counterparty": common.HexToAddress("0x4e83362442b8d1bec281594cea3050c8eb01311c").Hex(), "amount": "10"})

	// Four months later the same transfer is out of the window (a fresh, paid call: the
	// cache keys on the arguments, so a different token spelling asks again).
	now.Store(time.Date(2018, 12, 1, 0, 0, 0, 0, time.UTC).Unix())
	params["token"] = strings.ToUpper(mkr[2:])
	params["token"] = "0x" + params["token"]
	body, _ = w.call(t, "/v1/chain/address", params)
	expect(t, "indexer later", body["incoming"].(map[string]any), map[string]any{"count": 0, "last_at": nil})

	// The indexer failing is a 502 naming it, not charged.
	ix.Expect("/api", upstreamtest.Query("module", "account", "action", "tokentx", "address", holder, "contractaddress", strings.ToLower(w.dev.Asset), "sort", "desc", "page", "1", "offset", "100"),
		upstreamtest.ServerError())
	res, err := w.pay.Do(context.Background(), pay.Request{URL: w.base + "/v1/chain/address", Params: map[string]string{"address": holder}})
	if err != nil || res.Status != 502 || res.Receipt != nil || !strings.Contains(string(res.Body), blockscout.Name) {
		t.Fatalf("indexer down: %v %+v %s", err, res, res.Body)
	}
}
