package browserfarm

import (
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/internal/caller"
)

// TestLanes drives the scheduler without browsers. A job is named "paid-1" or, with its
// caller, "paid-1@payer/client" (either may be empty). Each step pushes a job ("+paid-1"; with
// " ^paid-2" it must evict paid-2, "!paid-1" must be refused), finishes one ("-paid-1"), takes
// back a waiting one ("x paid-1"), requeues one that ran ("r paid-1"), takes the next ("next"
// expects the named job, or "none"), strikes a job's callers ("s paid-1") or moves the clock
// ("t 5m").
func TestLanes(t *testing.T) {
	cases := []struct {
		name      string
		free      int // free slots
		callerCap int // browsers one payer or client may hold; 0: no cap that matters
		paidCap   int // 0: 2
		steps     []string
	}{
		{"paid_before_free_whatever_the_order", 1, 0, 0, []string{"+free-1", "+free-2", "+paid-1", "next paid-1", "next free-1", "next none", "+paid-2", "next paid-2"}},
		{"free_share_holds_with_browsers_to_spare", 1, 0, 0, []string{"+free-1", "+free-2", "next free-1", "next none", "-free-1", "next free-2", "next none"}},
		{"share_of_two", 2, 0, 0, []string{"+free-1", "+free-2", "+free-3", "next free-1", "next free-2", "next none", "-free-2", "next free-3"}},
		{"paid_jobs_ignore_the_free_share", 1, 0, 0, []string{"+free-1", "next free-1", "+paid-1", "+paid-2", "next paid-1", "next paid-2"}},
		{"lanes_are_fifo", 1, 0, 0, []string{"+paid-1", "+paid-2", "next paid-1", "+paid-3", "next paid-2", "next paid-3"}},
		{"free_lane_full_refuses_free_only", 1, 0, 0, []string{"+free-1", "+free-2", "+free-3", "!free-4", "+paid-1", "+paid-2", "!paid-3"}},
		{"removed_job_frees_its_place", 1, 0, 0, []string{"+free-1", "+free-2", "+free-3", "x free-2", "+free-4", "next free-1", "-free-1", "next free-3"}},
		{"requeued_job_goes_first", 1, 0, 0, []string{"+paid-1", "+paid-2", "next paid-1", "r paid-1", "next paid-1", "next paid-2"}},

		{"payer_cap_holds_with_browsers_to_spare", 1, 1, 0, []string{"+paid-1@a/x", "+paid-2@a/y", "next paid-1@a/x", "next none", "-paid-1@a/x", "next paid-2@a/y"}},
		{"client_cap_holds_across_payers", 1, 1, 0, []string{"+paid-1@a/x", "+paid-2@b/x", "next paid-1@a/x", "next none", "-paid-1@a/x", "next paid-2@b/x"}},
		{"capped_caller_lets_the_next_one_through", 1, 1, 0, []string{"+paid-1@a/x", "+paid-2@a/x", "next paid-1@a/x", "+paid-3@b/y", "next paid-3@b/y"}},
		{"free_jobs_capped_by_client", 2, 1, 0, []string{"+free-1@/x", "+free-2@/x", "+free-3@/y", "next free-1@/x", "next free-3@/y", "next none"}},
		{"newcomer_before_a_caller_holding_browsers", 1, 2, 4, []string{"+paid-1@a/x", "+paid-2@a/x", "+paid-3@a/x", "next paid-1@a/x", "+paid-4@b/y", "next paid-4@b/y", "next paid-2@a/x", "next none"}},
		{"full_lane_evicts_the_biggest_callers_newest", 1, 1, 0, []string{"+paid-1@a/x", "+paid-2@a/x", "+paid-3@b/y ^paid-2@a/x", "!paid-4@b/y", "next paid-1@a/x", "next paid-3@b/y"}},
		{"a_caller_never_evicts_itself", 1, 1, 0, []string{"+paid-1@a/x", "+paid-2@a/x", "!paid-3@a/x"}},
		{"equal_callers_keep_their_places", 1, 1, 0, []string{"+paid-1@a/x", "+paid-2@b/y", "!paid-3@c/z"}},
		{"one_strike_does_not_demote", 1, 2, 0, []string{"s paid-1@a/x", "+paid-1@a/x", "+paid-2@a/x", "next paid-1@a/x", "next paid-2@a/x"}},
		{"demoted_caller_holds_one_browser", 1, 2, 0, []string{"s paid-1@a/x", "s paid-1@a/x", "+paid-1@a/x", "+paid-2@a/x", "next paid-1@a/x", "next none", "-paid-1@a/x", "next paid-2@a/x"}},
		{"demoted_caller_goes_last", 1, 2, 4, []string{"s paid-1@a/x", "s paid-1@a/x", "+paid-1@a/x", "+paid-2@b/y", "next paid-2@b/y", "next paid-1@a/x"}},
		{"demoted_client_demotes_its_other_payers", 1, 2, 4, []string{"s paid-1@a/x", "s paid-1@a/x", "+paid-2@c/x", "+paid-3@b/y", "next paid-3@b/y", "next paid-2@c/x"}},
		{"demoted_caller_gives_up_its_place_first", 1, 2, 0, []string{"s paid-1@a/x", "s paid-1@a/x", "+paid-1@a/x", "+paid-2@b/y", "+paid-3@c/z ^paid-1@a/x"}},
		{"strikes_decay", 1, 2, 0, []string{"s paid-1@a/x", "s paid-1@a/x", "+paid-1@a/x", "+paid-2@a/x", "next paid-1@a/x", "next none", "t 10m", "next paid-2@a/x"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lim := laneLimits{paidCap: 2, freeCap: 3, freeSlots: c.free, workers: 2, payerBrowsers: 99, clientBrowsers: 99,
				strikeLimit: 1.5, strikeHalfLife: 10 * time.Minute}
			if c.callerCap > 0 {
				lim.payerBrowsers, lim.clientBrowsers = c.callerCap, c.callerCap
			}
			if c.paidCap > 0 {
				lim.paidCap = c.paidCap
			}
			l := newLanes(lim)
			now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
			l.now = func() time.Time { return now }
			jobs := map[string]*job{}
			get := func(id string) *job {
				if jobs[id] == nil {
					j := &job{task: Task{URL: id, Free: strings.HasPrefix(id, "free")}}
					if _, who, ok := strings.Cut(id, "@"); ok {
						payer, client, _ := strings.Cut(who, "/")
						j.parties = parties(callerID(client, payer))
					}
					jobs[id] = j
				}
				return jobs[id]
			}
			for i, step := range c.steps {
				op, id, _ := strings.Cut(step, " ")
				switch {
				case strings.HasPrefix(step, "+"):
					pushed, evict, _ := strings.Cut(step[1:], " ^")
					ok, evicted := l.push(get(pushed))
					if !ok {
						t.Fatalf("step %d: %s refused", i, step)
					}
					got := ""
					if evicted != nil {
						got = evicted.task.URL
					}
					if got != evict {
						t.Fatalf("step %d: %s evicted %q, want %q", i, step, got, evict)
					}
				case strings.HasPrefix(step, "!"):
					if ok, _ := l.push(get(step[1:])); ok {
						t.Fatalf("step %d: %s accepted beyond its lane's capacity", i, step)
					}
				case strings.HasPrefix(step, "-"):
					l.done(get(step[1:]))
				case op == "x":
					l.remove(get(id))
				case op == "r":
					l.done(get(id))
					l.requeue(get(id))
				case op == "s":
					l.strike(get(id))
				case op == "t":
					d, err := time.ParseDuration(id)
					if err != nil {
						t.Fatal(err)
					}
					now = now.Add(d)
				case op == "next":
					got := "none"
					if j := l.next(); j != nil {
						got = j.task.URL
					}
					if got != id {
						t.Fatalf("step %d: next is %s, want %s", i, got, id)
					}
				default:
					t.Fatalf("step %d: %q is no step", i, step)
				}
			}
		})
	}
}

func callerID(client, payer string) caller.ID { return caller.ID{Client: client, Payer: payer} }
