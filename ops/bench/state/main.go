// Command state benchmarks the durable state behind the webhook inbox, side by side in one run:
//
//  1. deliveries per second into one inbox, through the real HTTP server (fasthttp edge, the
//     hook handler, the journal), with the journal's fsync policy on (SyncAlways) and off
//     (SyncNever); each inbox holds 100 events, so the run fills a fresh inbox every 100;
//  2. the delay from a delivery to a reader already waiting on events_url (long-poll), p50/p99;
//  3. the journal's cost per acknowledged event (an inbox event record of a typical 1 KiB body),
//     one writer and 16 concurrent writers (group commit), SyncAlways vs SyncNever, with ratios.
//
// It serves on 127.0.0.1 only and writes under -dir (default: a temporary directory on the
// same filesystem as the system's temp dir; pass the appliance's state disk to measure that).
// Usage: go run ./ops/bench/state [-dir DIR] [-events N] [-polls N]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/routes/infra"
	"github.com/peage/appliance/api/server"
	"github.com/peage/appliance/internal/journal"
	"github.com/peage/appliance/internal/state"
)

func main() {
	dir := flag.String("dir", "", "directory for the journals (default: a new temporary directory)")
	events := flag.Int("events", 2000, "deliveries per policy in test 1")
	polls := flag.Int("polls", 300, "long-poll wake-ups measured in test 2")
	records := flag.Int("records", 2000, "journal records per configuration in test 3")
	flag.Parse()
	if *dir == "" {
		d, err := os.MkdirTemp("", "bench-state-")
		check(err)
		defer os.RemoveAll(d)
		*dir = d
	}
	fmt.Printf("state bench: journals under %s, %s\n\n", *dir, time.Now().UTC().Format(time.RFC3339))

	fmt.Println("1. deliveries into one inbox over HTTP (16 concurrent senders; fresh inbox every 100 events)")
	fmt.Printf("   %-12s %12s %12s %12s\n", "fsync", "events/s", "p50", "p99")
	rates := map[journal.Sync]float64{}
	for _, sp := range []journal.Sync{journal.SyncAlways, journal.SyncNever} {
		rate, p50, p99 := deliveries(filepath.Join(*dir, "deliver-"+sp.String()), sp, *events)
		rates[sp] = rate
		fmt.Printf("   %-12s %12.0f %12s %12s\n", sp, rate, p50.Round(time.Microsecond), p99.Round(time.Microsecond))
	}
	fmt.Printf("   ratio never/always: %.2fx\n\n", rates[journal.SyncNever]/rates[journal.SyncAlways])

	fmt.Println("2. delivery → waiting long-poll reader (HTTP both ways, SyncAlways)")
	p50, p99, mean := wake(filepath.Join(*dir, "wake"), *polls)
	fmt.Printf("   samples %d: p50 %s, p99 %s, mean %s\n\n", *polls, p50.Round(time.Microsecond), p99.Round(time.Microsecond), mean.Round(time.Microsecond))

	fmt.Println("3. journal cost per acknowledged event record (1 KiB body, JSON)")
	fmt.Printf("   %-10s %-8s %14s %12s\n", "fsync", "writers", "per event", "events/s")
	cost := map[string]time.Duration{}
	for _, writers := range []int{1, 16} {
		for _, sp := range []journal.Sync{journal.SyncAlways, journal.SyncNever} {
			per := journalCost(filepath.Join(*dir, fmt.Sprintf("j-%s-%d", sp, writers)), sp, writers, *records)
			cost[fmt.Sprint(sp, writers)] = per
			fmt.Printf("   %-10s %-8d %14s %12.0f\n", sp, writers, per.Round(100*time.Nanosecond), float64(time.Second)/float64(per))
		}
	}
	for _, writers := range []int{1, 16} {
		a, n := cost[fmt.Sprint(journal.SyncAlways, writers)], cost[fmt.Sprint(journal.SyncNever, writers)]
		fmt.Printf("   %d writer(s): SyncAlways costs %.1fx SyncNever per event\n", writers, float64(a)/float64(n))
	}
	g1, g16 := cost[fmt.Sprint(journal.SyncAlways, 1)], cost[fmt.Sprint(journal.SyncAlways, 16)]
	fmt.Printf("   group commit: SyncAlways per event with 16 writers is %.1fx cheaper than with 1\n", float64(g1)/float64(g16))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

var quiet = slog.New(slog.DiscardHandler)

// freeGate runs paid calls (creating the inboxes) without payment: the bench measures state.
type freeGate struct{}

func (freeGate) Charge(ctx context.Context, _ *paywall.Call, work func(context.Context) (any, error)) (any, map[string]string, error) {
	out, err := work(ctx)
	return out, nil, err
}

type rig struct {
	base   string
	store  *state.Store
	client *http.Client
	stop   func()
}

func start(dir string, sp journal.Sync) *rig {
	st, err := state.Open(dir, state.Options{Sync: sp, Logger: quiet, NoBackground: true})
	check(err)
	cat, err := catalog.Default(catalog.DefaultNames())
	check(err)
	check(infra.With(st, nil).Bind(cat))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	cfg := server.DefaultConfig()
	cfg.Addr, cfg.BaseURL = ln.Addr().String(), "http://"+ln.Addr().String()
	srv := server.New(cfg, cat, server.Options{Gate: freeGate{}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx, ln); close(done) }()
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	return &rig{base: cfg.BaseURL, store: st, client: &http.Client{Transport: tr, Timeout: 60 * time.Second},
		stop: func() { cancel(); <-done; st.Close() }}
}

func (r *rig) do(method, url, ct, body string) []byte {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	check(err)
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	resp, err := r.client.Do(req)
	check(err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		check(fmt.Errorf("%s %s: %d %s", method, url, resp.StatusCode, b))
	}
	return b
}

func (r *rig) inbox() infra.InboxResult {
	var in infra.InboxResult
	check(json.Unmarshal(r.do("POST", r.base+"/v1/callbacks?ttl_hours=1", "", ""), &in))
	return in
}

var payload = `{"type":"payment.succeeded","id":"evt_1","data":{"amount":1234,"currency":"eur","note":"` + strings.Repeat("x", 900) + `"}}`

// deliveries sends n events, 100 per inbox, from 16 concurrent senders.
func deliveries(dir string, sp journal.Sync, n int) (rate float64, p50, p99 time.Duration) {
	r := start(dir, sp)
	defer r.stop()
	var lat []time.Duration
	var mu sync.Mutex
	var total time.Duration
	for sent := 0; sent < n; sent += 100 {
		in := r.inbox()
		jobs := make(chan struct{}, 100)
		for range 100 {
			jobs <- struct{}{}
		}
		close(jobs)
		var wg sync.WaitGroup
		t0 := time.Now()
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range jobs {
					s := time.Now()
					r.do("POST", in.CallbackURL, "application/json", payload)
					d := time.Since(s)
					mu.Lock()
					lat = append(lat, d)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		total += time.Since(t0)
	}
	slices.Sort(lat)
	return float64(len(lat)) / total.Seconds(), pct(lat, 50), pct(lat, 99)
}

// wake measures delivery → reader wake-up: the reader is parked on events_url before each send.
func wake(dir string, n int) (p50, p99, mean time.Duration) {
	r := start(dir, journal.SyncAlways)
	defer r.stop()
	var lat []time.Duration
	var in infra.InboxResult
	for i := 0; i < n; i++ {
		if i%100 == 0 {
			in = r.inbox()
		}
		after := i % 100
		got := make(chan time.Time, 1)
		go func() {
			r.do("GET", fmt.Sprintf("%s&after=%d&wait=10", in.EventsURL, after), "", "")
			got <- time.Now()
		}()
		time.Sleep(3 * time.Millisecond) // let the reader park
		sent := time.Now()
		r.do("POST", in.CallbackURL, "application/json", `{"n":1}`)
		lat = append(lat, (<-got).Sub(sent))
	}
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	slices.Sort(lat)
	return pct(lat, 50), pct(lat, 99), sum / time.Duration(len(lat))
}

// journalCost appends records the size of an inbox event record and returns wall time per record.
func journalCost(dir string, sp journal.Sync, writers, n int) time.Duration {
	j, err := journal.Open(journal.Options{Dir: dir, Name: "bench", Sync: sp, Logger: quiet})
	check(err)
	defer j.Close()
	rec, _ := json.Marshal(map[string]any{"op": "event.put", "event": state.Event{Inbox: strings.Repeat("a", 32), Seq: 1,
		ReceivedAt: time.Now(), Method: "POST", Header: map[string][]string{"Content-Type": {"application/json"}},
		Kind: "json", Body: []byte(payload)}})
	per := n / writers
	var wg sync.WaitGroup
	t0 := time.Now()
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				check(j.Append(rec))
			}
		}()
	}
	wg.Wait()
	return time.Since(t0) / time.Duration(per*writers)
}

func pct(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	return sorted[min(max(i-1, 0), len(sorted)-1)]
}
