package browserfarm

import (
	"math"
	"slices"
	"sync"
	"time"
)

// lanes hold the jobs waiting for a browser, paid and free apart: a free browser takes a
// paid job first, and a free job only while fewer than freeSlots free jobs run, so paid calls
// never wait behind free ones and free calls never hold the whole pool.
//
// Within a lane the browsers are shared by caller (internal/caller: the payer and the client of a
// job are each a party). A party holds at most its cap of browsers at once; of the waiting
// jobs that fit their parties' caps, the one whose parties hold the fewest browsers goes
// first, then the oldest, so a newcomer is served before a party that already holds
// browsers. When a lane is full, a newcomer takes the place of the newest job of the party
// holding the most places (running and waiting), if that party holds more than the newcomer
// would. A party demoted by its strikes (timeouts on its own targets) holds one browser at
// most, goes after every party in good standing and gives up its places first.
type lanes struct {
	mu          sync.Mutex
	paid, free  []*job
	lim         laneLimits
	freeRunning int
	seq         uint64
	running     map[string]int // browsers held, by party
	waiting     map[string]int // places in the lanes, by party
	strikes     strikes
	now         func() time.Time
	// wake holds one signal per job that may have become startable; a worker checks the
	// lanes before it sleeps on it, so a dropped signal (buffer full) loses no job.
	wake chan struct{}
}

// laneLimits are the lanes' sizes and the sharing rules.
type laneLimits struct {
	paidCap, freeCap, freeSlots, workers int
	payerBrowsers, clientBrowsers        int
	strikeLimit                          float64
	strikeHalfLife                       time.Duration
}

func newLanes(lim laneLimits) *lanes {
	return &lanes{lim: lim, running: map[string]int{}, waiting: map[string]int{}, now: time.Now,
		strikes: strikes{limit: lim.strikeLimit, halfLife: lim.strikeHalfLife, score: map[string]strike{}},
		wake:    make(chan struct{}, lim.workers)}
}

// Party keys: one payer (its address) and one client are each a party.
const (
	payerParty  = "payer "
	clientParty = "client "
)

func (l *lanes) capOf(party string) int {
	if len(party) > len(payerParty) && party[:len(payerParty)] == payerParty {
		return l.lim.payerBrowsers
	}
	return l.lim.clientBrowsers
}

// push queues j in its lane. A full lane refuses it (ok false), unless it makes room by
// evicting a job of a party holding more places; the evicted job, which the caller must
// answer, is returned.
func (l *lanes) push(j *job) (ok bool, evicted *job) {
	l.mu.Lock()
	lane, limit := &l.paid, l.lim.paidCap
	if j.task.Free {
		lane, limit = &l.free, l.lim.freeCap
	}
	if len(*lane) >= limit {
		evicted = l.evictable(*lane, j)
		if evicted == nil {
			l.mu.Unlock()
			return false, nil
		}
		l.take(lane, evicted)
	}
	l.seq++
	j.seq = l.seq
	*lane = append(*lane, j)
	l.count(l.waiting, j, 1)
	l.mu.Unlock()
	l.signal()
	return true, evicted
}

// evictable is the waiting job that gives up its place to the newcomer j, nil when none must:
// a demoted party's before a party in good standing, else the newest of the party holding the
// most places, if that is more than j's party will hold once j is in.
func (l *lanes) evictable(lane []*job, j *job) *job {
	now := l.now()
	demoted := l.demoted(j, now)
	var worst *job
	var worstDemoted bool
	worstLoad := -1
	for _, w := range lane {
		d, load := l.demoted(w, now), l.load(w)
		if worst == nil || (d && !worstDemoted) || (d == worstDemoted && (load > worstLoad || (load == worstLoad && w.seq > worst.seq))) {
			worst, worstDemoted, worstLoad = w, d, load
		}
	}
	if worst == nil || (!worstDemoted && demoted) {
		return nil
	}
	if worstDemoted && !demoted {
		return worst
	}
	if worstLoad > l.load(j)+1 {
		return worst
	}
	return nil
}

// load is the most places (browsers held and jobs waiting) any party of j holds.
func (l *lanes) load(j *job) int {
	n := 0
	for _, p := range j.parties {
		n = max(n, l.running[p]+l.waiting[p])
	}
	return n
}

// held is the most browsers any party of j holds.
func (l *lanes) held(j *job) int {
	n := 0
	for _, p := range j.parties {
		n = max(n, l.running[p])
	}
	return n
}

func (l *lanes) demoted(j *job, now time.Time) bool {
	for _, p := range j.parties {
		if l.strikes.demoted(p, now) {
			return true
		}
	}
	return false
}

// fits reports whether j may take a browser now without a party of it passing its cap.
func (l *lanes) fits(j *job, demoted bool) bool {
	for _, p := range j.parties {
		limit := l.capOf(p)
		if demoted {
			limit = 1
		}
		if l.running[p] >= limit {
			return false
		}
	}
	return true
}

