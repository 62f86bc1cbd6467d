package fleettest

import (
	"testing"
	"time"
)

// WaitFor polls cond until it holds, failing the test after 30 s: a liveness bound for what
// the fleet does in the background (a box announcing itself, a peer admitted), not a timing.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
