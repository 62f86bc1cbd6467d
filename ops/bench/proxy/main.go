// Command proxy benchmarks proxyd side by side with squid in one run, on loopback only:
//
//  1. CPU seconds (user + system of the proxy process alone, from /proc/PID/stat) per GiB
//     relayed, under four loads: one stream and -streams streams, each as fast as it goes and
//     at a fixed offered rate over all streams (-rate-mbit, 1 Gbit/s: a home line's ceiling);
//  2. throughput under the same loads;
//  3. tunnel setup (TCP connect + CONNECT + 200 + first byte back), p50 and p99, timed in turns
//     (one setup on each path, in a new random order each round) so that every path meets the
//     same load, and the proxy process's CPU time per setup;
//  4. memory per open idle tunnel: the RSS growth of the proxy process with -idle tunnels open.
//
// The paths: direct to a local sink; a raw splice relay (io.Copy between two *net.TCPConn, no
// CONNECT, auth or meter) as the ceiling of any Go proxy hop; proxyd metered with auth on its
// real state store (every meter write fsynced); the same proxyd with meters in memory (what the
// fsyncs cost); Debian's squid (a temporary config on a loopback port allowing CONNECT to the
// sink). proxyd and squid run as child processes so that only their own CPU and memory count;
// the relay runs inside the first proxyd child and is timed alone. The load average before the
// run is printed with the figures, since a busy machine inflates them all.
//
// Usage: go run ./ops/bench/proxy [-mib 512] [-streams 100] [-stream-mib 8] [-rate-mbit 1000]
// [-setups 10000] [-setup-only] [-idle 5000] [-copy auto|splice|buffered] [-procs N] [-window BYTES] [-slack BYTES]
// [-cpuprofile DIR] (a CPU profile of each proxyd child over its whole life, for go tool pprof)
// [-variants 'ENV=V ...;...'] (more metered proxyd children, each with its own environment,
// listed under proxyd: on a shared machine only a comparison within one run means anything)
package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/peage/appliance/internal/loopback"
	"github.com/peage/appliance/ops/benchutil"
	"github.com/peage/appliance/proxyd"
)

func main() {
	if os.Getenv("BENCH_PROXYD_CHILD") != "" {
		if err := child(); err != nil {
			fmt.Fprintln(os.Stderr, "proxyd child:", err)
			os.Exit(1)
		}
		return
	}
	mib := flag.Int64("mib", 512, "MiB per single-stream run")
	runs := flag.Int("runs", 3, "single-stream runs per path (best is kept)")
	streams := flag.Int("streams", 100, "concurrent streams")
	streamMiB := flag.Int64("stream-mib", 8, "MiB per concurrent stream")
	copyPath := flag.String("copy", proxyd.DefaultConfig().CopyPath, "proxyd copy path: auto (measured at start), splice or buffered")
	procs := flag.String("procs", "", "GOMAXPROCS of the proxyd children (empty: Go's default)")
	rateMbit := flag.Int64("rate-mbit", 1000, "offered rate of the paced rows, over all streams (a home line's ceiling)")
	setups := flag.Int("setups", 10000, "tunnel setups timed on each path, after 200 untimed rounds (the machine's noise comes in bursts of tens of setups, which 3000 left to decide the p99)")
	idle := flag.Int("idle", 5000, "idle tunnels held open for the memory figure")
	window := flag.Int64("window", proxyd.DefaultConfig().SpliceWindowBytes, "proxyd splice window in bytes (0: user-space copy only)")
	slack := flag.Int64("slack", proxyd.DefaultConfig().MeterSlackBytes, "proxyd meter slack in bytes")
	profDir := flag.String("cpuprofile", "", "directory for a CPU profile of each proxyd child (proxyd-state.pprof, proxyd-mem.pprof, ...)")
	setupOnly := flag.Bool("setup-only", false, "time the tunnel setups only (no throughput rows, no idle memory)")
	variants := flag.String("variants", "", "extra metered proxyd children, ';'-separated, each with its own environment (e.g. 'GOMAXPROCS=2;GODEBUG=x=1'): an A/B in one run")
	flag.Parse()
	if err := benchutil.Requires("squid"); err != nil {
		fmt.Fprintln(os.Stderr, "bench proxy:", err)
		os.Exit(1)
	}
	os.Setenv("BENCH_CPUPROFILE", *profDir)
	os.Setenv("BENCH_VARIANTS", *variants)
	os.Setenv("BENCH_WINDOW", strconv.FormatInt(*window, 10))
	os.Setenv("BENCH_SLACK", strconv.FormatInt(*slack, 10))
	os.Setenv("BENCH_COPY", *copyPath)
	os.Setenv("BENCH_PROXYD_PROCS", *procs)
	if err := run(*mib, *runs, *streams, *streamMiB, *rateMbit, *setups, *idle, *setupOnly); err != nil {
		fmt.Fprintln(os.Stderr, "bench proxy:", err)
		os.Exit(1)
	}
}