// requeue puts a job that was already admitted back in its lane, capacity or not, with its
// first place in the order.
func (l *lanes) requeue(j *job) {
	l.mu.Lock()
	if j.task.Free {
		l.free = append(l.free, j)
	} else {
		l.paid = append(l.paid, j)
	}
	l.count(l.waiting, j, 1)
	l.mu.Unlock()
	l.signal()
}

// next takes the job a free browser should run now, or nil. The job counts against its
// parties' caps (and a free job against the free share) until done is called for it.
func (l *lanes) next() *job {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	j := l.pick(&l.paid, now)
	if j == nil && l.freeRunning < l.lim.freeSlots {
		if j = l.pick(&l.free, now); j != nil {
			l.freeRunning++
		}
	}
	if j != nil {
		l.count(l.running, j, 1)
	}
	return j
}

// pick takes from lane the job to run next: among those that fit their parties' caps, good
// standing first, then the fewest browsers held by its parties, then the oldest.
func (l *lanes) pick(lane *[]*job, now time.Time) *job {
	var best *job
	var bestDemoted bool
	bestHeld := 0
	for _, j := range *lane {
		d := l.demoted(j, now)
		if !l.fits(j, d) {
			continue
		}
		h := l.held(j)
		if best == nil || (!d && bestDemoted) || (d == bestDemoted && (h < bestHeld || (h == bestHeld && j.seq < best.seq))) {
			best, bestDemoted, bestHeld = j, d, h
		}
	}
	if best != nil {
		l.take(lane, best)
	}
	return best
}

// take removes j from lane and its places from its parties' count.
func (l *lanes) take(lane *[]*job, j *job) {
	i := slices.Index(*lane, j)
	*lane = slices.Delete(*lane, i, i+1)
	l.count(l.waiting, j, -1)
}

func (l *lanes) count(m map[string]int, j *job, d int) {
	for _, p := range j.parties {
		if m[p] += d; m[p] <= 0 {
			delete(m, p)
		}
	}
}

// done returns a finished job's browser to its parties and its place in the free share.
func (l *lanes) done(j *job) {
	l.mu.Lock()
	l.count(l.running, j, -1)
	if j.task.Free {
		l.freeRunning--
	}
	waiting := len(l.paid)+len(l.free) > 0
	l.mu.Unlock()
	if waiting {
		// A job held back by its party's cap may fit now.
		l.signal()
	}
}

// strike counts against j's parties a job that held its browser until its deadline on the
// target its caller chose.
func (l *lanes) strike(j *job) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for _, p := range j.parties {
		l.strikes.add(p, now)
	}
}

// remove takes back a job whose caller stopped waiting, so it holds no place in its lane.
func (l *lanes) remove(j *job) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, lane := range []*[]*job{&l.paid, &l.free} {
		if slices.Contains(*lane, j) {
			l.take(lane, j)
		}
	}
}

// drain empties both lanes.
func (l *lanes) drain() []*job {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := append(l.paid, l.free...)
	l.paid, l.free = nil, nil
	clear(l.waiting)
	return out
}

// depth is how many jobs wait in each lane, and how many free jobs run.
func (l *lanes) depth() (paid, free, freeRunning int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.paid), len(l.free), l.freeRunning
}

// demotedParties is how many parties are demoted now.
func (l *lanes) demotedParties() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.strikes.count(l.now())
}

// placesOf is the most places any party of j holds, for the answer to a refused call.
func (l *lanes) placesOf(j *job) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.load(j)
}

func (l *lanes) signal() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// strikes score each party's timeouts; a score halves every halfLife, so a party that stops
// stalling the farm is back in good standing after a while, and one that keeps at it stays
// demoted.
type strikes struct {
	limit    float64
	halfLife time.Duration
	score    map[string]strike
}

type strike struct {
	value float64
	at    time.Time
}

// maxStrikers bounds the memory the scores take; past it, the scores that have nearly
// decayed are forgotten.
const maxStrikers = 4096

func (s *strikes) value(party string, now time.Time) float64 {
	st, ok := s.score[party]
	if !ok {
		return 0
	}
	return st.value * math.Exp2(-float64(now.Sub(st.at))/float64(s.halfLife))
}

func (s *strikes) add(party string, now time.Time) {
	s.score[party] = strike{value: s.value(party, now) + 1, at: now}
	if len(s.score) > maxStrikers {
		for p := range s.score {
			if s.value(p, now) < s.limit/2 {
				delete(s.score, p)
			}
		}
	}
}

func (s *strikes) demoted(party string, now time.Time) bool {
	return len(s.score) > 0 && s.value(party, now) >= s.limit
}

func (s *strikes) count(now time.Time) int {
	n := 0
	for p := range s.score {
		if s.demoted(p, now) {
			n++
		}
	}
	return n
}
