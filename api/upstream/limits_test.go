package upstream

import "testing"

// TestPublishedLimits keeps the client-side buckets under the limits the upstreams publish:
// Companies House allows 600 requests per rolling 5 minutes per key (a full bucket plus 5
// minutes of refill must fit), SEC 10 requests per second for one user across its hosts.
func TestPublishedLimits(t *testing.T) {
	ch, _ := Lookup("companies-house")
	if worst := float64(ch.Burst) + ch.RPS*300; ch.RPS <= 0 || worst > 600 {
		t.Errorf("companies-house: burst %d + %.2f/s × 300 s = %.0f requests in 5 minutes, over 600", ch.Burst, ch.RPS, worst)
	}
	var sec float64
	for _, name := range []string{"sec-edgar", "sec-edgar-files"} {
		s, ok := Lookup(name)
		if !ok || s.RPS <= 0 || !s.NeedsContact {
			t.Fatalf("%s: %+v, want a rate limit and a required contact", name, s)
		}
		sec += s.RPS
	}
	if sec >= 10 {
		t.Errorf("SEC hosts together allow %.1f requests per second, SEC allows fewer than 10", sec)
	}
}
