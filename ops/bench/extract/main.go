// Command extract scores main-content extraction on trafilatura's evaluation set, the way
// trafilatura scores itself (tests/eval_common.py): for each page, snippets that must be in
// the extraction and snippets that must not, matched as whitespace-normalised substrings.
// Four rows in the same pass: the appliance's pipeline (browserfarm/extract/article) through
// the browser farm, as /v1/extract reads a page (the rendered DOM with the browser's layout
// signals and the server's own HTML, one of them chosen); the same pipeline on the page's own
// HTML alone, so what the browser costs or brings is one subtraction; go-trafilatura alone
// and readability (readeck fork) alone on that HTML. The page's HTML is its file decoded by
// browserfarm/extract/htmlcharset. Pages are served from 127.0.0.1 as bare text/html (no
// charset: the undeclared UTF-8 pages are then read as a browser reads them) and rendered by
// the real browser farm, which may reach only that address. It also times the extraction
// step (after the page is read) on every page and on the farm's typical article page.
//
// The set is not in this repository: give the folder holding evaldata.json and eval/ (and
// cache/), that is the tests/ folder of github.com/adbar/trafilatura, as -eval or in
// PEAGE_EXTRACT_EVAL. Without it the program says so and exits 0, so `make bench` runs where
// the data is absent.
//
// Usage: go run ./ops/bench/extract -eval DIR [-n N | -only I,J] [-dump DIR | -rendered DIR] [-misses N]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/peage/appliance/browserfarm"
	"github.com/peage/appliance/browserfarm/extract/article"
	"github.com/peage/appliance/browserfarm/extract/htmlcharset"
	"github.com/peage/appliance/browserfarm/farmtest"
	"github.com/peage/appliance/internal/egress"
	"github.com/peage/appliance/ops/benchutil"
)

// item is one annotated page of evaldata.json.
type item struct {
	URL     string
	File    string   `json:"file"`
	With    []string `json:"with"`
	Without []string `json:"without"`
	path    string
	idx     int // position in the whole set sorted by URL: names its page and its dump
}

// rendered is what the farm returned for one page, as -dump writes it.
type rendered struct {
	HTML           string              `json:"html"`
	ServerHTML     string              `json:"server_html,omitempty"`
	Misdecoded     bool                `json:"misdecoded,omitempty"`
	ReadAtDeadline bool                `json:"read_at_deadline,omitempty"`
	FinalURL       string              `json:"final_url"`
	Layout         *browserfarm.Layout `json:"layout"`
	Err            string              `json:"err,omitempty"`
	Timings        browserfarm.Timings `json:"timings"`
}

// page is one page as the rows read it: the farm's result and the page's own HTML.
type page struct {
	r   rendered
	raw string // the file, decoded
	url string
}

type extractor struct {
	name string
	farm bool // reads what the farm rendered: a page the farm lost is lost to it
	run  func(p page) (article.Content, error)
}

var extractors = []extractor{
	{"pipeline, farm", true, func(p page) (article.Content, error) {
		return article.ExtractBest(article.Sources{
			Rendered: article.Page{HTML: p.r.HTML, ContentType: "text/html", URL: p.r.FinalURL, Signals: (*article.Signals)(p.r.Layout)},
			Server:   p.r.ServerHTML, RenderedMisdecoded: p.r.Misdecoded})
	}},
	{"pipeline, raw HTML", false, func(p page) (article.Content, error) {
		return article.Extract(article.Page{HTML: p.raw, ContentType: "text/html", URL: p.url})
	}},
	{"go-trafilatura, raw", false, func(p page) (article.Content, error) { return article.TrafilaturaAlone(p.raw, p.url) }},
	{"readability, raw", false, func(p page) (article.Content, error) { return article.ReadabilityAlone(p.raw, p.url) }},
}

// score accumulates trafilatura's confusion counts.
type score struct {
	tp, fp, fn, tn, lost int
	times                []time.Duration
}

