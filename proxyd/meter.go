package proxyd

import (
	"errors"
	"sync"
	"time"
)

var (
	errExhausted = errors.New("the package's bytes are used up")
	errExpired   = errors.New("the package has expired")
	errRevoked   = errors.New("the package was revoked")
	errClosed    = errors.New("tunnel closed")
)

// A meter write starts once the meter's lag (used - durable) reaches flushAt, which leaves
// room, below the slack, for what passes while that write is queued and under way: each
// write is measured (the lag left when it lands is what passed meanwhile) and the room kept
// is twice the last one's, at least an eighth of the slack and at most half, rising at once
// and falling by a quarter a write. Each write costs about 0.3 ms of CPU (mostly the kernel's
// fsync), so writing as late as the slack allows is what makes the meter cheap: at a home
// line's 1 Gbit/s a write covers about 3.5 MiB (about 290 writes per GiB) instead of the 2 MiB
// of a fixed half-slack trigger (512), and at full speed on loopback, where a write lands
// after megabytes, the trigger stays at half the slack, as it was, so throughput is not cut.
const (
	minHeadroomFraction = 8
	maxHeadroomFraction = 2
)

// meter is one package's live account. All byte fields are guarded by mu:
//
//	delivered ≤ used ≤ quota           used also holds grants whose write is in flight
//	durable ≤ delivered                 durable is what the store has (survives kill -9)
//	used ≤ durable + slack              so the truth never runs more than slack ahead of disk
//
// Every byte is granted (used += n) before it is handed to the kernel and settled
// (delivered += written, the rest returned) after, so the cut at the quota is exact and the
// durable value is always a lower bound of what really passed, within slack of it.
type meter struct {
	id      string
	gb      int
	quota   int64
	created time.Time
	expires time.Time
	slack   int64
	window  int64

	mu          sync.Mutex
	cond        sync.Cond
	used        int64
	delivered   int64
	durable     int64
	revoked     bool
	expired     bool
	flushQueued bool
	flushAt     int64 // the lag (used - durable) at which a write is asked for
	holders     map[*pump]struct{}
	tunnels     map[*tunnel]struct{}
	enqueue     func(*meter) bool
}

func newMeter(p Package, slack, window int64, enqueue func(*meter) bool) *meter {
	m := &meter{
		id: p.ID, gb: p.GB, quota: p.Bytes, created: p.CreatedAt, expires: p.ExpiresAt,
		slack: slack, window: window,
		used: p.Used, delivered: p.Used, durable: p.Used, revoked: p.Revoked,
		holders: map[*pump]struct{}{}, tunnels: map[*tunnel]struct{}{}, enqueue: enqueue,
		flushAt: slack - slack/maxHeadroomFraction,
	}
	m.cond.L = &m.mu
	return m
}

// refusal says why a new tunnel may not open for this package, or nil.
func (m *meter) refusal(now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.refusalLocked(now)
}

func (m *meter) refusalLocked(now time.Time) error {
	switch {
	case m.revoked:
		return errRevoked
	case m.expired || !now.Before(m.expires):
		return errExpired
	case m.delivered >= m.quota:
		return errExhausted
	}
	return nil
}

func (m *meter) stoppedLocked(t *tunnel) error {
	switch {
	case m.revoked:
		return errRevoked
	case m.expired:
		return errExpired
	case t.closed.Load():
		return errClosed
	}
	return nil
}

// take grants up to n bytes for one user-space write, waiting while the durable meter lags by
// slack or while the last bytes of the quota are held by kernel-copy windows that may yet be
// returned. It returns 0 and errExhausted once every byte of the quota has passed.
func (m *meter) take(n int64, t *tunnel) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for {
		if err := m.stoppedLocked(t); err != nil {
			return 0, err
		}
		rem, room := m.quota-m.used, m.durable+m.slack-m.used
		if m.used+n > m.durable+m.flushAt {
			m.requestFlushLocked()
		}
		if g := min(n, rem, room); g > 0 {
			m.used += g
			return g, nil
		}
		if rem <= 0 && m.used == m.delivered {
			return 0, errExhausted
		}
		// What is in flight decides. A kernel window stalled on a quiet sender is interrupted
		// when its unused bytes are the ones missing (the quota's last bytes, or room that a
		// flush cannot make); otherwise the flusher is what is awaited.
		if rem < n || m.delivered <= m.durable {
			m.preemptLocked()
		}
		m.cond.Wait()
	}
}

