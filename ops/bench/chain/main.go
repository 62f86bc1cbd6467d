// Command chain benchmarks /v1/chain/balance with 10 tokens against the embedded chain, side
// by side with ten sequential eth_calls (one balanceOf per token, one HTTP request each) asking
// the same endpoint in the same run.
//
// The chain is settle/devchain's simulated backend serving JSON-RPC on loopback, with ten
// test ERC-20s deployed, behind a counting proxy, so the figures count the HTTP round trips
// each path makes and measure the appliance, not the network. The route is called through the
// real fasthttp server with a gate that lets calls through unpaid and no result cache, so every
// call reaches the chain. On a public endpoint each round trip also costs a token of its rate
// limit, which is what batching saves.
//
// Usage: go run ./ops/bench/chain [-n 200] [-rounds 3]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/routes/chain"
	"github.com/peage/appliance/api/server"
	"github.com/peage/appliance/api/upstream/chainrpc"
	"github.com/peage/appliance/api/upstream/chainrpc/testtoken"
	"github.com/peage/appliance/ops/benchutil"
	"github.com/peage/appliance/settle/devchain"
)

func main() {
	n := flag.Int("n", 200, "calls per measurement and round")
	rounds := flag.Int("rounds", 3, "alternating rounds (the box is shared: paths take turns)")
	flag.Parse()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := devchain.Start(ctx, devchain.Options{HTTP: true})
	check(err)
	defer ch.Close()
	d := testtoken.Deployer{B: ch.Client(), Key: ch.Deployer, ChainID: devchain.ChainID}
	holder := ch.PayerAddress()
	var tokens []common.Address
	for i := range 10 {
		t, err := d.Token(ctx, fmt.Sprintf("Bench %d", i), fmt.Sprintf("B%d", i), []uint8{6, 18}[i%2], big.NewInt(1_000_000))
		check(err)
		_, err = d.Transfer(ctx, t, holder, big.NewInt(int64(1000+i)))
		check(err)
		tokens = append(tokens, t)
	}

	// Every HTTP request to the chain passes the counter.
	target, err := url.Parse(ch.RPCURL)
	check(err)
	var requests atomic.Int64
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()

	cc := chainrpc.DefaultConfig()
	cc.RPC, cc.USDC, cc.RatePerSecond, cc.Burst = front.URL, ch.USDC.Hex(), 1e9, 1e9
	rc, err := chainrpc.New(cc)
	check(err)
	cat, err := catalog.Default(catalog.DefaultNames())
	check(err)
	check(chain.With(chain.Parts{Client: rc}).Bind(cat))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	cfg := server.DefaultConfig()
	cfg.Addr, cfg.BaseURL = ln.Addr().String(), "http://"+ln.Addr().String()
	cfg.FreePerMinute = 0 // the chain routes grant a free first call: the bench client is one client
	api := server.New(cfg, cat, server.Options{Gate: &apitest.RecordingGate{}, Logger: slog.New(slog.DiscardHandler)})
	go func() { _ = api.Serve(ctx, ln) }()

	var list []string
	for _, t := range tokens {
		list = append(list, t.Hex())
	}
	routeURL := cfg.BaseURL + "/v1/chain/balance?" + url.Values{"address": {holder.Hex()}, "tokens": {strings.Join(list, ",")}}.Encode()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	route := func() {
		resp, err := client.Get(routeURL)
		check(err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			check(fmt.Errorf("%s: status %d", routeURL, resp.StatusCode))
		}
	}
	bare, err := rpc.DialOptions(ctx, front.URL)
	check(err)
	defer bare.Close()
	data := append(common.FromHex("0x70a08231"), common.LeftPadBytes(holder.Bytes(), 32)...)
	sequential := func() {
		for _, t := range tokens {
			var out hexutil.Bytes
			check(bare.CallContext(ctx, &out, "eth_call", map[string]any{"to": t, "data": hexutil.Bytes(data)}, "latest"))
		}
	}

	rows := []struct {
		name  string
		f     func()
		lat   []time.Duration
		trips int64
	}{
		{name: "ten sequential eth_calls (balanceOf only)", f: sequential},
		{name: "/v1/chain/balance, 10 tokens (ETH, USDC, balances, symbols, decimals)", f: route},
	}
	for i := range rows { // warm connections once
		for range 20 {
			rows[i].f()
		}
	}
	for range *rounds {
		for i := range rows {
			for range *n {
				before := requests.Load()
				t := time.Now()
				rows[i].f()
				rows[i].lat = append(rows[i].lat, time.Since(t))
				rows[i].trips += requests.Load() - before
			}
		}
	}
	pct := func(l []time.Duration, p int) time.Duration {
		s := slices.Clone(l)
		slices.Sort(s)
		return s[len(s)*p/100]
	}
	fmt.Printf("chain bench: embedded chain JSON-RPC on loopback behind a counting proxy, one sequential client, %d calls x %d alternating rounds per line, %s\n",
		*n, *rounds, time.Now().UTC().Format(time.RFC3339))
	var table [][]string
	for _, r := range rows {
		table = append(table, []string{r.name, fmt.Sprintf("%.1f", float64(r.trips)/float64(len(r.lat))),
			pct(r.lat, 50).Round(time.Microsecond).String(), pct(r.lat, 99).Round(time.Microsecond).String()})
	}
	benchutil.Table([]string{"path", "round trips per call", "p50", "p99"}, table)
	fmt.Println()
	benchutil.Table([]string{"route vs ten sequential eth_calls", "p50 ratio", "round trips ratio"}, [][]string{{
		"/v1/chain/balance, 10 tokens",
		fmt.Sprintf("%.2f", float64(pct(rows[1].lat, 50))/float64(pct(rows[0].lat, 50))),
		fmt.Sprintf("%.2f", float64(rows[1].trips)/float64(rows[0].trips)),
	}})
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "chain bench:", err)
		os.Exit(1)
	}
}
