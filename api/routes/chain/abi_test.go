package chain_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/peage/appliance/api/routes/chain"
	"github.com/peage/appliance/api/upstream/chainrpc/testtoken"
	"github.com/peage/appliance/api/upstream/sourcify"
	"github.com/peage/appliance/api/upstream/upstreamtest"
	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/devchain"
	"github.com/peage/appliance/settle/pay"
)

// sourcifyAnswer is Sourcify's recorded full answer (see the connector's PROVENANCE) reduced
// to the fields the connector asks for, about addr on chainID, with abi as its ABI.
func sourcifyAnswer(t *testing.T, chainID int64, addr common.Address, name string, abi []byte) http.Handler {
	t.Helper()
	b, err := os.ReadFile("../../upstream/sourcify/testdata/contract_full.json")
	if err != nil {
		t.Fatal(err)
	}
	var full map[string]json.RawMessage
	if err := json.Unmarshal(b, &full); err != nil {
		t.Fatal(err)
	}
	out := map[string]json.RawMessage{}
	for _, k := range []string{"match", "creationMatch", "runtimeMatch", "verifiedAt", "matchId", "compilation", "proxyResolution"} {
		out[k] = full[k]
	}
	var comp map[string]any
	_ = json.Unmarshal(full["compilation"], &comp)
	comp["name"] = name
	out["compilation"], _ = json.Marshal(comp)
	out["chainId"], _ = json.Marshal(fmt.Sprint(chainID))
	out["address"], _ = json.Marshal(addr.Hex())
	out["abi"] = abi
	body, _ := json.Marshal(out)
	return upstreamtest.Body(200, "application/json", body)
}

