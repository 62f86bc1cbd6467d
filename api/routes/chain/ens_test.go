package chain_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/peage/appliance/api/routes/chain"
	"github.com/peage/appliance/api/upstream/chainrpc"
	"github.com/peage/appliance/api/upstream/chainrpc/testtoken"
	"github.com/peage/appliance/internal/egress"
	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/devchain"
	"github.com/peage/appliance/settle/pay"
)

func abiType(t *testing.T, s string) abi.Type {
	ty, err := abi.NewType(s, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return ty
}

// gateway is an EIP-3668 gateway in the shape of ENS's reference offchain-resolver gateway
// (GET /{sender}/{data}.json → {"data": abi.encode(bytes result, uint64 expires, bytes sig)}),
// answering addr and text(avatar) for every name from its own table.
func gateway(t *testing.T, addr common.Address, avatar string) *httptest.Server {
	bytesT, addrT, strT, u64T := abiType(t, "bytes"), abiType(t, "address"), abiType(t, "string"), abiType(t, "uint64")
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		parts := strings.Split(strings.TrimSuffix(r.URL.Path, ".json"), "/")
		call, err := hexutil.Decode(parts[len(parts)-1])
		if err != nil || r.Method != "GET" || len(call) < 4 || !bytes.Equal(call[:4], []byte{0x90, 0x61, 0xb9, 0x23}) {
			http.Error(w, "bad lookup", 400)
			return
		}
		v, err := abi.Arguments{{Type: bytesT}, {Type: bytesT}}.Unpack(call[4:])
		if err != nil {
			http.Error(w, "bad lookup", 400)
			return
		}
		inner := v[1].([]byte)
		var result []byte
		switch {
		case bytes.HasPrefix(inner, []byte{0x3b, 0x3b, 0x57, 0xde}):
			result, _ = abi.Arguments{{Type: addrT}}.Pack(addr)
		case bytes.HasPrefix(inner, []byte{0x59, 0xd1, 0xd4, 0x3c}):
			result, _ = abi.Arguments{{Type: strT}}.Pack(avatar)
		default:
			http.Error(w, "unsupported", 404)
			return
		}
		resp, _ := abi.Arguments{{Type: bytesT}, {Type: u64T}, {Type: bytesT}}.Pack(result, uint64(time.Now().Add(time.Hour).Unix()), []byte{})
		_ = json.NewEncoder(w).Encode(map[string]string{"data": hexutil.Encode(resp)})
	}))
	t.Cleanup(s.Close)
	return s
}