// minWindow is the smallest span worth a kernel-copy window.
const minWindow = 32 << 10

// grantWindow reserves a whole kernel-copy window for p when the quota and the durable lag
// both leave room for it (plus a window's margin before the quota, so that exact chunks take
// over near the end). ok is false when p must copy exactly instead.
func (m *meter) grantWindow(p *pump) (int64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.window == 0 || m.stoppedLocked(p.t) != nil {
		return 0, false
	}
	// Every tunnel of the key may hold a window each way, so they share what the slack allows:
	// slow streams must not park the slack in windows that take long to fill while the others
	// wait for room. Below minWindow an exact chunk is as good.
	w := min(m.window, m.slack/(4*int64(max(len(m.tunnels), 1))))
	if w < minWindow || m.quota-m.used-w < w {
		return 0, false
	}
	if m.used+w > m.durable+m.flushAt {
		m.requestFlushLocked()
	}
	if m.used+w > m.durable+m.slack {
		return 0, false
	}
	m.used += w
	m.holders[p] = struct{}{}
	return w, true
}

// settle records that n of the g granted bytes were written; the rest goes back to the quota.
func (m *meter) settle(g, n int64, p *pump) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.used -= g - n
	m.delivered += n
	if p != nil {
		delete(m.holders, p)
		p.preempted.Store(false)
	}
	if m.delivered >= m.quota {
		// The package just ended: every tunnel of it goes, and the final count goes to disk now.
		m.requestFlushLocked()
		for t := range m.tunnels {
			t.shut()
		}
	} else if m.delivered-m.durable >= m.flushAt {
		m.requestFlushLocked()
	}
	// Waiters need waking only when bytes came back or the quota's end is near; a settle that
	// used its whole grant changes nothing they wait for, and waking every pump of a busy key
	// on each one costs more than the copying.
	if g > n || m.used >= m.quota {
		m.cond.Broadcast()
	}
}

func (m *meter) preemptLocked() {
	for p := range m.holders {
		if !p.preempted.Swap(true) {
			p.interrupt()
		}
	}
}

func (m *meter) requestFlushLocked() {
	if m.flushQueued || m.delivered <= m.durable && m.used <= m.durable+m.flushAt {
		return
	}
	if m.enqueue != nil && m.enqueue(m) {
		m.flushQueued = true
	}
}

// pending takes the value to write, or false when the store already has it.
func (m *meter) pending() (int64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.flushQueued = false
	return m.delivered, m.delivered > m.durable
}

// written records a store write of v (err nil: v is durable) and wakes writers waiting for room.
func (m *meter) written(v int64, err error) {
	m.mu.Lock()
	if err == nil && v > m.durable {
		m.durable = v
	}
	if err == nil {
		// What passed (or was granted) while v was queued and written is the room the next
		// write must leave below the slack; falling only slowly, so that a burst after a
		// quiet spell does not stall on a write started too late.
		headroom := min(max(2*(m.used-v), m.slack/minHeadroomFraction, (m.slack-m.flushAt)*3/4), m.slack/maxHeadroomFraction)
		m.flushAt = m.slack - headroom
	}
	m.cond.Broadcast()
	m.mu.Unlock()
}

// addTunnel registers t unless the package refuses new tunnels or is at its cap.
func (m *meter) addTunnel(t *tunnel, now time.Time, limit int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.refusalLocked(now); err != nil {
		return err
	}
	if len(m.tunnels) >= limit {
		return errTooMany
	}
	m.tunnels[t] = struct{}{}
	return nil
}

func (m *meter) removeTunnel(t *tunnel) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.tunnels, t)
	m.cond.Broadcast()
}

// end stops the package (revocation or expiry) and closes its tunnels.
func (m *meter) end(revoke bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if revoke {
		m.revoked = true
	} else {
		m.expired = true
	}
	for t := range m.tunnels {
		t.shut()
	}
	m.cond.Broadcast()
}

func (m *meter) wake() {
	m.mu.Lock()
	m.cond.Broadcast()
	m.mu.Unlock()
}

func (m *meter) snapshot(now time.Time) (used int64, state string, tunnels int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	state = "valid"
	switch err := m.refusalLocked(now); err {
	case errRevoked:
		state = "revoked"
	case errExpired:
		state = "expired"
	case errExhausted:
		state = "exhausted"
	}
	return m.delivered, state, len(m.tunnels)
}