const (
	nameRelay     = "raw splice relay (no proxy logic)"
	nameProxyd    = "proxyd (metered, auth)"
	nameProxydMem = "  same, meters not fsynced"
	nameSquid     = "squid"
)

// path is one way to the sink: dial returns a connection on which "down N\n" may be sent.
type path struct {
	name string
	dial func() (net.Conn, error)
	pid  int // the proxy process, for memory
}

// load is one way of driving the proxies: streams at once, bytes each, and an offered rate for
// all of them together (0: as fast as they go).
type load struct {
	name    string
	streams int
	each    int64
	rate    int64 // bytes per second over all streams
	runs    int
}

// result is one path under one load: throughput (best run) and the proxy process's CPU time
// (user + system, all runs) per GiB relayed.
type result struct {
	mibs      float64
	cpuPerGiB float64 // seconds; NaN when the path has no proxy process
}

func run(mib int64, runs, streams int, streamMiB int64, rateMbit int64, setups, idle int, setupOnly bool) error {
	if _, err := proxyd.RaiseFileLimit(); err != nil {
		return fmt.Errorf("raise the descriptor limit: %w", err)
	}
	load0 := loadAvg()
	if err := benchutil.Need("squid", "squid"); err != nil {
		if _, err2 := os.Stat("/usr/sbin/squid"); err2 != nil {
			return err
		}
	}
	sink, err := startSink()
	if err != nil {
		return err
	}
	defer sink.Close()
	dir, err := os.MkdirTemp("", "peage-bench-proxy-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	px, err := startProxyd(filepath.Join(dir, "state"), "state", sink.Addr().String(), idle+streams+16)
	if err != nil {
		return err
	}
	defer px.stop()
	pm, err := startProxyd(filepath.Join(dir, "mem"), "mem", sink.Addr().String(), idle+streams+16)
	if err != nil {
		return err
	}
	defer pm.stop()
	sq, err := startSquid(dir, sink.Addr().String(), idle+streams+16)
	if err != nil {
		return err
	}
	defer sq.stop()

	// Variants are listed right under proxyd, each a metered child with its own environment.
	var variantPaths []path
	for i, v := range strings.Split(os.Getenv("BENCH_VARIANTS"), ";") {
		if v == "" {
			continue
		}
		pv, err := startProxyd(filepath.Join(dir, fmt.Sprint("variant", i)), "state", sink.Addr().String(), idle+streams+16, strings.Fields(v)...)
		if err != nil {
			return err
		}
		defer pv.stop()
		variantPaths = append(variantPaths, path{name: "  " + v, dial: func() (net.Conn, error) { return connect(pv.addr, sink.Addr().String(), pv.key) }, pid: pv.cmd.Process.Pid})
	}
	paths := []path{
		{name: "direct", dial: func() (net.Conn, error) { return net.Dial("tcp", sink.Addr().String()) }},
		{name: nameRelay, dial: func() (net.Conn, error) { return net.Dial("tcp", px.relay) }, pid: px.cmd.Process.Pid},
		{name: nameProxyd, dial: func() (net.Conn, error) { return connect(px.addr, sink.Addr().String(), px.key) }, pid: px.cmd.Process.Pid},
		{name: nameProxydMem, dial: func() (net.Conn, error) { return connect(pm.addr, sink.Addr().String(), pm.key) }, pid: pm.cmd.Process.Pid},
		{name: nameSquid, dial: func() (net.Conn, error) { return connect(sq.addr, sink.Addr().String(), "") }, pid: sq.cmd.Process.Pid},
	}
	paths = slices.Insert(paths, 3, variantPaths...)
	rate := rateMbit * 1e6 / 8
	loads := []load{
		{name: "1 stream", streams: 1, each: mib << 20, runs: runs},
		{name: fmt.Sprintf("1 stream at %d Mbit/s", rateMbit), streams: 1, each: mib << 20, rate: rate, runs: 1},
		{name: fmt.Sprintf("%d streams", streams), streams: streams, each: streamMiB << 20, runs: runs},
		{name: fmt.Sprintf("%d streams at %d Mbit/s", streams, rateMbit), streams: streams, each: streamMiB << 20, rate: rate, runs: 1},
	}

	res := map[string]map[string]result{}
	for _, p := range paths {
		res[p.name] = map[string]result{}
		if setupOnly {
			continue
		}
		for _, l := range loads {
			r, err := drive(p, l)
			if err != nil {
				return fmt.Errorf("%s, %s: %w", p.name, l.name, err)
			}
			res[p.name][l.name] = r
		}
	}
	// Setups are timed in turns, one on each path, so that every path meets the same load of
	// the machine; the relay shares proxyd's process, so it takes its turns apart, after.
	var proxies, relay []path
	for _, p := range paths {
		if p.name == nameRelay {
			relay = append(relay, p)
		} else {
			proxies = append(proxies, p)
		}
	}
	st, err := setupTimes(proxies, setups)
	if err != nil {
		return err
	}
	rst, err := setupTimes(relay, setups)
	if err != nil {
		return err
	}
	st[nameRelay] = rst[nameRelay]
	mem := map[string]string{}
	for _, p := range paths {
		if p.pid == 0 || p.name == nameRelay || setupOnly {
			mem[p.name] = "—"
			continue
		}
		per, err := idleMemory(p, idle)
		if err != nil {
			return fmt.Errorf("%s idle tunnels: %w", p.name, err)
		}
		mem[p.name] = fmt.Sprintf("%.1f KB", per/1000)
	}

	fmt.Printf("proxy bench: loopback, %d-MiB single stream (best of %d), %d streams × %d MiB, offered rate %d Mbit/s in the paced rows, %d setups, %d idle tunnels; load average before: %s\n\n",
		mib, runs, streams, streamMiB, rateMbit, setups, idle, load0)
	fmt.Printf("proxyd copy path: %s; processors (GOMAXPROCS): %s\n\n", px.copyPath, px.procs)
	if setupOnly {
		fmt.Println("tunnel setup (TCP connect + CONNECT + 200 + first byte), in turns across the paths:")
		var rows [][]string
		for _, p := range paths {
			t := st[p.name]
			cpu := "—"
			if t.cpu > 0 {
				cpu = fmt.Sprintf("%.0f µs", float64(t.cpu)/float64(time.Microsecond))
			}
			rows = append(rows, []string{p.name, fmtDur(t.p50), fmtDur(t.p90), fmtDur(t.p99), fmtDur(t.p999), cpu})
		}
		benchutil.Table([]string{"path", "setup p50", "p90", "p99", "p99.9", "CPU per setup"}, rows)
		return nil
	}
	fmt.Println("CPU seconds (user + system of the proxy process alone) per GiB relayed; ×squid < 1 is better:")
	header := []string{"path"}
	for _, l := range loads {
		header = append(header, l.name, "×squid")
	}
	var rows [][]string
	for _, p := range paths[1:] {
		row := []string{p.name}
		for _, l := range loads {
			c := res[p.name][l.name].cpuPerGiB
			row = append(row, fmt.Sprintf("%.3f", c), ratio(c, res[nameSquid][l.name].cpuPerGiB))
		}
		rows = append(rows, row)
	}
	benchutil.Table(header, rows)

	fmt.Println("\nthroughput (MiB/s), tunnel setup (TCP connect + CONNECT + 200 + first byte) and memory:")
	header = []string{"path"}
	for _, l := range loads {
		header = append(header, l.name, "×squid")
	}
	header = append(header, "setup p50", "setup p99", "CPU per setup", "RSS per idle tunnel")
	rows = nil
	for _, p := range paths {
		row := []string{p.name}
		for _, l := range loads {
			m := res[p.name][l.name].mibs
			row = append(row, fmt.Sprintf("%.0f", m), ratio(m, res[nameSquid][l.name].mibs))
		}
		cpu := "—"
		if c := st[p.name].cpu; c > 0 {
			cpu = fmt.Sprintf("%.0f µs", float64(c)/float64(time.Microsecond))
		}
		rows = append(rows, append(row, fmtDur(st[p.name].p50), fmtDur(st[p.name].p99), cpu, mem[p.name]))
	}
	benchutil.Table(header, rows)

	worst := 0.0
	for _, l := range loads {
		worst = max(worst, res[nameProxyd][l.name].cpuPerGiB/res[nameSquid][l.name].cpuPerGiB)
	}
	fmt.Printf("\ntargets: proxyd CPU per GiB ≤ squid in every row (worst %.2f×); setup p50 ≤ squid (%s vs %s), p99 ≤ squid (%s vs %s); < 20 KB per idle tunnel (%s)\n",
		worst, fmtDur(st[nameProxyd].p50), fmtDur(st[nameSquid].p50), fmtDur(st[nameProxyd].p99), fmtDur(st[nameSquid].p99), mem[nameProxyd])
	return nil
}

// drive runs l on p and returns the best run's throughput and the CPU the proxy process spent
// per GiB over all runs.
func drive(p path, l load) (result, error) {
	var r result
	var cpu time.Duration
	var moved int64
	for i := 0; i < l.runs; i++ {
		before, err := cpuTime(p.pid)
		if err != nil {
			return r, err
		}
		m, err := parallel(p, l.streams, l.each, l.rate)
		if err != nil {
			return r, err
		}
		after, err := cpuTime(p.pid)
		if err != nil {
			return r, err
		}
		cpu += after - before
		moved += int64(l.streams) * l.each
		r.mibs = max(r.mibs, m)
	}
	r.cpuPerGiB = math.NaN()
	if p.pid != 0 {
		r.cpuPerGiB = cpu.Seconds() / (float64(moved) / (1 << 30))
	}
	return r, nil
}

// cpuTime is the user + system time of process pid and all its threads (proc(5): utime and
// stime of /proc/PID/stat, in USER_HZ ticks, which Linux fixes at 100 for user space).
func cpuTime(pid int) (time.Duration, error) {
	if pid == 0 {
		return 0, nil
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name may hold spaces; the fields after it are space-separated.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(ut+st) * (time.Second / 100), nil
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func ratio(a, b float64) string {
	if b == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return "—"
	}
	return fmt.Sprintf("%.2f", a/b)
}

func fmtDur(d time.Duration) string {
	if d == 0 {
		return "—"
	}
	return fmt.Sprintf("%.3f ms", float64(d)/float64(time.Millisecond))
}

// connect opens a CONNECT tunnel through a proxy; the head is read byte by byte so no tunnel
// byte is swallowed.
func connect(proxyAddr, target, key string) (net.Conn, error) {
	c, err := net.Dial("tcp", proxyAddr)
	if err != nil {
		return nil, err
	}
	auth := ""
	if key != "" {
		auth = "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("buyer:"+key)) + "\r\n"
	}
	if _, err := fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s\r\n", target, target, auth); err != nil {
		c.Close()
		return nil, err
	}
	var head []byte
	one := make([]byte, 1)
	for !strings.HasSuffix(string(head), "\r\n\r\n") {
		if _, err := c.Read(one); err != nil {
			c.Close()
			return nil, fmt.Errorf("CONNECT reply: %w", err)
		}
		head = append(head, one[0])
	}
	if !strings.Contains(strings.SplitN(string(head), "\r\n", 2)[0], " 200") {
		c.Close()
		return nil, fmt.Errorf("CONNECT refused: %q", strings.SplitN(string(head), "\r\n", 2)[0])
	}
	return c, nil
}

// parallel downloads n bytes on each of streams tunnels at once; rate (bytes per second over all
// streams, 0: unpaced) is what the sink offers.
func parallel(p path, streams int, n, rate int64) (float64, error) {
	conns := make([]net.Conn, streams)
	for i := range conns {
		c, err := p.dial()
		if err != nil {
			return 0, err
		}
		conns[i] = c
	}
	var wg sync.WaitGroup
	errs := make(chan error, streams)
	start := time.Now()
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			if _, err := fmt.Fprintf(c, "down %d %d\n", n, rate/int64(streams)); err != nil {
				errs <- err
				return
			}
			if got, err := io.Copy(io.Discard, c); err != nil || got != n {
				errs <- fmt.Errorf("got %d of %d: %v", got, n, err)
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	return float64(n*int64(streams)) / (1 << 20) / el.Seconds(), nil
}

// setupTime is one path's tunnel setups: latency percentiles and the proxy process's CPU
// time per setup (0 when the path has no process of its own).
type setupTime struct {
	p50, p90, p99, p999, cpu time.Duration
}

// setupWarmup is how many untimed rounds come first: the first setups of each path are slower
// (fresh processes, cold caches) for a reason the steady state does not have.
const setupWarmup = 200

// setupTimes times n setups on each of ps, in turns (one on each path, then the next round),
// so that a change in the machine's load weighs on every path alike, after setupWarmup
// untimed rounds.
func setupTimes(ps []path, n int) (map[string]setupTime, error) {
	// Each round takes the paths in a new random order, so that every path follows every
	// other equally often: a setup runs while the previous one's tunnel is torn down, and that
	// teardown costs each proxy differently (in a fixed order the path after the direct one
	// always met a quiet machine).
	order := make([]int, len(ps))
	for i := range order {
		order[i] = i
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	rounds := func(n int, each func(i int, d time.Duration)) error {
		for range n {
			rnd.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
			for _, i := range order {
				d, err := setupOnce(ps[i])
				if err != nil {
					return fmt.Errorf("%s setup: %w", ps[i].name, err)
				}
				each(i, d)
			}
		}
		return nil
	}
	if err := rounds(setupWarmup, func(int, time.Duration) {}); err != nil {
		return nil, err
	}
	cpu0 := make([]time.Duration, len(ps))
	for i, p := range ps {
		c, err := cpuTime(p.pid)
		if err != nil {
			return nil, err
		}
		cpu0[i] = c
	}
	ds := make([][]time.Duration, len(ps))
	if err := rounds(n, func(i int, d time.Duration) { ds[i] = append(ds[i], d) }); err != nil {
		return nil, err
	}
	out := map[string]setupTime{}
	for i, p := range ps {
		c, err := cpuTime(p.pid)
		if err != nil {
			return nil, err
		}
		slices.Sort(ds[i])
		t := setupTime{p50: ds[i][n/2], p90: ds[i][n*90/100], p99: ds[i][n*99/100], p999: ds[i][n*999/1000]}
		if p.pid != 0 {
			t.cpu = (c - cpu0[i]) / time.Duration(n)
		}
		out[p.name] = t
	}
	return out, nil
}

// setupOnce opens a tunnel on p, has one byte sent back through it and closes it.
func setupOnce(p path) (time.Duration, error) {
	start := time.Now()
	c, err := p.dial()
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if _, err := io.WriteString(c, "down 1\n"); err != nil {
		return 0, err
	}
	var one [1]byte
	if _, err := io.ReadFull(c, one[:]); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// idleMemory opens n tunnels that carry one request line each and then stay idle, and returns
// the growth of the proxy's resident memory per tunnel.
func idleMemory(p path, n int) (float64, error) {
	time.Sleep(500 * time.Millisecond)
	before, err := rss(p.pid)
	if err != nil {
		return 0, err
	}
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < n; i++ {
		c, err := p.dial()
		if err != nil {
			return 0, fmt.Errorf("tunnel %d: %w", i, err)
		}
		// One small exchange so both directions have run once, as a used-then-idle tunnel has.
		if _, err := io.WriteString(c, "down 1\n"); err != nil {
			return 0, err
		}
		conns = append(conns, c)
	}
	one := make([]byte, 1)
	for _, c := range conns {
		if _, err := io.ReadFull(c, one); err != nil {
			return 0, err
		}
	}
	time.Sleep(time.Second)
	after, err := rss(p.pid)
	if err != nil {
		return 0, err
	}
	return float64(after-before) / float64(n), nil
}

func rss(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return kb * 1024, err
		}
	}
	return 0, errors.New("no VmRSS")
}

// startSink serves "down N R\n": N zero bytes back at R bytes per second (0: as fast as the
// connection takes them), then close. Paced bytes go out in 16 KiB writes, about what a
// receiver on a 1 Gbit/s line reads at once after coalescing. A connection that asks for one
// byte stays open after it, which is what an idle tunnel needs.
func startSink() (net.Listener, error) {
	buf := make([]byte, 256<<10)
	return loopback.Serve(func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReaderSize(c, 64)
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		var n, rate int64
		_, _ = fmt.Sscanf(strings.TrimSpace(line), "down %d %d", &n, &rate)
		idle := n == 1
		chunk := int64(len(buf))
		if rate > 0 {
			chunk = 16 << 10
		}
		start, sent := time.Now(), int64(0)
		for sent < n {
			k := min(n-sent, chunk)
			if _, err := c.Write(buf[:k]); err != nil {
				return
			}
			sent += k
			if rate > 0 {
				time.Sleep(time.Until(start.Add(time.Duration(float64(sent) / float64(rate) * float64(time.Second)))))
			}
		}
		if idle {
			_, _ = io.Copy(io.Discard, br)
		}
	})
}

type proc struct {
	cmd      *exec.Cmd
	addr     string
	key      string
	relay    string
	copyPath string
	procs    string // the child's GOMAXPROCS after proxyd.TuneScheduler
}

func (p *proc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

// startProxyd re-executes this program as a proxyd child on the real state store.
func startProxyd(dir, store, sink string, maxTunnels int, extraEnv ...string) (*proc, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	env := os.Environ()
	// As its unit runs it (systemd/peage-proxyd.service); a variant may override either.
	env = append(env, "GODEBUG="+strings.Trim(os.Getenv("GODEBUG")+","+proxyd.MonitorGODEBUG, ","))
	if p := os.Getenv("BENCH_PROXYD_PROCS"); p != "" {
		env = append(env, "GOMAXPROCS="+p)
	}
	env = append(env, extraEnv...)
	cmd.Env = append(env, "BENCH_PROXYD_CHILD=1", "BENCH_STORE="+store, "BENCH_DIR="+dir, "BENCH_SINK="+sink, "BENCH_MAX="+strconv.Itoa(maxTunnels))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("proxyd child: %w", err)
	}
	f := strings.Fields(line)
	if len(f) != 5 {
		return nil, fmt.Errorf("proxyd child said %q", line)
	}
	return &proc{cmd: cmd, addr: f[0], key: f[1], relay: f[2], copyPath: f[3], procs: f[4]}, nil
}

// startRelay is the ceiling of any proxy hop on this machine: every connection is spliced to
// the sink with io.Copy between two *net.TCPConn, with no CONNECT, auth, policy or meter.
func startRelay(sink string) (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				t, err := net.Dial("tcp", sink)
				if err != nil {
					return
				}
				defer t.Close()
				go func() { _, _ = io.Copy(t.(*net.TCPConn), c.(*net.TCPConn)); _ = t.(*net.TCPConn).CloseWrite() }()
				_, _ = io.Copy(c.(*net.TCPConn), t.(*net.TCPConn))
			}()
		}
	}()
	return ln, nil
}

