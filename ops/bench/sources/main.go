// Command sources benchmarks /v1/search/sources against its baseline in one run: a search
// (Serper's recorded answer from a local fixture server, its links pointed at 5 local article
// pages) followed by the 5 pages read in parallel through the browser farm, against reading
// the same 5 pages one after another through /v1/extract. Both go through the catalog
// handlers, so extraction is the same; rounds alternate so the machine's load hits both.
// Usage: go run ./ops/bench/sources [-rounds N] [-size N]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/routes/web"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/search"
	"github.com/peage/appliance/browserfarm"
	"github.com/peage/appliance/browserfarm/farmtest"
	"github.com/peage/appliance/internal/egress"
	"github.com/peage/appliance/ops/benchutil"
)

const pages = 5

func main() {
	rounds := flag.Int("rounds", 10, "measured rounds of each")
	size := flag.Int("size", 0, "browsers in the pool (0: the default for this machine)")
	flag.Parse()
	check(benchutil.Requires("chromium"))
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

	site := httptest.NewServer(farmtest.Site(&farmtest.Hooks{Waiting: make(chan struct{}, 1)}))
	defer site.Close()
	var links []string
	for i := range pages {
		links = append(links, fmt.Sprintf("%s/article?page=%d", site.URL, i+1))
	}
	serper := httptest.NewServer(recordedSerper(links))
	defer serper.Close()

	policy, err := egress.New(egress.Config{Allow: []string{strings.TrimPrefix(site.URL, "http://")}})
	check(err)
	cfg := browserfarm.DefaultConfig()
	if *size > 0 {
		cfg.Size = *size
	}
	cfg.RecycleJobs = 0
	farm, err := browserfarm.New(ctx, cfg, policy, log)
	check(err)
	defer farm.Close()
	for farm.Stats().BrowsersUp < cfg.Size {
		time.Sleep(50 * time.Millisecond)
	}

	spec, _ := upstream.Lookup(search.SerperName)
	spec.BaseURL, spec.Key, spec.RPS = serper.URL, "bench", 0
	specs := map[string]upstream.Spec{search.SerperName: spec}
	chain, err := search.FromPool(httpc.NewPool(specs, httpc.Options{Logger: log}), specs)
	check(err)
	cat, err := catalog.Default(catalog.DefaultNames())
	check(err)
	check(web.With(farm, policy).WithSearch(chain).Bind(cat))
	sources, extract := cat.Entry("search.sources").Handler, cat.Entry("extract").Handler

	// A round counts only when every page was read: on an overloaded machine a page may time
	// out, and a faster answer with fewer pages would flatter the parallel path.
	runSources := func() bool {
		cctx, cancel := context.WithTimeout(ctx, 90*time.Second)
		defer cancel()
		out, err := sources(cctx, &catalog.Request{Args: catalog.Args{"q": "apple inc", "top": int64(pages), "max_chars": int64(4000)}})
		return err == nil && out.(web.Sources).Read == pages
	}
	runSequential := func() bool {
		for _, l := range links {
			cctx, cancel := context.WithTimeout(ctx, 45*time.Second)
			_, err := extract(cctx, &catalog.Request{Args: catalog.Args{"url": l}})
			cancel()
			if err != nil {
				return false
			}
		}
		return true
	}
	runSources() // warm every browser
	runSequential()

	var par, seq []time.Duration
	dropped := 0
	for range *rounds {
		s := time.Now()
		okPar := runSources()
		dp := time.Since(s)
		s = time.Now()
		okSeq := runSequential()
		ds := time.Since(s)
		if !okPar || !okSeq {
			dropped++
			continue
		}
		par, seq = append(par, dp), append(seq, ds)
	}
	if len(par) == 0 {
		check(fmt.Errorf("no round read every page (%d dropped): the machine is too loaded", dropped))
	}
	fmt.Printf("%d pages, %d browsers, %d cores, %d rounds (%d dropped: a page failed)\n", pages, cfg.Size, runtime.NumCPU(), len(par), dropped)
	fmt.Printf("  %-44s p50 %8v  p95 %8v\n", "/v1/search/sources (search + parallel read)", pct(par, 50), pct(par, 95))
	fmt.Printf("  %-44s p50 %8v  p95 %8v\n", "baseline: 5 x /v1/extract one after another", pct(seq, 50), pct(seq, 95))
	fmt.Printf("  %-44s %.2fx faster at p50\n", "ratio baseline / sources", float64(pct(seq, 50))/float64(pct(par, 50)))
}

// recordedSerper answers Serper's recorded search answer with its first links pointed at links.
func recordedSerper(links []string) http.Handler {
	b, err := os.ReadFile("api/upstream/search/testdata/serper_search_apple_inc.json")
	check(err)
	var m map[string]any
	check(json.Unmarshal(b, &m))
	for i, l := range links {
		m["organic"].([]any)[i].(map[string]any)["link"] = l
	}
	out, err := json.Marshal(m)
	check(err)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	})
}

func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(0, min(len(s)-1, i-1))].Round(time.Millisecond)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench sources:", err)
		os.Exit(1)
	}
}
