package apitest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/peage/appliance/internal/testenv"
)

// NodeModules is settle/npm's node_modules (ops/setup.d/x402.sh installs the official x402
// packages there), found from the test's directory up to the module root.
func NodeModules(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "settle", "npm", "node_modules")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// Node runs an ES module script with node beside settle/npm's packages, with args, until it
// exits or limit passes, and returns its stdout and stderr. A missing node or package fails
// the test: the suite's interop checks are never skipped, except under -short (testenv).
func Node(t testing.TB, limit time.Duration, script string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	testenv.NeedsNode(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed; run ops/setup.sh")
	}
	modules := NodeModules(t)
	for _, pkg := range []string{"@x402/core", "@x402/evm", "@x402/extensions"} {
		if _, err := os.Stat(filepath.Join(modules, pkg, "package.json")); err != nil {
			t.Fatalf("%s is not installed in settle/npm; run ops/setup.d/x402.sh", pkg)
		}
	}
	dir := t.TempDir()
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "script.mjs")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{path}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}