func child() error {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	if _, err := proxyd.RaiseFileLimit(); err != nil {
		return err
	}
	sink := os.Getenv("BENCH_SINK")
	maxT, _ := strconv.Atoi(os.Getenv("BENCH_MAX"))
	_, ps, _ := net.SplitHostPort(sink)
	port, _ := strconv.Atoi(ps)
	var st proxyd.Store = proxyd.NewMemStore()
	if os.Getenv("BENCH_STORE") != "mem" {
		ss, err := proxyd.OpenStateStore(filepath.Join(os.Getenv("BENCH_DIR"), "state"), slog.New(slog.DiscardHandler))
		if err != nil {
			return err
		}
		st = ss
	}
	defer st.Close()
	sch := proxyd.TuneScheduler(st)
	cfg := proxyd.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.AdminSocket = filepath.Join(os.Getenv("BENCH_DIR"), "admin.sock")
	cfg.PublicHost = "127.0.0.1"
	cfg.Ports = []int{port}
	cfg.AllowEgress = []string{sink}
	cfg.MaxTunnels = maxT
	cfg.MaxTunnelsPerKey = maxT
	if w := os.Getenv("BENCH_WINDOW"); w != "" {
		cfg.SpliceWindowBytes, _ = strconv.ParseInt(w, 10, 64)
	}
	cfg.CopyPath = os.Getenv("BENCH_COPY")
	if w := os.Getenv("BENCH_SLACK"); w != "" {
		cfg.MeterSlackBytes, _ = strconv.ParseInt(w, 10, 64)
	}
	s, err := proxyd.New(ctx, cfg, proxyd.Options{Store: st})
	if err != nil {
		return err
	}
	key, _, err := s.Issue(ctx, 1000)
	if err != nil {
		return err
	}
	ln, err := proxyd.Listen(ctx, cfg.Listen)
	if err != nil {
		return err
	}
	relay, err := startRelay(sink)
	if err != nil {
		return err
	}
	defer relay.Close()
	fmt.Println(ln.Addr().String(), key, relay.Addr().String(), s.Stats().CopyPath, sch.Procs)
	sig := make(chan os.Signal, 1)
	go func() {
		<-sig
		stop()
	}()
	signalNotify(sig)
	if dir := os.Getenv("BENCH_CPUPROFILE"); dir != "" {
		f, err := os.Create(filepath.Join(dir, "proxyd-"+filepath.Base(os.Getenv("BENCH_DIR"))+".pprof"))
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	err = s.Serve(ctx, ln)
	return errors.Join(err, s.Close())
}

// startSquid runs Debian's squid in the foreground on a loopback port with a temporary config
// that allows CONNECT from loopback to the sink's port only.
func startSquid(dir, sink string, maxFDs int) (*proc, error) {
	bin := "/usr/sbin/squid"
	if p, err := exec.LookPath("squid"); err == nil {
		bin = p
	}
	sdir := filepath.Join(dir, "squid")
	if err := os.MkdirAll(sdir, 0o777); err != nil {
		return nil, err
	}
	_ = os.Chmod(sdir, 0o777)
	addr := benchutil.FreeAddr()
	_, port, _ := net.SplitHostPort(sink)
	conf := fmt.Sprintf(`http_port %s
acl bench_src src 127.0.0.1/32
acl bench_port port %s
acl CONNECT method CONNECT
http_access allow CONNECT bench_src bench_port
http_access deny all
cache deny all
access_log none
cache_store_log none
cache_log %s/cache.log
pid_filename %s/squid.pid
coredump_dir %s
shutdown_lifetime 0 seconds
max_filedescriptors %d
client_persistent_connections off
server_persistent_connections off
`, addr, port, sdir, sdir, sdir, 2*maxFDs+64)
	cf := filepath.Join(sdir, "squid.conf")
	if err := os.WriteFile(cf, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-N", "-f", cf)
	logf, err := os.Create(filepath.Join(sdir, "stderr.log"))
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &proc{cmd: cmd, addr: addr}
	for i := 0; i < 100; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return p, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.stop()
	return nil, fmt.Errorf("squid did not listen on %s (see %s/stderr.log)", addr, sdir)
}
