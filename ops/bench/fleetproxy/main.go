// Command fleetproxy measures a proxy tunnel carried through a fleet's gateway against the same
// tunnel straight to the box's proxyd: the gateway's proxy port reads the CONNECT head, finds
// the package's box, and carries the bytes through the userspace WireGuard tunnel (wireguard-go
// on gVisor's netstack, UDP on loopback) that the box dialled out, to the box's proxyd on
// loopback (a real proxyd, metering every byte). Ratios are against the direct tunnel measured
// in the same run, the two paths alternating in random order.
//
//	go run ./ops/bench/fleetproxy [-setups 400] [-mib 128] [-rounds 3]
package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/fleet/proxyhop"
	"github.com/peage/appliance/internal/fleet/tunnel"
	"github.com/peage/appliance/internal/loopback"
	"github.com/peage/appliance/proxyd"
)

func main() {
	setups := flag.Int("setups", 400, "tunnel set-ups timed per path")
	mib := flag.Int("mib", 128, "MiB of one bulk download per path and round")
	rounds := flag.Int("rounds", 3, "bulk downloads per path (the best is kept)")
	flag.Parse()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	load := loadAvg()

	target := startTarget()
	dir, err := os.MkdirTemp("", "bench-fleetproxy-")
	check(err)
	defer os.RemoveAll(dir)
	cfg := proxyd.DefaultConfig()
	cfg.Listen = freeAddr()
	_, port, _ := net.SplitHostPort(cfg.Listen)
	cfg.PublicPort, _ = strconv.Atoi(port)
	cfg.MaxTunnelsPerKey = 1 << 16
	px, stopPx, err := proxyd.StartDev(ctx, cfg, dir, []string{target}, nil, nil)
	check(err)
	defer func() { _ = stopPx() }()
	key, _, err := px.Issue(ctx, 1000)
	check(err)

	// The tunnel: the gateway's device, and the box's, which dials out and forwards its
	// tunnel port to its proxyd on loopback.
	gwKey, err := tunnel.GenerateKey()
	check(err)
	boxKey, err := tunnel.GenerateKey()
	check(err)
	gwAddr, boxAddr := netip.MustParseAddr("10.199.0.1"), netip.MustParseAddr("10.199.0.2")
	gw, err := tunnel.StartGateway(tunnel.GatewayConfig{PrivateKey: gwKey, Address: gwAddr})
	check(err)
	defer gw.Close()
	check(gw.SetPeer(boxKey.PublicKey(), boxAddr))
	tb, err := tunnel.StartBox(ctx, tunnel.BoxConfig{PrivateKey: boxKey, Address: boxAddr, Gateway: gw.PublicKey(),
		GatewayAddress: gwAddr, Endpoint: "127.0.0.1:" + strconv.Itoa(gw.Port())})
	check(err)
	defer tb.Close()
	tln, err := tb.Listen(fleet.ProxyPort)
	check(err)
	go func() { _ = tunnel.Forward(ctx, tln, cfg.Listen, nil) }()
	for !gw.Handshaked(boxKey.PublicKey()) {
		time.Sleep(10 * time.Millisecond)
	}
	hopLn, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	boxProxy := netip.AddrPortFrom(boxAddr, fleet.ProxyPort)
	hop, err := proxyhop.New(proxyhop.Config{
		Locate: func(context.Context, string) (netip.AddrPort, error) { return boxProxy, nil },
		Dial:   gw.Dial,
	})
	check(err)
	go func() { _ = hop.Serve(ctx, hopLn) }()

	paths := []struct{ name, addr string }{{"direct", cfg.Listen}, {"gateway", hopLn.Addr().String()}}
	for _, p := range paths { // warm both (pools, the netstack's first connections)
		for range 50 {
			setup(p.addr, key, target)
		}
	}

	fmt.Printf("fleet proxy bench: one real proxyd, loopback; the gateway path adds its proxy port and a userspace WireGuard tunnel (UDP loopback); load average before: %s\n\n", load)
	times := map[string][]time.Duration{}
	for range *setups {
		order := []int{0, 1}
		rand.Shuffle(2, func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
			times[paths[i].name] = append(times[paths[i].name], setup(paths[i].addr, key, target))
		}
	}
	d50, d99 := pct(times["direct"], 50), pct(times["direct"], 99)
	g50, g99 := pct(times["gateway"], 50), pct(times["gateway"], 99)
	fmt.Printf("1. tunnel set-up (dial, CONNECT, 200), %d each\n", *setups)
	fmt.Printf("   direct:   p50 %8v  p99 %8v\n", d50, d99)
	fmt.Printf("   gateway:  p50 %8v  p99 %8v  ratio p50 %.2f, p99 %.2f\n\n", g50, g99, ratio(g50, d50), ratio(g99, d99))

	best := map[string]float64{}
	n := int64(*mib) << 20
	for range *rounds {
		order := []int{0, 1}
		rand.Shuffle(2, func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
			mbps := bulk(paths[i].addr, key, target, n)
			best[paths[i].name] = max(best[paths[i].name], mbps)
		}
	}
	fmt.Printf("2. bulk download of %d MiB through the tunnel (best of %d)\n", *mib, *rounds)
	fmt.Printf("   direct:   %8.0f Mbit/s\n", best["direct"])
	fmt.Printf("   gateway:  %8.0f Mbit/s  ratio %.2f\n", best["gateway"], best["gateway"]/best["direct"])
	u, err := px.Usage(ctx, key)
	check(err)
	fmt.Printf("\nthe box's meter: %d bytes in all paths' tunnels\n", u.Used)
}

