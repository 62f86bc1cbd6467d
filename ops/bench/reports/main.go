// Command reports benchmarks the French company reports, side by side in one run, against
// local fixture upstreams that answer the recorded Danone answers of the route tests:
//
//  1. upstream calls per report: each report once without the answer cache, then the same
//     report twice with it (what the second one saved), then every report one after another
//     on the same company with one shared cache (what the earlier reports saved the later);
//  2. latency of entreprise-360, kyb and analyse-immo through the real server, every upstream
//     answering after a random 50-300 ms, against the same upstream calls made one after
//     another through the same connectors (the sum a report without fan-out would take).
//     analyse-immo reads a recorded address (BAN), the recorded Boulogne-Billancourt DVF lines
//     for every year asked (two sales a year: the window, then three earlier years), the rent
//     map (read once and kept by the route, as in production), risks, diagnoses and commune.
//
// Usage: go run ./ops/bench/reports [-n 40] [-min 50ms] [-max 300ms]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/routes/fr"
	"github.com/peage/appliance/api/server"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/ademe"
	"github.com/peage/appliance/api/upstream/ban"
	"github.com/peage/appliance/api/upstream/bodacc"
	"github.com/peage/appliance/api/upstream/dvf"
	"github.com/peage/appliance/api/upstream/economie"
	"github.com/peage/appliance/api/upstream/geoapi"
	"github.com/peage/appliance/api/upstream/georisques"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/loyers"
	re "github.com/peage/appliance/api/upstream/rechercheentreprises"
	"github.com/peage/appliance/api/upstream/vies"
)

// fixture is one upstream: the recorded answer it serves to every request (or, with paths,
// the answer of the first path prefix a request matches).
type fixture struct {
	name, prefix, file string
	paths              [][2]string // path prefix, file
}

var fixtures = []fixture{
	{re.Name, "", "api/upstream/rechercheentreprises/testdata/search_552032534.json", nil},
	{bodacc.Name, "", "api/upstream/bodacc/testdata/empty.json", nil},
	{vies.Name, "/taxation_customs/vies/rest-api", "api/upstream/vies/testdata/get_valid.json", nil},
	{economie.Name, "", "api/upstream/economie/testdata/ratios.json", nil},
	{ademe.Name, "/data-fair/api/v1", "api/upstream/ademe/testdata/empty.json", nil},
	{"boamp", "", "api/upstream/bodacc/testdata/empty.json", nil},
	{"agence-bio", "/api/gouv", "api/upstream/agencebio/testdata/operateurs_siret.json", nil},
	{"geo-api", "", "api/upstream/geoapi/testdata/communes_versailles.json", [][2]string{{"/communes/", "api/upstream/geoapi/testdata/commune_78646.json"}}},
	{ban.Name, "/geocodage", "api/upstream/ban/testdata/search_mazeres.json", nil},
	{dvf.Name, "/geo-dvf/latest/csv", "api/upstream/dvf/testdata/92012_2025.csv", nil},
	{loyers.Name, "/resources/carte-loyers", "api/upstream/loyers/testdata/pred-app-mef-dhup.csv", nil},
	{georisques.Name, "/api/v1", "api/upstream/georisques/testdata/rapport_paris_75108.json", nil},
}

// reports are one call of each report on the same company (DANONE, 552032534).
var reports = []struct{ id, query string }{
	{"fr.entreprise-360", "siren=552032534"},
	{"fr.entreprise-360.partial", "siren=552032534"},
	{"fr.kyb", "siren=552032534"},
	{"fr.kyb.partial", "siren=552032534"},
	{"fr.score-entreprise", "siren=552032534"},
	{"fr.score-entreprise.partial", "siren=552032534"},
	{"fr.due-diligence", "siren=552032534"},
	{"fr.enrich", "siren=552032534"},
	{"fr.verif-artisan", "siren=552032534"},
	{"fr.valorisation", "siren=552032534"},
	{"fr.concurrents", "siren=552032534"},
	{"fr.reseau-dirigeant", "nom=Saada&prenom=Antoine"},
	{"fr.qualified-leads", "activity=70.10Z&location=75&max=5"},
}

