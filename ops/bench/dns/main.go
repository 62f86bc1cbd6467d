// Command dns benchmarks /v1/dns and /v1/email/verify against a local resolver, side by side
// with a bare miekg/dns client asking the same resolver the same questions in the same run.
//
// The resolver is resolvertest serving the zone fixture of api/upstream/resolver on loopback,
// so the figures measure the appliance, not the network. The routes are called through the
// real fasthttp server with a gate that lets calls through unpaid and no result cache, so every
// call reaches the resolver. The bare baseline sends the route's own set of questions in
// parallel, as the route does (for corp.test the TXT answer exceeds the UDP buffer and is asked
// again over TCP, in both). The ratio is the appliance's latency over the bare one: what the
// server, the parameter checks, the parsing (SPF, DMARC, disposable list) and JSON add.
//
// Usage: go run ./ops/bench/dns [-n 2000] [-rounds 3]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/miekg/dns"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/routes/domain"
	"github.com/peage/appliance/api/server"
	"github.com/peage/appliance/api/upstream/resolver"
	"github.com/peage/appliance/api/upstream/resolver/resolvertest"
	"github.com/peage/appliance/internal/egress"
	"github.com/peage/appliance/ops/benchutil"
)

func main() {
	n := flag.Int("n", 2000, "calls per measurement and round")
	rounds := flag.Int("rounds", 3, "alternating rounds (the box is shared: paths take turns)")
	fixture := flag.String("zones", "api/upstream/resolver/testdata/zones.db", "zone file the local resolver serves")
	flag.Parse()
	zone, err := os.ReadFile(*fixture)
	check(err)
	srv, err := resolvertest.New(string(zone))
	check(err)
	defer srv.Close()

	res, err := resolver.New(resolver.Config{Resolver: srv.Addr, Timeout: 2 * time.Second})
	check(err)
	pol, err := egress.New(egress.Config{})
	check(err)
	cat, err := catalog.Default(catalog.DefaultNames())
	check(err)
	check(domain.With(domain.Parts{Resolver: res, Egress: pol}).Bind(cat))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	cfg := server.DefaultConfig()
	cfg.Addr, cfg.BaseURL = ln.Addr().String(), "http://"+ln.Addr().String()
	api := server.New(cfg, cat, server.Options{Gate: &apitest.RecordingGate{}, Logger: slog.New(slog.DiscardHandler)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = api.Serve(ctx, ln) }()

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	route := func(path, param, value string) func() {
		target := cfg.BaseURL + path + "?" + url.Values{param: {value}}.Encode()
		return func() {
			resp, err := client.Get(target)
			check(err)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				check(fmt.Errorf("%s: status %d", target, resp.StatusCode))
			}
		}
	}
	bare := &dns.Client{Net: "udp", UDPSize: 1232}
	bareTCP := &dns.Client{Net: "tcp"}
	ask := func(name string, t uint16) {
		m := new(dns.Msg)
		m.SetQuestion(dns.Fqdn(name), t)
		m.SetEdns0(1232, false)
		r, _, err := bare.Exchange(m, srv.Addr)
		if err == nil && r.Truncated {
			r, _, err = bareTCP.Exchange(m, srv.Addr)
		}
		check(err)
		if r.Rcode != dns.RcodeSuccess {
			check(fmt.Errorf("%s %s: %s", name, dns.TypeToString[t], dns.RcodeToString[r.Rcode]))
		}
	}
	type q struct {
		name string
		t    uint16
	}
	parallel := func(qs []q) func() {
		return func() {
			var wg sync.WaitGroup
			for _, x := range qs {
				wg.Go(func() { ask(x.name, x.t) })
			}
			wg.Wait()
		}
	}
	var dnsSet []q
	for _, t := range resolver.AllTypes {
		dnsSet = append(dnsSet, q{"corp.test", t})
	}
	dnsSet = append(dnsSet, q{"_dmarc.corp.test", dns.TypeTXT})
	verifySet := []q{{"corp.test", dns.TypeMX}, {"corp.test", dns.TypeA}, {"corp.test", dns.TypeAAAA}, {"corp.test", dns.TypeTXT}, {"_dmarc.corp.test", dns.TypeTXT}}

	rows := []struct {
		name string
		f    func()
		lat  []time.Duration
	}{
		{name: "bare miekg/dns: one A query", f: func() { ask("corp.test", dns.TypeA) }},
		{name: "bare miekg/dns: the /v1/dns set (9 in parallel)", f: parallel(dnsSet)},
		{name: "/v1/dns?domain=corp.test", f: route("/v1/dns", "domain", "corp.test")},
		{name: "bare miekg/dns: the verify set (5 in parallel)", f: parallel(verifySet)},
		{name: "/v1/email/verify?email=jean.dupont@corp.test", f: route("/v1/email/verify", "email", "jean.dupont@corp.test")},
	}
	for i := range rows { // warm connections and caches once
		for range 50 {
			rows[i].f()
		}
	}
	before := srv.Queries.Load()
	for range *rounds {
		for i := range rows {
			for range *n {
				t := time.Now()
				rows[i].f()
				rows[i].lat = append(rows[i].lat, time.Since(t))
			}
		}
	}
	pct := func(l []time.Duration, p int) time.Duration {
		s := slices.Clone(l)
		slices.Sort(s)
		return s[len(s)*p/100]
	}
	fmt.Printf("dns bench: local resolver on loopback (resolvertest, zone fixture), one sequential client, %d calls x %d alternating rounds per line, %s\n",
		*n, *rounds, time.Now().UTC().Format(time.RFC3339))
	var table [][]string
	for _, r := range rows {
		table = append(table, []string{r.name, pct(r.lat, 50).Round(time.Microsecond).String(), pct(r.lat, 99).Round(time.Microsecond).String()})
	}
	benchutil.Table([]string{"path", "p50", "p99"}, table)
	ratio := func(a, b int, p int) string {
		return fmt.Sprintf("%.2f", float64(pct(rows[a].lat, p))/float64(pct(rows[b].lat, p)))
	}
	fmt.Println()
	benchutil.Table([]string{"route vs bare miekg/dns, same questions", "p50 ratio", "p99 ratio", "added at p50"}, [][]string{
		{"/v1/dns", ratio(2, 1, 50), ratio(2, 1, 99), (pct(rows[2].lat, 50) - pct(rows[1].lat, 50)).Round(time.Microsecond).String()},
		{"/v1/email/verify", ratio(4, 3, 50), ratio(4, 3, 99), (pct(rows[4].lat, 50) - pct(rows[3].lat, 50)).Round(time.Microsecond).String()},
	})
	fmt.Printf("\nresolver answered %d queries during the measurement\n", srv.Queries.Load()-before)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "dns bench:", err)
		os.Exit(1)
	}
}