// connect opens a tunnel to target through proxyAddr.
func connect(proxyAddr, key, target string) net.Conn {
	c, err := net.Dial("tcp", proxyAddr)
	check(err)
	auth := base64.StdEncoding.EncodeToString([]byte("buyer:" + key))
	_, err = fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: Basic %s\r\n\r\n", target, target, auth)
	check(err)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	check(err)
	if resp.StatusCode != http.StatusOK {
		check(fmt.Errorf("CONNECT through %s: %s", proxyAddr, resp.Status))
	}
	return c
}

func setup(proxyAddr, key, target string) time.Duration {
	start := time.Now()
	c := connect(proxyAddr, key, target)
	d := time.Since(start)
	_ = c.Close()
	return d
}

// bulk asks the target for n bytes and reads them; Mbit/s from the CONNECT to the last byte.
func bulk(proxyAddr, key, target string, n int64) float64 {
	start := time.Now()
	c := connect(proxyAddr, key, target)
	defer c.Close()
	var req [8]byte
	binary.BigEndian.PutUint64(req[:], uint64(n))
	_, err := c.Write(req[:])
	check(err)
	got, err := io.Copy(io.Discard, c)
	check(err)
	if got != n {
		check(fmt.Errorf("read %d bytes of %d", got, n))
	}
	return float64(n*8) / time.Since(start).Seconds() / 1e6
}

// startTarget serves the bulk downloads: 8 bytes of length asked, then that many bytes.
func startTarget() string {
	buf := make([]byte, 256<<10)
	ln, err := loopback.Serve(func(c net.Conn) {
		defer c.Close()
		var req [8]byte
		if _, err := io.ReadFull(c, req[:]); err != nil {
			return
		}
		for left := int64(binary.BigEndian.Uint64(req[:])); left > 0; {
			k, err := c.Write(buf[:min(left, int64(len(buf)))])
			if err != nil {
				return
			}
			left -= int64(k)
		}
	})
	check(err)
	return ln.Addr().String()
}

func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	defer ln.Close()
	return ln.Addr().String()
}

func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)].Round(time.Microsecond)
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleetproxy:", err)
		os.Exit(1)
	}
}