func (s *score) add(it item, text string) {
	t := norm(text)
	for _, w := range it.With {
		if strings.Contains(t, norm(w)) {
			s.tp++
		} else {
			s.fn++
		}
	}
	for _, w := range it.Without {
		if strings.Contains(t, norm(w)) {
			s.fp++
		} else {
			s.tn++
		}
	}
}

func (s *score) figures() (p, r, acc, f float64) {
	p = float64(s.tp) / float64(max(1, s.tp+s.fp))
	r = float64(s.tp) / float64(max(1, s.tp+s.fn))
	acc = float64(s.tp+s.tn) / float64(max(1, s.tp+s.fp+s.fn+s.tn))
	if p+r > 0 {
		f = 2 * p * r / (p + r)
	}
	return
}

func norm(s string) string { return strings.Join(strings.Fields(s), " ") }

func main() {
	dir := flag.String("eval", os.Getenv("PEAGE_EXTRACT_EVAL"), "trafilatura's tests/ folder (evaldata.json, eval/, cache/)")
	n := flag.Int("n", 0, "score only the first N pages, sorted by URL (0: all)")
	dump := flag.String("dump", "", "also write each rendered page to this folder (for -rendered)")
	from := flag.String("rendered", "", "score pages rendered earlier by -dump instead of rendering them (tuning only)")
	size := flag.Int("size", 0, "browsers in the pool (0: the default for this machine)")
	scripts := flag.Bool("scripts", false, "let the pages' own scripts run (off: the snapshots' scripts redirect to their origin or to https, which loopback cannot serve)")
	verbose := flag.Bool("v", false, "list the snippets on which the pipeline through the farm and on the raw HTML disagree")
	only := flag.String("only", "", "score only these pages, by their place in the set sorted by URL (comma-separated, as -v and -misses name them)")
	pipelineOnly := flag.Bool("pipeline-only", false, "run the pipeline's two rows alone, not the two baselines (tuning only)")
	misses := flag.Int("misses", 0, "list the N pages where the pipeline misses or keeps the most snippets, with those snippets")
	flag.Parse()
	if *dir == "" {
		fmt.Println("skipped: no evaluation set given (set -eval or PEAGE_EXTRACT_EVAL to trafilatura's tests/ folder)")
		return
	}
	if *from == "" {
		check(benchutil.Requires("chromium"))
	}
	items, err := load(*dir)
	check(err)
	if *only != "" {
		items, err = pick(items, *only)
		check(err)
	}
	if *n > 0 && *n < len(items) {
		items = sample(items, *n)
	}
	pages, renderTime, err := render(items, *from, *dump, *size, *scripts)
	check(err)
	if *from != "" {
		items, pages = keepRendered(items, pages)
	}

	if *pipelineOnly {
		extractors = extractors[:2]
	}
	scores := make([]score, len(extractors))
	readAtDeadline := 0
	byMethod := map[string]int{}
	var worst []pageMiss
	for i, it := range items {
		r := pages[i]
		b, err := os.ReadFile(it.path)
		check(err)
		raw, _ := htmlcharset.DecodeHTML(b, "text/html")
		p := page{r: r, raw: raw, url: it.URL}
		texts := make([]string, len(extractors))
		for k, ex := range extractors {
			if ex.farm && r.Err != "" {
				scores[k].lost++
				scores[k].add(it, "")
				continue
			}
			start := time.Now()
			c, err := ex.run(p)
			scores[k].times = append(scores[k].times, time.Since(start))
			if err != nil || strings.TrimSpace(c.Text) == "" {
				scores[k].lost++
			}
			scores[k].add(it, c.Text)
			texts[k] = c.Text
			if k == 0 {
				byMethod[c.Source+":"+c.Method]++
				if r.ReadAtDeadline {
					readAtDeadline++
				}
			}
		}
		if *verbose && len(texts) > 1 {
			disagree(it, texts[0], texts[1])
		}
		if *misses > 0 {
			worst = append(worst, missesOf(it, texts[0], r.Err))
		}
	}
	if *misses > 0 {
		printMisses(worst, *misses)
	}
	fmt.Printf("trafilatura evaluation set: %d pages (%d snippets to find, %d to leave out), rendered by the farm in %v\n\n",
		len(items), count(items, true), count(items, false), renderTime.Round(time.Second))
	fmt.Printf("%-22s %9s %9s %9s %9s %6s %9s %9s\n", "extractor", "precision", "recall", "accuracy", "F-score", "lost", "p50", "p95")
	// lost: pages the farm failed to render, or whose extraction is empty.
	for k, ex := range extractors {
		p, r, acc, f := scores[k].figures()
		fmt.Printf("%-22s %9.4f %9.4f %9.4f %9.4f %6d %9v %9v\n", ex.name, p, r, acc, f, scores[k].lost,
			pct(scores[k].times, 50), pct(scores[k].times, 95))
	}
	_, _, _, ff := scores[0].figures()
	_, _, _, fr := scores[1].figures()
	fmt.Printf("\npipeline F through the farm / on the raw HTML = %.4f (target >= 1, no page lost)\n", ff/fr)
	if len(extractors) > 2 {
		_, _, _, ft := scores[2].figures()
		fmt.Printf("pipeline F through the farm / go-trafilatura F = %.4f (target > 1); trafilatura's published floor 0.9253 (fallback)\n", ff/ft)
	}
	fmt.Printf("pipeline through the farm, source:candidate chosen: %v; pages read at their deadline: %d\n", byMethod, readAtDeadline)
	wall, cpu := articleP50(200)
	fmt.Printf("\nextraction step on the farm's typical article page (/article, %d runs): p50 %v wall, %v CPU (target < 20ms)\n", 200, wall, cpu)
}

