package deprules

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/peage/appliance"

// rule: only packages under one of the allowed prefixes may import lib directly.
var rules = []struct {
	lib     string
	allowed []string
	denied  []string // sub-trees of allowed that still may not
}{
	// api/upstream/chainrpc is the chain-data connector of the chain routes, the one package of
	// the API that speaks JSON-RPC and ABI (its testtoken sub-tree holds the test ERC-20s).
	{lib: "github.com/ethereum/go-ethereum", allowed: []string{"settle", "api/upstream/chainrpc", "ops/bench"}, denied: []string{"settle/client", "settle/x402"}},
	{lib: "github.com/go-rod/rod", allowed: []string{"browserfarm"}},
	{lib: "github.com/valyala/fasthttp", allowed: []string{"api/server", "ops/bench"}},
	{lib: "github.com/coreos/go-systemd", allowed: []string{"internal/sdnotify"}},
	// The fleet's userspace WireGuard (and the gVisor netstack under it) stays behind one package.
	{lib: "golang.zx2c4.com/wireguard", allowed: []string{"internal/fleet/tunnel"}},
	{lib: "gvisor.dev/gvisor", allowed: []string{"internal/fleet/tunnel"}},
}

// pure packages may depend (even transitively) on nothing outside the standard library and
// the listed module packages.
var pure = map[string][]string{
	"api/catalog":        {"api/apierr"},
	"api/apierr":         {},
	"api/clientid":       {},
	"internal/ratelimit": {},
	"internal/caller":    {},
	"settle/x402":        {},
}

// neverBelow: these packages may not depend on the library even transitively (the API talks to
// settle through settle/client and must not link the chain code).
var neverBelow = map[string]string{
	"settle/client": "github.com/ethereum/go-ethereum",
	"api/paywall":   "github.com/ethereum/go-ethereum",
	"api/server":    "github.com/ethereum/go-ethereum",
}

// layers: a package in one of these trees may not import (directly) any package of the listed
// trees. The kernel (internal/) is libraries that know no daemon; the daemons other than the
// API know nothing of it; only the composition root (appliance/) knows every part.
var layers = []struct {
	tree   string
	denied []string
}{
	{"internal", []string{"api", "browserfarm", "proxyd", "settle", "appliance"}},
	{"browserfarm", []string{"api", "appliance"}},
	{"proxyd", []string{"api", "appliance"}},
	{"settle", []string{"api", "appliance"}},
	{"api", []string{"appliance"}},
}

// notYet are the imports that break the layers today and that the next slices of the
// restructuring remove (the pieces two families share moved down). A new one fails the test, and so does one gone from the code but still listed here.
var notYet = map[string]string{}

func list(t *testing.T, format string, pkgs ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-f", format}, pkgs...)...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

func within(pkg string, trees []string) bool {
	rel := strings.TrimPrefix(pkg, module+"/")
	for _, t := range trees {
		if rel == t || strings.HasPrefix(rel, t+"/") {
			return true
		}
	}
	return false
}

func TestDependencyRules(t *testing.T) {
	for _, line := range list(t, `{{.ImportPath}}|{{join .Imports ","}}`, module+"/...") {
		pkg, imports, _ := strings.Cut(line, "|")
		for _, imp := range strings.Split(imports, ",") {
			for _, r := range rules {
				if imp != r.lib && !strings.HasPrefix(imp, r.lib+"/") {
					continue
				}
				if !within(pkg, r.allowed) || within(pkg, r.denied) {
					t.Errorf("%s imports %s: only %v may (not %v)", pkg, imp, r.allowed, r.denied)
				}
			}
		}
	}
}

func TestPurePackages(t *testing.T) {
	for pkg, may := range pure {
		for _, dep := range list(t, `{{join .Deps "\n"}}`, module+"/"+pkg) {
			if dep == "" || !strings.Contains(strings.Split(dep, "/")[0], ".") {
				continue // standard library
			}
			if !within(dep, may) {
				t.Errorf("%s depends on %s; it may use only the standard library and %v", pkg, dep, may)
			}
		}
	}
}

func TestNeverBelow(t *testing.T) {
	for pkg, lib := range neverBelow {
		for _, dep := range list(t, `{{join .Deps "\n"}}`, module+"/"+pkg) {
			if dep == lib || strings.HasPrefix(dep, lib+"/") {
				t.Errorf("%s depends on %s through its imports", pkg, dep)
				break
			}
		}
	}
}

func TestLayers(t *testing.T) {
	seen := map[string]bool{}
	for _, line := range list(t, `{{.ImportPath}}|{{join .Imports ","}}`, module+"/...") {
		pkg, imports, _ := strings.Cut(line, "|")
		rel := strings.TrimPrefix(pkg, module+"/")
		for _, imp := range strings.Split(imports, ",") {
			dep, ours := strings.CutPrefix(imp, module+"/")
			if !ours {
				continue
			}
			if allowed, ok := notYet[rel]; ok && within(imp, []string{allowed}) {
				seen[rel] = true
				continue
			}
			for _, l := range layers {
				if within(pkg, []string{l.tree}) && within(imp, l.denied) {
					t.Errorf("%s imports %s: %s may not import %v", rel, dep, l.tree, l.denied)
				}
			}
			if family, ok := routeFamily(rel); ok {
				if other, ok := routeFamily(dep); ok && other != family {
					t.Errorf("%s imports %s: a route family imports no other family (move the shared piece down)", rel, dep)
				}
			}
		}
	}
	for pkg, dep := range notYet {
		if !seen[pkg] {
			t.Errorf("%s no longer imports %s: remove it from notYet", pkg, dep)
		}
	}
}

// routeFamily names the family of a package under api/routes.
func routeFamily(rel string) (string, bool) {
	rest, ok := strings.CutPrefix(rel, "api/routes/")
	if !ok {
		return "", false
	}
	family, _, _ := strings.Cut(rest, "/")
	return family, true
}
