package chainrpc_test

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/chainrpc"
	"github.com/peage/appliance/api/upstream/chainrpc/testtoken"
	"github.com/peage/appliance/internal/testenv"
	"github.com/peage/appliance/settle/devchain"
)

func TestCheckAddress(t *testing.T) {
	const good = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
	for _, c := range []struct {
		in string
		ok bool
	}{
		{good, true},
		{strings.ToLower(good), true},
		{"0x" + strings.ToUpper(good[2:]), true},
		{"0x833589fcD6eDb6E08f4c7C32D4f71b54bdA02913", false}, // one letter's case flipped
		{"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA0291", false},  // 39 digits
		{"833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", false},
		{"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA0291g", false},
		{"0x0000000000000000000000000000000000000000", true},
	} {
		if err := chainrpc.CheckAddress(c.in); (err == nil) != c.ok {
			t.Errorf("CheckAddress(%s) = %v, want ok=%v", c.in, err, c.ok)
		}
	}
}

func TestFormatUnits(t *testing.T) {
	big1e30, _ := new(big.Int).SetString("1000000000000000000000000000001", 10)
	for _, c := range []struct {
		v    *big.Int
		dec  uint8
		want string
	}{
		{big.NewInt(0), 6, "0"},
		{big.NewInt(1), 6, "0.000001"},
		{big.NewInt(25_000_000), 6, "25"},
		{big.NewInt(1_234_560), 6, "1.23456"},
		{big.NewInt(7), 18, "0.000000000000000007"},
		{big.NewInt(123), 0, "123"},
		{big.NewInt(-1_500_000), 6, "-1.5"},
		{big1e30, 18, "1000000000000.000000000000000001"},
	} {
		if got := chainrpc.FormatUnits(c.v, c.dec); got != c.want {
			t.Errorf("FormatUnits(%s, %d) = %s, want %s", c.v, c.dec, got, c.want)
		}
	}
}

// counting fronts the chain's RPC endpoint and counts the HTTP requests that reach it.
func counting(t *testing.T, target string) (string, *atomic.Int64) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	p := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		p.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &n
}

func startChain(t *testing.T) *devchain.Chain {
	t.Helper()
	testenv.NeedsChain(t)
	ch, err := devchain.Start(context.Background(), devchain.Options{HTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ch.Close() })
	return ch
}