// disagree prints the snippets the pipeline gets right through the farm and wrong on the raw
// HTML, or the other way round.
func disagree(it item, ours, theirs string) {
	o, t := norm(ours), norm(theirs)
	for _, w := range it.With {
		if a, b := strings.Contains(o, norm(w)), strings.Contains(t, norm(w)); a != b {
			fmt.Printf("%d %s with    farm=%v raw=%v %q\n", it.idx, it.URL, a, b, w)
		}
	}
	for _, w := range it.Without {
		if a, b := strings.Contains(o, norm(w)), strings.Contains(t, norm(w)); a != b {
			fmt.Printf("%d %s without farm=%v raw=%v %q\n", it.idx, it.URL, a, b, w)
		}
	}
}

// pageMiss is what the pipeline got wrong on one page.
type pageMiss struct {
	it      item
	err     string
	missed  []string // snippets to find that the extraction lacks
	kept    []string // snippets to leave out that it holds
	textLen int
}

func missesOf(it item, text, renderErr string) pageMiss {
	t := norm(text)
	m := pageMiss{it: it, err: renderErr, textLen: len(t)}
	for _, w := range it.With {
		if !strings.Contains(t, norm(w)) {
			m.missed = append(m.missed, w)
		}
	}
	for _, w := range it.Without {
		if strings.Contains(t, norm(w)) {
			m.kept = append(m.kept, w)
		}
	}
	return m
}

// printMisses lists the pages with the most wrong snippets first, to find systematic errors.
func printMisses(ms []pageMiss, n int) {
	sort.SliceStable(ms, func(i, j int) bool {
		return len(ms[i].missed)+len(ms[i].kept) > len(ms[j].missed)+len(ms[j].kept)
	})
	for _, m := range ms[:min(n, len(ms))] {
		if len(m.missed)+len(m.kept) == 0 {
			break
		}
		fmt.Printf("%d %s (%s, %d chars extracted) %s\n", m.it.idx, m.it.URL, m.it.File, m.textLen, m.err)
		for _, w := range m.missed {
			fmt.Printf("\tmissed %q\n", w)
		}
		for _, w := range m.kept {
			fmt.Printf("\tkept   %q\n", w)
		}
	}
	fmt.Println()
}

