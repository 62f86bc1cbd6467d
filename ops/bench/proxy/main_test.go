package main

import (
	"net"
	"os"
	"slices"
	"testing"
	"time"
)

// TestSetupTimesTakeTurns: setups are timed one path after the other, round by round, so no
// path's figures come from a quieter or busier spell of the machine than another's, and each
// path follows each other one about equally often, so none always meets the teardown of the
// same predecessor (a fixed order gave the path after the direct one a quiet machine).
func TestSetupTimesTakeTurns(t *testing.T) {
	sink, err := startSink()
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	var order []string
	mk := func(name string) path {
		return path{name: name, dial: func() (net.Conn, error) {
			order = append(order, name)
			return net.Dial("tcp", sink.Addr().String())
		}}
	}
	const rounds = 300
	names := []string{"a", "b", "c"}
	st, err := setupTimes([]path{mk("a"), mk("b"), mk("c")}, rounds)
	if err != nil {
		t.Fatal(err)
	}
	if len(order) != (setupWarmup+rounds)*len(names) {
		t.Fatalf("%d setups, want %d untimed and %d timed rounds of %d", len(order), setupWarmup, rounds, len(names))
	}
	order = order[setupWarmup*len(names):]
	follows := map[[2]string]int{}
	for r := range rounds {
		round := slices.Clone(order[r*3 : r*3+3])
		slices.Sort(round)
		if !slices.Equal(round, names) {
			t.Fatalf("round %d dialled %v, want each path once", r, order[r*3:r*3+3])
		}
	}
	for i := 1; i < len(order); i++ {
		follows[[2]string{order[i-1], order[i]}]++
	}
	// 899 transitions over 6 ordered pairs (and repeats across a round's edge): about 120 each.
	for _, a := range names {
		for _, b := range names {
			if n := follows[[2]string{a, b}]; a != b && (n < 80 || n > 180) {
				t.Errorf("%s followed %s %d times in %d setups, want about a sixth of them", b, a, n, len(order))
			}
		}
	}
	for _, name := range []string{"a", "b", "c"} {
		s, ok := st[name]
		if !ok || s.p50 <= 0 || s.p99 < s.p50 || s.cpu != 0 {
			t.Fatalf("%s: %+v (present %v), want p50 > 0, p99 ≥ p50 and no CPU figure without a process", name, s, ok)
		}
	}
}

// TestCPUTime reads this very process's user + system time, which a busy loop must move.
func TestCPUTime(t *testing.T) {
	before, err := cpuTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for start := time.Now(); time.Since(start) < 200*time.Millisecond; {
		x++
	}
	after, err := cpuTime(os.Getpid())
	if err != nil || after <= before {
		t.Fatalf("CPU time %v then %v (%v) after a busy loop (%d turns)", before, after, err, x)
	}
	if _, err := cpuTime(1 << 30); err == nil {
		t.Fatal("cpuTime of a pid that cannot exist: want an error")
	}
	if d, err := cpuTime(0); err != nil || d != 0 {
		t.Fatalf("cpuTime(0) = %v %v, want 0 (no process)", d, err)
	}
}