func TestENSOnTheEmbeddedChain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, alice := newHolder(t)
	_, impostor := newHolder(t)
	_, bob := newHolder(t)
	_, carol := newHolder(t)
	gw := gateway(t, bob, "ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi")
	// A second gateway the egress guard does not allow: loopback, not listed.
	blocked := gateway(t, bob, "")
	policy, err := egress.New(egress.Config{Allow: []string{strings.TrimPrefix(gw.URL, "http://")}})
	if err != nil {
		t.Fatal(err)
	}
	w := newWorldWith(t, "", func(dev *settle.Dev, deps *chain.Parts) {
		ch := dev.Chain
		d := testtoken.Deployer{B: ch.Client(), Key: ch.Deployer, ChainID: devchain.ChainID}
		ens, err := d.ENS(ctx) // ENS on "Ethereum"
		if err != nil {
			t.Fatal(err)
		}
		base, err := d.ENS(ctx) // the Basenames registry on "Base"
		if err != nil {
			t.Fatal(err)
		}
		node, err := d.Register(ctx, ens, "alice.eth", ens.Resolver)
		if err != nil {
			t.Fatal(err)
		}
		steps := []error{
			d.SetAddr(ctx, ens, node, alice),
			d.SetText(ctx, ens, node, "avatar", "https://example.org/alice.png"),
			d.SetReverse(ctx, ens, alice, "addr.reverse", "alice.eth"),
			d.SetReverse(ctx, ens, impostor, "addr.reverse", "alice.eth"), // a claim alice.eth does not confirm
		}
		off, err := d.OffchainResolver(ctx, gw.URL+"/{sender}/{data}.json")
		steps = append(steps, err)
		_, err = d.Register(ctx, ens, "off.eth", off)
		steps = append(steps, err)
		bad, err := d.OffchainResolver(ctx, blocked.URL+"/{sender}/{data}.json")
		steps = append(steps, err)
		_, err = d.Register(ctx, ens, "blocked.eth", bad)
		steps = append(steps, err)
		cnode, err := d.Register(ctx, base, "carol.base.eth", base.Resolver)
		steps = append(steps, err, d.SetAddr(ctx, base, cnode, carol), d.SetReverse(ctx, base, carol, "80002105.reverse", "carol.base.eth"))
		for _, err := range steps {
			if err != nil {
				t.Fatal(err)
			}
		}
		cc := chainrpc.DefaultConfig()
		cc.RPC, cc.USDC, cc.RatePerSecond, cc.Burst = dev.RPCURL, dev.Asset, 1000, 1000
		ec, err := chainrpc.New(cc)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(ec.Close)
		deps.ENS = chain.ENSDeps{Client: ec, Registry: ens.Registry.Hex(), BasenamesRegistry: base.Registry.Hex(),
			Gateway: &http.Client{Transport: policy.Transport(), Timeout: 5 * time.Second}}
	})

	// Forward, normalised (ENSIP-15 folds case), with the avatar.
	body, _ := w.call(t, "/v1/chain/ens", map[string]string{"name": "Alice.ETH"})
	expect(t, "alice.eth", body, map[string]any{"input": "Alice.ETH", "name": "alice.eth", "chain": "ethereum", "address": alice.Hex(), "resolved": true,
		"avatar": "https://example.org/alice.png", "offchain": false, "wildcard": false, "node": chainrpc.Namehash("alice.eth").Hex()})
	// Reverse, checked forward.
	body, _ = w.call(t, "/v1/chain/ens", map[string]string{"address": alice.Hex()})
	expect(t, "alice reverse", body, map[string]any{"address": alice.Hex(), "name": "alice.eth", "resolved": true, "avatar": "https://example.org/alice.png",
		"chain": "ethereum", "reverse_records": []any{map[string]any{"chain": "ethereum", "name": "alice.eth", "verified": true, "resolves_to": alice.Hex()}}})
	// A reverse record the name does not confirm is no name.
	body, _ = w.call(t, "/v1/chain/ens", map[string]string{"address": strings.ToLower(impostor.Hex())})
	expect(t, "impostor reverse", body, map[string]any{"address": impostor.Hex(), "name": nil, "resolved": false, "avatar": nil,
		"reverse_records": []any{map[string]any{"chain": "ethereum", "name": "alice.eth", "verified": false, "resolves_to": alice.Hex(),
			"problem": "the name does not resolve back to this address"}}})
	// Offchain: a subname answered by the parent's wildcard resolver through its gateway.
	body, _ = w.call(t, "/v1/chain/ens", map[string]string{"name": "bob.off.eth"})
	expect(t, "bob.off.eth", body, map[string]any{"address": bob.Hex(), "resolved": true, "offchain": true, "wildcard": true,
		"avatar": "ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi"})
	// Basenames, forward and as a Base primary name.
	body, _ = w.call(t, "/v1/chain/ens", map[string]string{"name": "carol.base.eth"})
	expect(t, "carol.base.eth", body, map[string]any{"chain": "base", "address": carol.Hex(), "resolved": true, "avatar": nil})
	body, _ = w.call(t, "/v1/chain/ens", map[string]string{"address": carol.Hex()})
	expect(t, "carol reverse", body, map[string]any{"name": "carol.base.eth", "resolved": true, "chain": "base"})

	// Refused without a charge: a name nobody registered (404) and a gateway the egress guard
	// refuses (502 naming the gateway).
	payer := common.HexToAddress(w.dev.Payer)
	before, err := w.dev.Chain.Balance(ctx, payer)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		status int
		who    string
	}{{"nobody.eth", 404, ""}, {"x.blocked.eth", 502, chainrpc.GatewayName}} {
		res, err := w.pay.Do(ctx, pay.Request{URL: w.base + "/v1/chain/ens", Params: map[string]string{"name": c.name}})
		if err != nil || res.Status != c.status || res.Receipt != nil {
			t.Fatalf("%s: %v %+v", c.name, err, res)
		}
		var e struct{ Error struct{ Upstream string } }
		if json.Unmarshal(res.Body, &e) != nil || e.Error.Upstream != c.who {
			t.Errorf("%s: %s, want upstream %q", c.name, res.Body, c.who)
		}
	}
	if after, err := w.dev.Chain.Balance(ctx, payer); err != nil || after.Cmp(before) != 0 {
		t.Fatalf("payer charged for refused calls: %s → %s (%v)", before, after, err)
	}
}

func TestNormalizeENS(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"vitalik.eth", "vitalik.eth"},
		{"Vitalik.ETH", "vitalik.eth"},
		{"_dev.alice.eth", "_dev.alice.eth"},
		{"a-b.eth", "a-b.eth"},
		{"café.eth", "café.eth"},
		{"CAFÉ.eth", "café.eth"},
		{"alice.com", ""},
		{"eth", ""},
		{"al_ice.eth", ""},
		{"ab--c.eth", ""},
		{"a..eth", ""},
		{"a b.eth", ""},
	} {
		got, err := chain.NormalizeENS(c.in)
		if (err != nil) != (c.want == "") || got != c.want {
			t.Errorf("NormalizeENS(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}
