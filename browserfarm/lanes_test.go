package browserfarm

import (
	"strings"
	"testing"
)

// TestLanes drives the scheduler without browsers: each step pushes a job ("+paid-1"),
// finishes one ("-free-1"), or takes the next ("next" expects the named job, or "none").
func TestLanes(t *testing.T) {
	cases := []struct {
		name  string
		free  int // free slots
		steps []string
	}{
		{"paid_before_free_whatever_the_order", 1, []string{"+free-1", "+free-2", "+paid-1", "next paid-1", "next free-1", "next none", "+paid-2", "next paid-2"}},
		{"free_share_holds_with_browsers_to_spare", 1, []string{"+free-1", "+free-2", "next free-1", "next none", "-free-1", "next free-2", "next none"}},
		{"share_of_two", 2, []string{"+free-1", "+free-2", "+free-3", "next free-1", "next free-2", "next none", "-free-2", "next free-3"}},
		{"paid_jobs_ignore_the_free_share", 1, []string{"+free-1", "next free-1", "+paid-1", "+paid-2", "next paid-1", "next paid-2"}},
		{"lanes_are_fifo", 1, []string{"+paid-1", "+paid-2", "next paid-1", "+paid-3", "next paid-2", "next paid-3"}},
		{"free_lane_full_refuses_free_only", 1, []string{"+free-1", "+free-2", "+free-3", "!free-4", "+paid-1", "+paid-2", "!paid-3"}},
		{"removed_job_frees_its_place", 1, []string{"+free-1", "+free-2", "+free-3", "x free-2", "+free-4", "next free-1", "-free-1", "next free-3"}},
		{"requeued_job_goes_first", 1, []string{"+paid-1", "+paid-2", "next paid-1", "r paid-1", "next paid-1", "next paid-2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := newLanes(2, 3, c.free, 2)
			jobs := map[string]*job{}
			get := func(id string) *job {
				if jobs[id] == nil {
					jobs[id] = &job{task: Task{URL: id, Free: strings.HasPrefix(id, "free")}}
				}
				return jobs[id]
			}
			for i, step := range c.steps {
				op, id, _ := strings.Cut(step, " ")
				switch {
				case strings.HasPrefix(step, "+"):
					if !l.push(get(step[1:])) {
						t.Fatalf("step %d: %s refused", i, step)
					}
				case strings.HasPrefix(step, "!"):
					if l.push(get(step[1:])) {
						t.Fatalf("step %d: %s accepted beyond its lane's capacity", i, step)
					}
				case strings.HasPrefix(step, "-"):
					l.done(get(step[1:]))
				case op == "x":
					l.remove(get(id))
				case op == "r":
					l.done(get(id))
					l.requeue(get(id))
				case op == "next":
					got := "none"
					if j := l.next(); j != nil {
						got = j.task.URL
					}
					if got != id {
						t.Fatalf("step %d: next is %s, want %s", i, got, id)
					}
				}
			}
		})
	}
}
