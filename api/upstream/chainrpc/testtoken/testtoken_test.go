package testtoken

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/peage/appliance/api/upstream/chainrpc/testtoken/gen/bindings"
	"github.com/peage/appliance/internal/testenv"
)

// TestGeneratedIsFresh recompiles the Solidity with the pinned solc and regenerates the
// bindings, and fails if any checked-in output differs. Without node or settle/npm's solc it
// fails rather than skip, since a skipped staleness check is no check.
func TestGeneratedIsFresh(t *testing.T) {
	testenv.NeedsNode(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed; run ops/setup.sh")
	}
	if _, err := os.Stat(filepath.Join("..", "..", "..", "..", "settle", "npm", "node_modules", "solc", "package.json")); err != nil {
		t.Fatal("npm solc is not installed in settle/npm; run ops/setup.d/x402.sh")
	}
	dir := t.TempDir()
	out, err := exec.Command(node, filepath.Join("gen", "compile.mjs"), dir).CombinedOutput()
	if err != nil {
		t.Fatalf("compile: %v\n%s", err, out)
	}
	for _, c := range bindings.Contracts {
		for _, f := range []string{c + ".abi.json", c + ".bin"} {
			same(t, f, filepath.Join(dir, f))
		}
		code, err := bindings.Generate(dir, c)
		if err != nil {
			t.Fatal(err)
		}
		checked, err := os.ReadFile(bindings.FileName(c))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(code, checked) {
			t.Errorf("%s is stale: run go generate ./api/upstream/chainrpc/testtoken", bindings.FileName(c))
		}
	}
}

func same(t *testing.T, checkedIn, fresh string) {
	t.Helper()
	a, err := os.ReadFile(checkedIn)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(fresh)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("%s is stale: run go generate ./api/upstream/chainrpc/testtoken", checkedIn)
	}
}
