// Package benchutil holds what the benchmark programs share: starting the appliance binary,
// installing a Debian tool on demand, running wrk, and printing ratio tables.
package benchutil

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Need installs a Debian package when its command is missing.
func Need(command, pkg string) error {
	if _, err := exec.LookPath(command); err == nil {
		return nil
	}
	fmt.Fprintf(os.Stderr, "bench: installing %s\n", pkg)
	for _, args := range [][]string{{"update"}, {"install", "-y", "--no-install-recommends", pkg}} {
		cmd := exec.Command("apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("apt-get %v: %w", args, err)
		}
	}
	return nil
}

// Requires checks, before a benchmark starts, that what it runs is there: commands (on PATH, or
// in /usr/sbin where Debian puts squid) that `make setup` installs, files under the repository
// root (settle/npm/node_modules from make setup, bin/appliance from make build). A program run
// without them then says what is missing and what makes it, instead of failing midway with
// "exit status 1".
func Requires(what ...string) error {
	var missing []string
	for _, w := range what {
		if !present(w) {
			missing = append(missing, fmt.Sprintf("%s not found: run %s", w, maker(w)))
		}
	}
	if len(missing) > 0 {
		return errors.New(strings.Join(missing, "; "))
	}
	return nil
}

func present(what string) bool {
	if strings.Contains(what, "/") {
		_, err := os.Stat(what)
		return err == nil
	}
	if _, err := exec.LookPath(what); err == nil {
		return true
	}
	_, err := os.Stat(filepath.Join("/usr/sbin", what))
	return err == nil
}

// maker names the make target that provides what.
func maker(what string) string {
	if strings.HasPrefix(what, "bin/") {
		return "make build"
	}
	return "make setup"
}

// FreeAddr returns a free loopback address.
func FreeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Appliance is a running `bin/appliance dev`.
type Appliance struct {
	API, Admin string
	cmd        *exec.Cmd
}

// StartAppliance runs bin/appliance dev on free ports with a fresh state directory and waits
// until it answers.
func StartAppliance(ctx context.Context, extra ...string) (*Appliance, error) {
	// appliance dev starts the browser farm, which fails without Chromium.
	if err := Requires("bin/appliance", "chromium"); err != nil {
		return nil, err
	}
	a := &Appliance{API: FreeAddr(), Admin: FreeAddr()}
	dir, err := os.MkdirTemp("", "peage-bench-")
	if err != nil {
		return nil, err
	}
	args := append([]string{"dev", "--api-addr", a.API, "--admin-addr", a.Admin, "--state-dir", dir}, extra...)
	a.cmd = exec.CommandContext(ctx, "bin/appliance", args...)
	a.cmd.Env = append(os.Environ(), "PEAGE_LOG_LEVEL=warn")
	a.cmd.Stdout, a.cmd.Stderr = io.Discard, io.Discard
	if err := a.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start bin/appliance (run make build): %w", err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get("http://" + a.Admin + "/healthz"); err == nil {
			resp.Body.Close()
			return a, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	a.Stop()
	return nil, fmt.Errorf("appliance did not answer on %s", a.Admin)
}

// Stop ends the appliance.
func (a *Appliance) Stop() {
	if a.cmd != nil && a.cmd.Process != nil {
		_ = a.cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = a.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = a.cmd.Process.Kill()
		}
	}
}

// Load is one wrk measurement.
type Load struct {
	RPS      float64
	P50, P99 time.Duration
	Non2xx   int
}

var (
	rpsRx   = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	latRx   = regexp.MustCompile(`^\s+(50|99)%\s+([0-9.]+)(us|ms|s)`)
	non2xRx = regexp.MustCompile(`Non-2xx or 3xx responses:\s+([0-9]+)`)
)

// Wrk drives url with wrk (threads, connections, duration) and parses its report.
func Wrk(url string, threads, conns int, d time.Duration, headers ...string) (Load, error) {
	args := []string{"-t", strconv.Itoa(threads), "-c", strconv.Itoa(conns), "-d", fmt.Sprintf("%ds", int(d.Seconds())), "--latency"}
	for _, h := range headers {
		args = append(args, "-H", h)
	}
	out, err := exec.Command("wrk", append(args, url)...).CombinedOutput()
	if err != nil {
		return Load{}, fmt.Errorf("wrk: %v: %s", err, out)
	}
	var l Load
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		line := sc.Text()
		if m := rpsRx.FindStringSubmatch(line); m != nil {
			l.RPS, _ = strconv.ParseFloat(m[1], 64)
		}
		if m := non2xRx.FindStringSubmatch(line); m != nil {
			l.Non2xx, _ = strconv.Atoi(m[1])
		}
		if m := latRx.FindStringSubmatch(line); m != nil {
			v, _ := strconv.ParseFloat(m[2], 64)
			unit := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second}[m[3]]
			d := time.Duration(v * float64(unit))
			if m[1] == "50" {
				l.P50 = d
			} else {
				l.P99 = d
			}
		}
	}
	if l.RPS == 0 {
		return l, fmt.Errorf("wrk printed no rate: %s", out)
	}
	return l, nil
}

// Table prints rows aligned under a header.
func Table(header []string, rows [][]string) {
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = len(h)
	}
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	line := func(cells []string) {
		for i, c := range cells {
			fmt.Printf("%-*s  ", widths[i], c)
		}
		fmt.Println()
	}
	line(header)
	for _, r := range rows {
		line(r)
	}
}