// pick keeps the pages named by their place in the whole set.
func pick(items []item, list string) ([]item, error) {
	var out []item
	for _, f := range strings.Split(list, ",") {
		i, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || i < 0 || i >= len(items) {
			return nil, fmt.Errorf("-only: %q is not a page number below %d", f, len(items))
		}
		out = append(out, items[i])
	}
	return out, nil
}

// keepRendered keeps the pages an earlier -dump rendered, for tuning on a partial dump.
func keepRendered(items []item, pages []rendered) ([]item, []rendered) {
	var its []item
	var ps []rendered
	for i, p := range pages {
		if p.Err != "not rendered" {
			its, ps = append(its, items[i]), append(ps, p)
		}
	}
	return its, ps
}

// sample takes n pages spread evenly over the set, so a partial run sees every part of it
// (the "hard" pages sort together).
func sample(items []item, n int) []item {
	out := make([]item, 0, n)
	for i := range n {
		out = append(out, items[i*len(items)/n])
	}
	return out
}

func count(items []item, with bool) int {
	n := 0
	for _, it := range items {
		if with {
			n += len(it.With)
		} else {
			n += len(it.Without)
		}
	}
	return n
}

func load(dir string) ([]item, error) {
	b, err := os.ReadFile(filepath.Join(dir, "evaldata.json"))
	if err != nil {
		return nil, err
	}
	var m map[string]item
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("evaldata.json: %w", err)
	}
	var items []item
	for u, it := range m {
		it.URL = u
		for _, sub := range []string{"cache", "eval"} {
			p := filepath.Join(dir, sub, it.File)
			if _, err := os.Stat(p); err == nil {
				it.path = p
				break
			}
		}
		if it.path == "" {
			return nil, fmt.Errorf("%s: file %s not found under cache/ or eval/", u, it.File)
		}
		items = append(items, it)
	}
	sort.Slice(items, func(i, j int) bool { return items[i].URL < items[j].URL })
	for i := range items {
		items[i].idx = i
	}
	return items, nil
}

// render loads every page through the farm (or reads an earlier dump).
func render(items []item, from, dump string, size int, scripts bool) ([]rendered, time.Duration, error) {
	out := make([]rendered, len(items))
	if from != "" {
		for i, it := range items {
			b, err := os.ReadFile(filepath.Join(from, strconv.Itoa(it.idx)+".json"))
			if errors.Is(err, os.ErrNotExist) {
				out[i].Err = "not rendered"
				continue
			}
			if err != nil {
				return nil, 0, err
			}
			if err := json.Unmarshal(b, &out[i]); err != nil {
				return nil, 0, err
			}
		}
		return out, 0, nil
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/p/{i}", func(w http.ResponseWriter, r *http.Request) {
		i, err := strconv.Atoi(r.PathValue("i"))
		if err != nil || i < 0 || i >= len(items) {
			http.NotFound(w, r)
			return
		}
		// i is the position in this run's list; the dump is named by the page's place in the set.
		b, err := os.ReadFile(items[i].path)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		// The snapshots are stored as UTF-8 whatever charset their markup still declares, and
		// trafilatura's evaluation decodes them as such; without the header Chromium believes
		// a stale <meta charset> and turns the text into mojibake for every extractor alike.
		// Bare text/html, as a server that declares no charset sends it: the snapshots are
		// stored as UTF-8 whatever charset their markup still declares, and a browser reads
		// the undeclared ones by its locale's default; the farm's own decoding of the server's
		// HTML is what keeps them whole (issue 30).
		w.Header().Set("Content-Type", "text/html")
		if !scripts {
			// The set is saved pages: their inline scripts check where they run and send the
			// browser to the original site or to https, and the page is lost to every
			// extractor alike. The snapshots were annotated as saved, without their scripts.
			w.Header().Set("Content-Security-Policy", "script-src 'none'")
		}
		_, _ = w.Write(b)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, 0, err
	}
	site := httptest.NewUnstartedServer(mux)
	site.Listener = ln
	site.Start()
	defer site.Close()
	policy, err := egress.New(egress.Config{Allow: []string{ln.Addr().String()}})
	if err != nil {
		return nil, 0, err
	}
	cfg := browserfarm.DefaultConfig()
	if size > 0 {
		cfg.Size = size
	}
	cfg.Queue = 4 * cfg.Size
	cfg.RecycleJobs = 200
	// The set has pages Chromium needs many CPU seconds to build (one holds 393 iframes: 17 s
	// at load 15 on two cores), so on a shared machine the product's job budget would lose
	// them to the machine, not to extraction, which is what this program measures.
	cfg.JobTimeout = 3 * time.Minute
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	ctx := context.Background()
	farm, err := browserfarm.New(ctx, cfg, policy, log)
	if err != nil {
		return nil, 0, err
	}
	defer farm.Close()
	for farm.Stats().BrowsersUp < cfg.Size {
		time.Sleep(10 * time.Millisecond)
	}
	if dump != "" {
		if err := os.MkdirAll(dump, 0o755); err != nil {
			return nil, 0, err
		}
	}
	start := time.Now()
	next := make(chan int)
	var wg sync.WaitGroup
	var done sync.Mutex
	finished := 0
	for range cfg.Size {
		wg.Go(func() {
			for i := range next {
				out[i] = renderOne(ctx, farm, site.URL+"/p/"+strconv.Itoa(i))
				if dump != "" {
					b, _ := json.Marshal(out[i])
					_ = os.WriteFile(filepath.Join(dump, strconv.Itoa(items[i].idx)+".json"), b, 0o644)
				}
				done.Lock()
				finished++
				if finished%100 == 0 {
					fmt.Fprintf(os.Stderr, "rendered %d/%d\n", finished, len(items))
				}
				done.Unlock()
			}
		})
	}
	for i := range items {
		next <- i
	}
	close(next)
	wg.Wait()
	return out, time.Since(start), nil
}

