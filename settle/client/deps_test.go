package client

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoChainDependency keeps go-ethereum out of the API: only the settle daemon touches the
// chain, and this client is what the API links.
func TestNoChainDependency(t *testing.T) {
	for _, pkg := range []string{".", "../x402", "../../api/paywall"} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.HasPrefix(dep, "github.com/ethereum/go-ethereum") {
				t.Errorf("%s depends on %s", pkg, dep)
			}
		}
	}
}