func newClient(t *testing.T, rpcURL, usdc string) *chainrpc.Client {
	t.Helper()
	cfg := chainrpc.DefaultConfig()
	cfg.RPC, cfg.USDC, cfg.RatePerSecond, cfg.Burst = rpcURL, usdc, 1000, 1000
	c, err := chainrpc.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// A balance of ten tokens is one HTTP request to the endpoint, with every amount read from
// the chain and written with the decimals each contract reports.
func TestBalancesOfTenTokensIsOneRoundTrip(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ch := startChain(t)
	d := testtoken.Deployer{B: ch.Client(), Key: ch.Deployer, ChainID: devchain.ChainID}
	holder := crypto.PubkeyToAddress(mustKey(t).PublicKey)
	type want struct {
		addr     common.Address
		symbol   string
		decimals uint8
		amount   string
	}
	var wants []want
	for i := range 10 {
		dec := []uint8{6, 18}[i%2]
		sym := fmt.Sprintf("T%d", i)
		supply := new(big.Int).Exp(big.NewInt(10), big.NewInt(30), nil)
		var addr common.Address
		var err error
		if i == 9 {
			addr, err = d.Bytes32Token(ctx, "Bytes Thirty-Two", "B32", 18, supply)
			sym, dec = "B32", 18
		} else {
			addr, err = d.Token(ctx, "Token "+sym, sym, dec, supply)
		}
		if err != nil {
			t.Fatal(err)
		}
		// i+1 units and 5 of the smallest unit: the decimals must come from the contract.
		v := new(big.Int).Add(new(big.Int).Mul(big.NewInt(int64(i+1)), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(dec)), nil)), big.NewInt(5))
		if _, err := d.Transfer(ctx, addr, holder, v); err != nil {
			t.Fatal(err)
		}
		wants = append(wants, want{addr, sym, dec, chainrpc.FormatUnits(v, dec)})
	}
	if err := ch.Mint(ctx, holder, 2_500_000); err != nil {
		t.Fatal(err)
	}
	u, n := counting(t, ch.RPCURL)
	c := newClient(t, u, ch.USDC.Hex())
	var list []string
	for _, w := range wants {
		list = append(list, strings.ToLower(w.addr.Hex()))
	}
	b, err := c.Balances(ctx, holder.Hex(), list)
	if err != nil {
		t.Fatal(err)
	}
	if got := n.Load(); got != 1 {
		t.Fatalf("%d HTTP requests for a balance of 10 tokens, want 1", got)
	}
	// An endpoint that takes small batches only gets several, with the same answer.
	small := chainrpc.DefaultConfig()
	small.RPC, small.USDC, small.RatePerSecond, small.Burst, small.MaxBatch = u, ch.USDC.Hex(), 1000, 1000, 10
	sc, err := chainrpc.New(small)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	sb, err := sc.Balances(ctx, holder.Hex(), list)
	if err != nil {
		t.Fatal(err)
	}
	if got := n.Load() - 1; got != 4 { // 36 calls, 10 a batch
		t.Fatalf("%d HTTP requests with max_batch 10, want 4", got)
	}
	for i := range sb.Tokens {
		if sb.Tokens[i].Value.Cmp(b.Tokens[i].Value) != 0 || sb.Tokens[i].Symbol != b.Tokens[i].Symbol {
			t.Fatalf("split batch differs at %d: %+v vs %+v", i, sb.Tokens[i], b.Tokens[i])
		}
	}
	if b.ChainID != devchain.ChainID || b.Wei.Sign() != 0 || len(b.Tokens) != 11 {
		t.Fatalf("balances %+v", b)
	}
	if u := b.Tokens[0]; u.Address != ch.USDC.Hex() || u.Symbol != "USDC" || u.Decimals != 6 || chainrpc.FormatUnits(u.Value, 6) != "2.5" {
		t.Fatalf("USDC first: %+v", u)
	}
	for i, w := range wants {
		got := b.Tokens[i+1]
		if got.Address != w.addr.Hex() || got.Symbol != w.symbol || got.Decimals != w.decimals || chainrpc.FormatUnits(got.Value, got.Decimals) != w.amount {
			t.Errorf("token %d: %+v %s, want %+v", i, got, got.Value, w)
		}
	}
}

func mustKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// A local rate limit that cannot admit a call before its deadline refuses it at once, and
// the endpoint never sees it.
func TestRateLimitRefusesWhatWouldMissTheDeadline(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":"0x1"}`))
	}))
	defer srv.Close()
	cfg := chainrpc.DefaultConfig()
	cfg.RPC, cfg.RatePerSecond, cfg.Burst = srv.URL, 0.001, 1
	c, err := chainrpc.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _ = c.Latest(ctx) // spends the one token
	before := n.Load()
	_, err = c.Latest(ctx)
	if err == nil || !strings.Contains(err.Error(), upstream.ErrThrottled.Error()) {
		t.Fatalf("second call: %v, want the local rate limit", err)
	}
	if n.Load() != before {
		t.Fatal("a throttled call reached the endpoint")
	}
}

