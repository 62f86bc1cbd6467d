package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/internal/testenv"
	"github.com/peage/appliance/settle/x402"
)

// The README's TypeScript payment snippet, and the line that adapts it to `appliance dev`.
const (
	readmeScriptFirstLine = "// pay.mjs: "
	readmeDevLinePrefix   = "  spendControls: { allowedAssets: "
	readmeCapLinePrefix   = "  spendControls: "
)

// readmeBlock returns the body of the first fenced block of README.md whose first line starts
// with first.
func readmeBlock(t *testing.T, first string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range strings.Split(string(b), "```")[1:] {
		_, body, ok := strings.Cut(block, "\n")
		if ok && strings.HasPrefix(body, first) {
			return body
		}
	}
	t.Fatalf("README.md has no fenced block starting with %q", first)
	return ""
}

// withCapLine replaces the snippet's spendControls line by line ("" removes it).
func withCapLine(t *testing.T, script, line string) string {
	t.Helper()
	var out []string
	found := false
	for _, l := range strings.Split(script, "\n") {
		if strings.HasPrefix(l, readmeCapLinePrefix) {
			found = true
			if line == "" {
				continue
			}
			l = strings.TrimRight(line, "\n")
		}
		out = append(out, l)
	}
	if !found {
		t.Fatalf("the README snippet has no line starting with %q:\n%s", readmeCapLinePrefix, script)
	}
	return strings.Join(out, "\n")
}

// runNode runs script with node beside settle/npm's packages (ops/setup.d/x402.sh installs
// them) and returns its stdout, stderr and exit error.
func runNode(t *testing.T, script string, env []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return runNodeFor(t, 90*time.Second, script, env, args...)
}

// runNodeFor is runNode with another time limit.
func runNodeFor(t *testing.T, limit time.Duration, script string, env []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	testenv.NeedsNode(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed; run ops/setup.sh")
	}
	modules, err := filepath.Abs(filepath.Join("..", "..", "..", "settle", "npm", "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(modules, "@x402", "fetch", "package.json")); err != nil {
		t.Fatal("@x402/fetch is not installed in settle/npm; run ops/setup.d/x402.sh")
	}
	dir := t.TempDir()
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "pay.mjs")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{path}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// TestREADMEClientCapOnBase runs the README's @x402/fetch snippet as printed (Base USDC, the
// production asset) against the real challenges of the proxy packages, served by a stand-in
// that only records what the client signs: the raised cap signs 52 USDC, and the client's
// default cap refuses even the 3.50 USDC package without signing anything.
func TestREADMEClientCapOnBase(t *testing.T) {
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	cfg := paywall.DefaultConfig()
	cfg.PayTo = "0x000000000000000000000000000000000000dEaD"
	var (
		mu     sync.Mutex
		signed []string // amounts of the payments the client signed
	)
	var challenges *paywall.Challenges
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := r.Header.Get(x402.HeaderPaymentSignature); h != "" {
			p, err := x402.DecodePayment(h)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			mu.Lock()
			signed = append(signed, p.Accepted.Amount)
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"sold":true}`))
			return
		}
		e := cat.ByPath(r.URL.Path)
		if e == nil {
			http.NotFound(w, r)
			return
		}
		ch, err := challenges.For(e, "")
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set(x402.HeaderPaymentRequired, ch.Header)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusPaymentRequired)
		_, _ = w.Write(ch.Body)
	}))
	defer srv.Close()
	challenges = paywall.NewChallenges(cfg, cat, srv.URL)

	script := readmeBlock(t, readmeScriptFirstLine)
	cases := []struct {
		name, script, path string
		signed             string // the amount signed, "" for none
	}{
		{"raised cap pays the 20 GB package", script, "/v1/proxy/20gb", "52000000"},
		{"default cap refuses the 1 GB package", withCapLine(t, script, ""), "/v1/proxy/1gb", ""},
	}
	key := "0x" + strings.Repeat("4", 64) // never funded: the stand-in only reads the signature
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mu.Lock()
			signed = nil
			mu.Unlock()
			stdout, stderr, err := runNode(t, c.script, []string{"PAYER_KEY=" + key}, srv.URL+c.path)
			mu.Lock()
			got := strings.Join(signed, ",")
			mu.Unlock()
			if got != c.signed {
				t.Fatalf("signed %q, want %q\nstdout %s\nstderr %s", got, c.signed, stdout, stderr)
			}
			switch {
			case c.signed != "" && (err != nil || !strings.HasPrefix(stdout, "200 ")):
				t.Fatalf("client failed: %v\nstdout %s\nstderr %s", err, stdout, stderr)
			case c.signed == "" && (err == nil || !strings.Contains(stderr, "maxAmountPerPayment")):
				t.Fatalf("client did not refuse for its cap: %v\nstdout %s\nstderr %s", err, stdout, stderr)
			}
		})
	}
}