func TestABIFollowsTheProxyReadFromTheChain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	src := upstreamtest.New(t)
	w := newWorldWith(t, "", func(_ *settle.Dev, d *chain.Parts) { d.Sourcify = sourcify.New(src.Client(t, sourcify.Name)) })
	ch := w.dev.Chain
	d := testtoken.Deployer{B: ch.Client(), Key: ch.Deployer, ChainID: devchain.ChainID}
	token, err := d.Token(ctx, "Implementation", "IMP", 6, big.NewInt(1_000_000))
	if err != nil {
		t.Fatal(err)
	}
	implSlot := common.HexToHash("0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc")
	proxy, err := d.SlotProxy(ctx, implSlot, token)
	if err != nil {
		t.Fatal(err)
	}
	bare, err := d.Token(ctx, "Unverified", "UNV", 18, big.NewInt(1))
	if err != nil {
		t.Fatal(err)
	}
	abi, err := os.ReadFile("../../upstream/chainrpc/testtoken/TestToken.abi.json")
	if err != nil {
		t.Fatal(err)
	}
	q := upstreamtest.Query("fields", sourcify.Fields)
	path := func(a common.Address) string {
		return fmt.Sprintf("/server/v2/contract/%d/%s", devchain.ChainID, strings.ToLower(a.Hex()))
	}
	notVerified := upstreamtest.FileStatus(t, "../../upstream/sourcify/testdata/not_verified.json", 404)
	src.Expect(path(token), q, sourcifyAnswer(t, devchain.ChainID, token, "TestToken", abi))
	src.Expect(path(proxy), q, notVerified)
	src.Expect(path(bare), q, notVerified)
	chainID := fmt.Sprint(devchain.ChainID)

	// The proxy is unverified; its EIP-1967 slot names the token, whose verified ABI is answered.
	body, _ := w.call(t, "/v1/chain/abi", map[string]string{"address": strings.ToLower(proxy.Hex()), "chain_id": chainID})
	expect(t, "proxy", body, map[string]any{"address": proxy.Hex(), "chain_id": devchain.ChainID, "verified": false, "match": nil,
		"abi_of": token.Hex(), "abi_source": "implementation", "abi": json.RawMessage(abi), "source": "sourcify"})
	p, _ := body["proxy"].(map[string]any)
	expect(t, "proxy block", p, map[string]any{"type": "EIP1967", "implementation": token.Hex(), "detected_from": "chain",
		"implementation_verified": true, "contract_name": "TestToken", "match": "match", "compiler_version": "v0.8.12+commit.f00d7308"})
	fns := map[string]string{}
	for _, f := range body["functions"].([]any) {
		m := f.(map[string]any)
		fns[m["signature"].(string)] = m["selector"].(string)
	}
	for sig, sel := range map[string]string{"transfer(address,uint256)": "0xa9059cbb", "balanceOf(address)": "0x70a08231", "decimals()": "0x313ce567"} {
		if fns[sig] != sel {
			t.Errorf("functions: %s = %q, want %s (all: %v)", sig, fns[sig], sel, fns)
		}
	}
	events := fmt.Sprint(body["events"])
	if !strings.Contains(events, "Transfer(address,address,uint256)") || !strings.Contains(events, "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef") {
		t.Errorf("events: %v", body["events"])
	}

	// The implementation asked directly: verified, no proxy.
	body, _ = w.call(t, "/v1/chain/abi", map[string]string{"address": token.Hex(), "chain_id": chainID})
	expect(t, "implementation", body, map[string]any{"verified": true, "match": "match", "contract_name": "TestToken", "abi_of": token.Hex(),
		"abi_source": "contract", "proxy": nil, "language": "Solidity"})

	// Another chain than the RPC's: the proxy comes from Sourcify's own resolution (recorded
	// answer), and an implementation Sourcify has not verified leaves the proxy's ABI.
	const sepoliaProxy = "0xDFEBAd708F803af22e81044aD228Ff77C83C935c"
	src.Expect("/server/v2/contract/11155111/"+strings.ToLower(sepoliaProxy), q, upstreamtest.File(t, "../../upstream/sourcify/testdata/contract_proxy.json"))
	src.Expect("/server/v2/contract/11155111/0x751d7c0cf91a9b7704541b44e5ff7bec3d2caa6f", q, notVerified)
	body, _ = w.call(t, "/v1/chain/abi", map[string]string{"address": sepoliaProxy, "chain_id": "11155111"})
	expect(t, "sourcify proxy", body, map[string]any{"verified": true, "match": "exact_match", "abi_of": sepoliaProxy, "abi": []any{}, "chain": "eip155:11155111",
		"proxy": map[string]any{"type": "EIP1967Proxy", "implementation": "0x751D7C0Cf91a9b7704541b44E5fF7BeC3D2caA6F", "detected_from": "sourcify", "implementation_verified": false}})

	// Unverified and no proxy, an account without code, a chain Sourcify does not follow, and
	// Sourcify failing: refused, paid for nothing.
	src.Expect("/server/v2/contract/10/"+strings.ToLower(bare.Hex()), q, upstreamtest.JSON(400,
		`{"customCode":"unsupported_chain","message":"The chain with chainId 10 is not supported","errorId":"1ac6b91a-0605-4459-93dc-18f210a70192"}`))
	src.Expect("/server/v2/contract/137/"+strings.ToLower(bare.Hex()), q, upstreamtest.ServerError())
	payer := common.HexToAddress(w.dev.Payer)
	before, err := ch.Balance(ctx, payer)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		addr    common.Address
		chainID string
		status  int
		field   string // param or upstream named by the error
	}{
		{bare, chainID, 404, ""},
		{common.HexToAddress("0x00000000000000000000000000000000000B0b00"), chainID, 404, ""},
		{bare, "10", 400, "chain_id"},
		{bare, "137", 502, sourcify.Name},
	} {
		res, err := w.pay.Do(ctx, pay.Request{URL: w.base + "/v1/chain/abi", Params: map[string]string{"address": c.addr.Hex(), "chain_id": c.chainID}})
		if err != nil || res.Status != c.status || res.Receipt != nil {
			t.Fatalf("%s on %s: %v %+v", c.addr.Hex(), c.chainID, err, res)
		}
		var e struct {
			Error struct{ Param, Upstream string }
		}
		if json.Unmarshal(res.Body, &e) != nil || e.Error.Param+e.Error.Upstream != c.field {
			t.Errorf("%s on %s: %s, want %q named", c.addr.Hex(), c.chainID, res.Body, c.field)
		}
	}
	if after, err := ch.Balance(ctx, payer); err != nil || after.Cmp(before) != 0 {
		t.Fatalf("payer charged for a 404: %s → %s (%v)", before, after, err)
	}
}