func main() {
	n := flag.Int("n", 40, "reports per latency measurement")
	lo := flag.Duration("min", 50*time.Millisecond, "shortest simulated upstream latency")
	hi := flag.Duration("max", 300*time.Millisecond, "longest simulated upstream latency")
	flag.Parse()
	quiet := slog.New(slog.DiscardHandler)

	// One fixture server per upstream, counting its calls; the delay is drawn per request
	// while delays are on.
	var delaysOn atomic.Bool
	var rngMu sync.Mutex
	rng := rand.New(rand.NewPCG(1, 2))
	delay := func() time.Duration {
		rngMu.Lock()
		defer rngMu.Unlock()
		return *lo + time.Duration(rng.Int64N(int64(*hi-*lo)+1))
	}
	counts := map[string]*atomic.Int64{}
	override := map[string]upstream.Override{}
	for _, f := range fixtures {
		body, err := os.ReadFile(f.file)
		check(err)
		byPath := map[string][]byte{}
		for _, p := range f.paths {
			b, err := os.ReadFile(p[1])
			check(err)
			byPath[f.prefix+p[0]] = b
		}
		var c atomic.Int64
		counts[f.name] = &c
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c.Add(1)
			if delaysOn.Load() {
				select {
				case <-time.After(delay()):
				case <-r.Context().Done():
					return
				}
			}
			w.Header().Set("Content-Type", "application/json")
			for p, b := range byPath {
				if strings.HasPrefix(r.URL.Path, p) {
					_, _ = w.Write(b)
					return
				}
			}
			_, _ = w.Write(body)
		}))
		defer srv.Close()
		override[f.name] = upstream.Override{BaseURL: srv.URL + f.prefix, RPS: 1e6}
	}
	specs, err := upstream.Resolve(upstream.Config{Override: override})
	check(err)
	opts := httpc.Options{Contact: "bench@example.org", Logger: quiet}
	total := func() int64 {
		var s int64
		for _, c := range counts {
			s += c.Load()
		}
		return s
	}

	// A server over routes built with the given answer cache (nil: none).
	start := func(reportCache fr.Cache) (base string, stop func()) {
		routes, err := fr.With(fr.Parts{Upstreams: specs, HTTP: opts, Cache: reportCache})
		check(err)
		cat, err := catalog.Default(catalog.DefaultNames())
		check(err)
		check(routes.Bind(cat))
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		check(err)
		cfg := server.DefaultConfig()
		cfg.Addr, cfg.BaseURL = ln.Addr().String(), "http://"+ln.Addr().String()
		srv := server.New(cfg, cat, server.Options{Gate: &apitest.RecordingGate{}, Logger: quiet})
		ctx, cancel := context.WithCancel(context.Background())
		go func() { _ = srv.Serve(ctx, ln) }()
		return cfg.BaseURL, cancel
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	get := func(base, id, query string) {
		ent := mustEntry(id)
		resp, err := client.Get(base + ent.Path + "?" + query)
		check(err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			check(fmt.Errorf("%s?%s: status %d", ent.Path, query, resp.StatusCode))
		}
	}

	fmt.Printf("reports bench: French company reports over fixture upstreams (recorded Danone answers), %s\n", time.Now().UTC().Format(time.RFC3339))
	fmt.Printf("\n1. upstream calls per report (no delay)\n   %-30s %8s %14s %14s\n", "report", "alone", "same again", "after others")
	noCache, stop1 := start(nil)
	withCache, stop2 := start(mapCache{&sync.Map{}})
	shared, stop3 := start(mapCache{&sync.Map{}})
	var sumAlone, sumShared int64
	for _, r := range reports {
		b := total()
		get(noCache, r.id, r.query)
		alone := total() - b
		// A second identical report: the route result cache of the server is off here
		// (no server cache), so only the reports' answer cache can save calls.
		get(withCache, r.id, r.query)
		b = total()
		get(withCache, r.id, r.query)
		again := total() - b
		b = total()
		get(shared, r.id, r.query)
		after := total() - b
		sumAlone, sumShared = sumAlone+alone, sumShared+after
		fmt.Printf("   %-30s %8d %14d %14d\n", r.id, alone, again, after)
	}
	fmt.Printf("   all %d reports on one company: %d upstream calls without the cache, %d with it (%.0f%% saved)\n",
		len(reports), sumAlone, sumShared, 100*(1-float64(sumShared)/float64(sumAlone)))
	stop1()
	stop2()
	stop3()

	// 2. Latency. No answer cache, and a new name each call, so that every report reaches
	// every source; the baseline makes the same calls through the same connectors in turn.
	delaysOn.Store(true)
	base, stop := start(nil)
	defer stop()
	pool := httpc.NewPool(specs, opts)
	conn := func(name string) *httpc.Client {
		c, err := pool.Client(name)
		check(err)
		return c
	}
	reg, bod, vat, rat, rge := re.New(conn(re.Name)), bodacc.New(conn(bodacc.Name)), vies.New(conn(vies.Name)), economie.New(conn(economie.Name)), ademe.New(conn(ademe.Name))
	ctx := context.Background()
	geocoder, sales, risks, communes := ban.New(conn(ban.Name)), dvf.New(conn(dvf.Name)), georisques.New(conn(georisques.Name)), geoapi.New(conn(geoapi.Name))
	year := time.Now().Year()
	sequential := map[string]func(){
		"fr.analyse-immo": func() {
			_, err := geocoder.Search(ctx, "rue jules ferry 64110 mazeres-lezons", 5)
			check(err)
			for y := year - 5; y <= year; y++ {
				_, err = sales.Mutations(ctx, y, "64373")
				check(err)
			}
			_, err = risks.Report(ctx, "64373")
			check(err)
			_, err = rge.DPE(ctx, ademe.DPEQuery{INSEE: []string{"64373"}, Size: 100})
			check(err)
			_, err = communes.ByCode(ctx, "64373")
			check(err)
		},
		"fr.entreprise-360": func() {
			_, err := reg.Find(ctx, "552032534", 1)
			check(err)
			_, err = bod.Annonces(ctx, "552032534", "")
			check(err)
			_, err = rge.RGEBySiret(ctx, "55203253400703")
			check(err)
			_, err = rat.Ratios(ctx, "552032534")
			check(err)
			_, err = vat.Check(ctx, "FR", "27552032534")
			check(err)
		},
		"fr.kyb": func() {
			_, err := reg.Find(ctx, "552032534", 1)
			check(err)
			_, err = bod.Annonces(ctx, "552032534", "")
			check(err)
			_, err = vat.Check(ctx, "FR", "27552032534")
			check(err)
			_, err = rat.Ratios(ctx, "552032534")
			check(err)
		},
	}
	fmt.Printf("\n2. latency, every upstream answering after %s-%s (uniform), %d reports each, one client\n   %-44s %10s %10s %10s\n", *lo, *hi, *n, "path", "p50", "p99", "calls")
	query := map[string]func(i int) string{
		"fr.entreprise-360": func(i int) string { return "q=DANONE+" + strconv.Itoa(i) },
		"fr.kyb":            func(i int) string { return "q=DANONE+" + strconv.Itoa(i) },
		"fr.analyse-immo": func(i int) string {
			return "adresse=rue+jules+ferry+64110+mazeres-lezons&surface=" + strconv.Itoa(40+i)
		},
	}
	for _, id := range []string{"fr.entreprise-360", "fr.kyb", "fr.analyse-immo"} {
		b := total()
		fanP50, fanP99 := measure(*n, func(i int) { get(base, id, query[id](i)) })
		fanCalls := total() - b
		b = total()
		seqP50, seqP99 := measure(*n, func(int) { sequential[id]() })
		seqCalls := total() - b
		fmt.Printf("   %-44s %10s %10s %10d\n", id+" (fan-out, through the server)", fanP50.Round(time.Millisecond), fanP99.Round(time.Millisecond), fanCalls)
		fmt.Printf("   %-44s %10s %10s %10d\n", id+" (same calls one after another)", seqP50.Round(time.Millisecond), seqP99.Round(time.Millisecond), seqCalls)
		fmt.Printf("   %s: fan-out p50 %.2fx faster, p99 %.2fx faster than the sequential sum\n", id, float64(seqP50)/float64(fanP50), float64(seqP99)/float64(fanP99))
	}
}

// mapCache is the reports' answer cache of the bench: a map, so that no entry is dropped
// (the appliance's ristretto may decline a Set, which would blur the counts).
type mapCache struct{ m *sync.Map }

func (c mapCache) Get(k string) ([]byte, bool) {
	v, ok := c.m.Load(k)
	if !ok {
		return nil, false
	}
	return v.([]byte), true
}

func (c mapCache) Set(k string, v []byte, _ time.Duration) { c.m.Store(k, v) }

var catOnce = sync.OnceValue(func() *catalog.Catalog {
	cat, err := catalog.Default(catalog.DefaultNames())
	check(err)
	return cat
})

func mustEntry(id string) *catalog.Entry {
	e := catOnce().Entry(id)
	if e == nil {
		check(fmt.Errorf("no route %s", id))
	}
	return e
}

// measure runs f n times, one after another, and returns p50 and p99.
func measure(n int, f func(i int)) (time.Duration, time.Duration) {
	lat := make([]time.Duration, n)
	for i := range n {
		t := time.Now()
		f(i)
		lat[i] = time.Since(t)
	}
	slices.Sort(lat)
	return lat[n/2], lat[min(n-1, n*99/100)]
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "reports bench:", err)
		os.Exit(1)
	}
}