// Proxy detection reads the chain: one contract deployed per standard, each found with its
// implementation; a plain contract is no proxy, and an address without code is said to be one.
func TestDetectProxy(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ch := startChain(t)
	d := testtoken.Deployer{B: ch.Client(), Key: ch.Deployer, ChainID: devchain.ChainID}
	impl, err := d.Token(ctx, "Implementation", "IMP", 6, big.NewInt(1))
	if err != nil {
		t.Fatal(err)
	}
	beacon, err := d.Beacon(ctx, impl)
	if err != nil {
		t.Fatal(err)
	}
	slot := func(s string) common.Hash { return common.HexToHash(s) }
	cases := []struct {
		name   string
		deploy func() (common.Address, error)
		want   *chainrpc.Proxy
	}{
		{"eip1967", func() (common.Address, error) {
			return d.SlotProxy(ctx, slot("0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc"), impl)
		}, &chainrpc.Proxy{Type: chainrpc.ProxyEIP1967, Implementation: impl.Hex()}},
		{"beacon", func() (common.Address, error) {
			return d.SlotProxy(ctx, slot("0xa3f0ad74e5423aebfd80d3ef4346578335a9a72aeaee59ff6cb3582b35133d50"), beacon)
		}, &chainrpc.Proxy{Type: chainrpc.ProxyBeacon, Implementation: impl.Hex(), Beacon: beacon.Hex()}},
		{"eip1822", func() (common.Address, error) {
			return d.SlotProxy(ctx, slot("0xc5f16f0fcc639fa48a6947836d9850f504798523bf8c9a3a87d5876cf622bcf7"), impl)
		}, &chainrpc.Proxy{Type: chainrpc.ProxyEIP1822, Implementation: impl.Hex()}},
		{"zeppelinos", func() (common.Address, error) {
			return d.SlotProxy(ctx, slot("0x7050c9e0f4ca769c69bd3a8ef740bc37934f8e2c036e5a723fd8ee048ed3f8c3"), impl)
		}, &chainrpc.Proxy{Type: chainrpc.ProxyZeppelinOS, Implementation: impl.Hex()}},
		{"eip1167", func() (common.Address, error) { return d.MinimalProxy(ctx, impl) },
			&chainrpc.Proxy{Type: chainrpc.ProxyEIP1167, Implementation: impl.Hex()}},
		{"plain contract", func() (common.Address, error) { return impl, nil }, nil},
	}
	c := newClient(t, ch.RPCURL, ch.USDC.Hex())
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			addr, err := tc.deploy()
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.DetectProxy(ctx, addr.Hex())
			if err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Fatalf("DetectProxy = %+v, want %+v", got, tc.want)
			}
		})
	}
	// The EIP-1967 proxy really delegates: decimals() is the implementation's (immutable, in code).
	p, err := d.SlotProxy(ctx, slot("0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc"), impl)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := c.Balances(ctx, ch.PayerAddress().Hex(), []string{p.Hex()}); err != nil || b.Tokens[1].Decimals != 6 {
		t.Fatalf("through the proxy: %+v %v", b, err)
	}
	if _, err := c.DetectProxy(ctx, ch.PayerAddress().Hex()); err != chainrpc.ErrNoCode {
		t.Fatalf("an account without code: %v, want ErrNoCode", err)
	}
}

// Endpoints are tried in order: one that cannot be reached or throttles hands the request to
// the next; when none answers, the last failure is reported.
func TestFailover(t *testing.T) {
	ch := startChain(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String()
	_ = l.Close()
	var throttled atomic.Int64
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		throttled.Add(1)
		http.Error(w, "slow down", http.StatusTooManyRequests)
	}))
	defer busy.Close()
	up, n := counting(t, ch.RPCURL)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, c := range []struct {
		name   string
		rpc    string
		answer bool
	}{
		{"dead then up", dead + "," + up, true},
		{"throttling then up", busy.URL + ", " + up, true},
		{"up first", up + "," + dead, true},
		{"none answers", dead + "," + busy.URL, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := n.Load()
			b, err := newClient(t, c.rpc, ch.USDC.Hex()).Latest(ctx)
			if c.answer {
				if err != nil || b.ChainID != devchain.ChainID || n.Load() != before+1 {
					t.Fatalf("Latest = %+v, %v; requests to the live endpoint %d", b, err, n.Load()-before)
				}
				return
			}
			if err == nil || upstream.StatusOf(err) != http.StatusTooManyRequests {
				t.Fatalf("Latest = %+v, %v, want the last endpoint's 429", b, err)
			}
		})
	}
	if throttled.Load() != 2 {
		t.Fatalf("the throttling endpoint was asked %d times, want 2", throttled.Load())
	}
}

// The namehash vectors of EIP-137.
func TestNamehash(t *testing.T) {
	for name, want := range map[string]string{
		"":        "0x0000000000000000000000000000000000000000000000000000000000000000",
		"eth":     "0x93cdeb708b7545dc668eb9280176169d1c33cfd8ed6f04690a0bcc88a93fc4ae",
		"foo.eth": "0xde9b09fd7c5f901e23a3f19fecc54828e9c848539801e86591bd9801b019f84f",
	} {
		if got := chainrpc.Namehash(name).Hex(); got != want {
			t.Errorf("Namehash(%q) = %s, want %s", name, got, want)
		}
	}
}
