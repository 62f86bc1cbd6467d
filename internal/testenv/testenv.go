// Package testenv says which tests need more than the Go toolchain: a real Chromium, the
// embedded chain, node and the npm x402 clients, squid, yt-dlp; all of them installed by `make
// setup`, and each costing seconds to start. `make test` runs them all; `make test-short`
// (go test -short) leaves them out, so that the unit tests run in the inner loop without setup.
// As Go's own internal/testenv, it is the one place that decides, so that the rule is the same
// for every package.
package testenv

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

// Need is something a test needs beyond the Go toolchain.
type Need string

const (
	Browser   Need = "a real Chromium (the browser farm)"
	Chain     Need = "the embedded chain"
	Node      Need = "node and the npm x402 clients"
	Squid     Need = "squid"
	Daemons   Need = "the appliance's daemons started whole"
	Builds    Need = "builds of the appliance binary"
	Processes Need = "child processes killed and restarted"
	Media     Need = "yt-dlp and ffmpeg"
	Netns     Need = "network namespaces and nft (root)"
	// Deadlines are upstreams that never answer, each waited out in real time until the
	// client's deadline (seconds per call): the 504 rows of the failure tables.
	Deadlines Need = "an upstream's deadline waited out in real time"
	// Outages are a fleet box's line cut for a minute, past the registry's TTL and the leaf's
	// reconnect interval, waited out in real time.
	Outages Need = "a fleet box's line cut for a minute in real time"
	// Tree is the whole module compiled for its type information (the log-key rule): make
	// test and make lint run it.
	Tree Need = "the whole tree compiled and type-checked"
)

// Needs skips t under -short: it needs what.
func Needs(t testing.TB, what Need) {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: needs %s (make test runs it)", what)
	}
}

// Skips reports whether this run leaves out the tests that need what, for a TestMain that
// prepares something only those tests use (it must have called flag.Parse).
func Skips(what Need) bool { return testing.Short() }

// NeedsBrowser skips t under -short: it starts Chromium.
func NeedsBrowser(t testing.TB) { t.Helper(); Needs(t, Browser) }

// NeedsChain skips t under -short: it starts the embedded chain.
func NeedsChain(t testing.TB) { t.Helper(); Needs(t, Chain) }

// NeedsNode skips t under -short: it runs node with the npm x402 clients.
func NeedsNode(t testing.TB) { t.Helper(); Needs(t, Node) }

// MainNeeds is for a TestMain whose tests all share one fixture that needs what (a farm
// started once for the package): under -short it says so and makes m.Run run no test, and
// returns true, so that TestMain does not start the fixture. Call it after flag.Parse:
//
//	flag.Parse()
//	if testenv.MainNeeds(testenv.Browser) {
//		os.Exit(m.Run())
//	}
func MainNeeds(what Need) bool {
	if !flag.Parsed() {
		panic("testenv.MainNeeds before flag.Parse")
	}
	if !testing.Short() {
		return false
	}
	fmt.Fprintf(os.Stderr, "-short: this package's tests need %s (make test runs them)\n", what)
	if err := flag.Set("test.run", "^$"); err != nil {
		panic(err)
	}
	return true
}