func renderOne(ctx context.Context, farm *browserfarm.Farm, u string) rendered {
	var err error
	for attempt := range 3 {
		cctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
		var res *browserfarm.Result
		res, err = farm.Do(cctx, browserfarm.Task{URL: u, Layout: true, ServerHTML: true})
		cancel()
		if err == nil {
			final := res.FinalURL
			if final == "" {
				final = u
			}
			return rendered{HTML: res.HTML, ServerHTML: res.ServerHTML, Misdecoded: res.Misdecoded(),
				ReadAtDeadline: res.ReadAtDeadline, FinalURL: final, Layout: res.Layout, Timings: res.Timings}
		}
		// A busy queue, a browser being replaced or a machine too busy to render within the
		// farm's budget is the bench's problem, not the page's.
		if !retryable(err) {
			break
		}
		time.Sleep(time.Duration(attempt+1) * 500 * time.Millisecond)
	}
	return rendered{Err: err.Error()}
}

func retryable(err error) bool {
	var code interface{ Status() int }
	if errors.As(err, &code) {
		s := code.Status()
		return s == http.StatusTooManyRequests || s == http.StatusServiceUnavailable || s == http.StatusGatewayTimeout
	}
	return false
}

// articleP50 times the pipeline alone on the farm's article page as Chromium serialises it:
// the wall time, and the CPU time of the thread doing it, which a busy shared machine does not
// inflate.
func articleP50(runs int) (wall, cpu time.Duration) {
	page := farmtest.Article
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ws := make([]time.Duration, 0, runs)
	cs := make([]time.Duration, 0, runs)
	for range runs {
		c0 := threadCPU()
		s := time.Now()
		_, err := article.Extract(article.Page{HTML: page, ContentType: "text/html", URL: "https://example.org/article"})
		check(err)
		ws = append(ws, time.Since(s))
		cs = append(cs, threadCPU()-c0)
	}
	return pct(ws, 50), pct(cs, 50)
}

// threadCPU is the CPU time the calling OS thread has used (Linux clock_gettime with
// CLOCK_THREAD_CPUTIME_ID: exact, where getrusage counts scheduler ticks).
func threadCPU() time.Duration {
	const clockThreadCPUTime = 3
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}

func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(0, min(len(s)-1, i-1))].Round(100 * time.Microsecond)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
