package a2a

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/peage/appliance/internal/testclock"
)

// TestStoreBounds: the tasks are bounded in number, in bytes and in age, the oldest going
// first, and the newest kept even alone over the byte budget so its client reads it once.
func TestStoreBounds(t *testing.T) {
	for _, c := range []struct {
		name  string
		sizes []int
		age   time.Duration // after the puts
		kept  []string
	}{
		{"count", []int{1, 1, 1}, 0, []string{"t1", "t2"}},
		{"bytes", []int{6, 6}, 0, []string{"t1"}},
		{"one over the budget", []int{1, 20}, 0, []string{"t1"}},
		{"age", []int{1}, time.Hour, nil},
		{"young", []int{1}, time.Hour - time.Second, []string{"t0"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock := testclock.At(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
			s := newStore(2, 10, time.Hour, clock.Now)
			for i, size := range c.sizes {
				s.put(&task{Task: Task{ID: fmt.Sprint("t", i)}}, size)
			}
			clock.Add(c.age)
			var kept []string
			for i := range c.sizes {
				if _, ok := s.get(fmt.Sprint("t", i)); ok {
					kept = append(kept, fmt.Sprint("t", i))
				}
			}
			if !slices.Equal(kept, c.kept) {
				t.Fatalf("kept %v, want %v", kept, c.kept)
			}
		})
	}
}

// TestClaimRunsOnePaymentAtATime: a task's paid call runs once; a second payment while it
// runs, or after it finished, is refused without running anything.
func TestClaimRunsOnePaymentAtATime(t *testing.T) {
	s := newStore(10, 1<<20, time.Hour, time.Now)
	s.put(&task{Task: Task{ID: "a", Status: TaskStatus{State: stateInputRequired}}}, 0)
	first, fault := s.claim("a")
	if fault != claimOK {
		t.Fatalf("first claim: %v", fault)
	}
	if _, fault := s.claim("a"); fault != claimBusy {
		t.Fatalf("second claim while the first runs: %v", fault)
	}
	next := first.Task
	next.Status.State = stateCompleted
	s.release(first, next, 3)
	if _, fault := s.claim("a"); fault != claimTerminal {
		t.Fatalf("claim of a completed task: %v", fault)
	}
	if _, fault := s.claim("b"); fault != claimUnknown {
		t.Fatalf("claim of an unknown task: %v", fault)
	}
	if got, _ := s.get("a"); got.Status.State != stateCompleted {
		t.Fatalf("stored state %s", got.Status.State)
	}
}
