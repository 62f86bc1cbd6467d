package proxyd

import (
	"testing"
	"time"
)

// TestFlushTriggerFollowsWriteLatency: a meter asks for its write as late as the slack allows,
// leaving room for twice what passed during the last write, between slack/8 and slack/2; the
// room rises at once after a slow write and falls slowly after fast ones.
func TestFlushTriggerFollowsWriteLatency(t *testing.T) {
	const slack = 4 << 20
	cases := []struct {
		name     string
		start    int64   // flushAt before the writes
		during   []int64 // bytes that pass while each write is under way
		wantRoom int64   // slack - flushAt after them
	}{
		{"fresh meter: half the slack", -1, nil, slack / 2},
		{"fast writes: room falls to slack/8", -1, repeat(0, 40), slack / 8},
		{"one fast write: room falls by a quarter only", -1, []int64{0}, slack / 2 * 3 / 4},
		{"1 Gbit/s, 300 KiB per write: twice that", -1, repeat(300<<10, 40), 600 << 10},
		{"a write that stalled: half the slack at once", slack - slack/8, []int64{slack}, slack / 2},
		{"a slow write after fast ones: twice what passed, at once", slack - slack/8, []int64{1 << 20}, 2 << 20},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var asked int
			m := newMeter(Package{ID: "k", Bytes: 1 << 40, ExpiresAt: time.Now().Add(time.Hour)}, slack, 0, func(*meter) bool { asked++; return true })
			if c.start >= 0 {
				m.flushAt = c.start
			}
			for _, d := range c.during {
				m.used += m.flushAt + 1 - (m.used - m.durable)
				m.delivered = m.used
				v, ok := m.pending()
				if !ok {
					t.Fatal("nothing pending")
				}
				m.used += d
				m.delivered = m.used
				m.written(v, nil)
			}
			if got := slack - m.flushAt; got != c.wantRoom {
				t.Fatalf("room below the slack = %d, want %d", got, c.wantRoom)
			}
			// The trigger is where the meter asks: not one byte before flushAt, at the first after.
			m.durable, m.used, asked = m.delivered, m.delivered, 0
			tn := &tunnel{}
			if g, err := m.take(m.flushAt, tn); g != m.flushAt || err != nil || asked != 0 {
				t.Fatalf("take up to flushAt: granted %d (%v), asked %d times", g, err, asked)
			}
			m.delivered = m.used
			if g, _ := m.take(1, tn); g != 1 || asked != 1 {
				t.Fatalf("take past flushAt: granted %d, asked %d times, want 1", g, asked)
			}
		})
	}
}

func repeat(v int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}
