// Package browserfarm runs a pool of headless Chromium browsers driven by rod and executes
// web jobs on them. Farm.Do is the only API the rest of the appliance sees; nothing else in
// the module imports rod.
//
// Each browser reaches the network only through its own loopback filtering proxy that dials
// through the appliance's egress policy. Each job gets a fresh incognito context and one tab,
// runs under one deadline split into stage budgets, and is disposed of afterwards. Browsers
// are recycled after a number of jobs, an age or a memory mark, and restarted when they crash.
package browserfarm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peage/appliance/browserfarm/farmerr"
	"github.com/peage/appliance/internal/caller"
	"github.com/peage/appliance/internal/egress"
	"github.com/peage/appliance/internal/obs"
)

// Log keys.
const (
	logSlot    = obs.KeySlot
	logPID     = obs.KeyPID
	logErr     = obs.KeyErr
	logReason  = obs.KeyReason
	logJobs    = obs.KeyJobs
	logMemMB   = obs.KeyMemoryMB
	logURL     = obs.KeyURL
	logDur     = obs.KeyDuration
	logComp    = obs.KeyComponent
	logOrphans = obs.KeyOrphans
)

// Stats is the farm's health for /metrics.
type Stats struct {
	Size        int    `json:"size"`         // configured browsers
	BrowsersUp  int    `json:"browsers_up"`  // browsers connected and usable
	JobsRunning int    `json:"jobs_running"` // jobs on a browser now
	QueueDepth  int    `json:"queue_depth"`  // jobs waiting for a browser (paid and free)
	QueueCap    int    `json:"queue_cap"`    // waiting paid jobs beyond which calls get 429
	FreeSlots   int    `json:"free_slots"`   // browsers free jobs may hold at once
	FreeRunning int    `json:"free_running"` // free jobs on a browser now
	FreeQueued  int    `json:"free_queued"`  // free jobs waiting for their share
	FreeCap     int    `json:"free_cap"`     // waiting free jobs beyond which free calls get 429
	JobsDone    uint64 `json:"jobs_done"`    // jobs finished (any outcome)
	JobsFailed  uint64 `json:"jobs_failed"`  // jobs that returned an error
	Rejected    uint64 `json:"rejected"`     // calls refused with 429 (evicted ones included)
	// PayerBrowsers and ClientBrowsers cap the browsers one payer and one client hold at once.
	PayerBrowsers  int    `json:"payer_browsers"`
	ClientBrowsers int    `json:"client_browsers"`
	Evicted        uint64 `json:"evicted"`      // waiting calls whose place went to a caller holding fewer
	Strikes        uint64 `json:"strikes"`      // jobs that held their browser until their deadline
	Demoted        int    `json:"demoted"`      // payers and clients demoted by their strikes now
	Restarts       uint64 `json:"restarts"`     // browsers replaced after a crash or disconnect
	Recycled       uint64 `json:"recycled"`     // browsers retired by jobs/age/memory
	LaunchFails    uint64 `json:"launch_fails"` // failed launch attempts
	Crashes        uint64 `json:"page_crashes"` // renderer crashes seen in jobs
	AvgJobMS       int64  `json:"avg_job_ms"`   // moving average of a job's run time
	MemoryMB       int    `json:"memory_mb"`    // memory (PSS) of all browsers, last measured
}

// Farm is the browser pool.
type Farm struct {
	cfg    Config
	policy *egress.Policy
	log    *slog.Logger
	lanes  *lanes
	slots  []*slot

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	launchMu   sync.Mutex
	lastLaunch time.Time

	up, running, launching        atomic.Int64
	done, failed, rejected        atomic.Uint64
	evicted, strikes              atomic.Uint64
	restarts, recycled, launchErr atomic.Uint64
	crashes                       atomic.Uint64
	warm                          atomic.Int64 // browsers holding a ready spare tab
	avgJobNS                      atomic.Int64
	started                       atomic.Bool // a browser has been up at least once
}

type slot struct {
	id    int
	proxy *filterProxy
	mu    sync.Mutex
	cur   *instance
	memMB atomic.Int64
}

func (s *slot) instance() *instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

type job struct {
	ctx    context.Context
	task   Task
	queued time.Time
	out    chan outcome
	// navigated is set once the target may have been contacted; before that a job whose
	// browser died can run again elsewhere without the target seeing two visits.
	navigated bool
	retried   bool
	// parties are the job's payer and client (lanes), seq its place in arrival order.
	parties []string
	seq     uint64
}

// parties are the sharing keys of a job's caller: its payer and its client, each when known.
func parties(id caller.ID) []string {
	var ps []string
	if id.Payer != "" {
		ps = append(ps, payerParty+id.Payer)
	}
	if id.Client != "" {
		ps = append(ps, clientParty+id.Client)
	}
	return ps
}

type outcome struct {
	res *Result
	err error
}

// New starts the pool. It returns once the first browser is up, so a broken installation
// fails at start; the others launch staggered in the background. A first browser that is
// only slow to start (errSlowStart) does not fail New: the pool reports itself starting and
// keeps launching with longer budgets.
func New(ctx context.Context, cfg Config, policy *egress.Policy, log *slog.Logger) (*Farm, error) {
	if policy == nil {
		return nil, errors.New("browserfarm: an egress policy is required")
	}
	if log == nil {
		log = slog.Default()
	}
	cfg = cfg.withDefaults()
	if n := sweepOrphans(cfg.TempDir); n > 0 {
		log.Warn("killed browsers left by a farm that died", logOrphans, n)
	}
	fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	f := &Farm{cfg: cfg, policy: policy, log: log.With(logComp, "browserfarm"),
		lanes: newLanes(cfg.laneLimits()), ctx: fctx, cancel: cancel}
	for i := range cfg.Size {
		p, err := newFilterProxy(policy, f.log)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("browserfarm: egress proxy: %w", err)
		}
		f.slots = append(f.slots, &slot{id: i, proxy: p})
	}
	first := f.slots[0]
	f.launching.Add(1)
	in, err := f.launch(ctx, first, 0)
	f.launching.Add(-1)
	firstFailures := 0
	switch {
	case err == nil:
		f.prewarm(in)
		first.cur = in
		f.up.Add(1)
		f.started.Store(true)
	case errors.Is(err, errSlowStart):
		f.launchErr.Add(1)
		firstFailures = 1
		f.log.Warn("the first browser is slow to start; the pool keeps trying with longer budgets", logErr, err)
	default:
		f.Close()
		return nil, fmt.Errorf("browserfarm: %w", err)
	}
	for _, s := range f.slots {
		f.wg.Add(1)
		// A machine too slow for the first browser's budget is too slow for the others' too:
		// every slot starts at the longer budget rather than spending a start of its own to learn it.
		go f.worker(s, firstFailures)
	}
	return f, nil
}

// Close stops the workers and kills every browser; jobs running fail with 503 at once rather
// than at their deadline, and jobs still queued fail with 503.
func (f *Farm) Close() {
	f.cancel()
	var live []*instance
	for _, s := range f.slots {
		if in := s.instance(); in != nil {
			in.kill()
			live = append(live, in)
		}
	}
	f.wg.Wait()
	for _, s := range f.slots {
		// A worker may have swapped in a browser while we were killing the others.
		if in := s.instance(); in != nil && !slices.Contains(live, in) {
			in.kill()
			live = append(live, in)
		}
	}
	for _, in := range live {
		in.waitGone(5 * time.Second)
	}
	for _, s := range f.slots {
		s.proxy.close()
	}
	for _, j := range f.lanes.drain() {
		j.out <- outcome{err: farmerr.New(farmerr.Unavailable, "the browser pool is shutting down")}
	}
}

// Ready reports whether at least one browser can take a job; routes use it to answer 503
// before asking for payment.
func (f *Farm) Ready() error {
	if f.ctx.Err() != nil {
		return farmerr.New(farmerr.Unavailable, "the browser pool is stopped")
	}
	if !f.started.Load() {
		return farmerr.New(farmerr.Unavailable, "the browser pool is starting; retry in a minute")
	}
	// While a browser is being (re)started, calls queue for it; only a pool with nothing up
	// and nothing starting (launches failing, in back-off) is unavailable.
	if f.up.Load() == 0 && f.launching.Load() == 0 {
		return farmerr.New(farmerr.Unavailable, "no browser is running right now; retry in a few seconds")
	}
	return nil
}

// Stats reports the pool's health.
func (f *Farm) Stats() Stats {
	rss := 0
	for _, s := range f.slots {
		rss += int(s.memMB.Load())
	}
	paid, free, freeRunning := f.lanes.depth()
	return Stats{
		Size: f.cfg.Size, BrowsersUp: int(f.up.Load()), JobsRunning: int(f.running.Load()),
		QueueDepth: paid + free, QueueCap: f.cfg.Queue, FreeSlots: f.cfg.freeSlots(), FreeRunning: freeRunning,
		FreeQueued: free, FreeCap: f.cfg.FreeQueue, JobsDone: f.done.Load(),
		JobsFailed: f.failed.Load(), Rejected: f.rejected.Load(), Restarts: f.restarts.Load(),
		Recycled: f.recycled.Load(), LaunchFails: f.launchErr.Load(), Crashes: f.crashes.Load(),
		AvgJobMS: f.avgJobNS.Load() / int64(time.Millisecond), MemoryMB: rss,
		PayerBrowsers: f.cfg.PayerBrowsers, ClientBrowsers: f.cfg.ClientBrowsers,
		Evicted: f.evicted.Load(), Strikes: f.strikes.Load(), Demoted: f.lanes.demotedParties(),
	}
}

// Do runs one task on a browser and waits for it. It never blocks past ctx: a full lane
// is refused at once (farmerr.Busy), and a job whose caller has gone leaves its lane.
func (f *Farm) Do(ctx context.Context, t Task) (*Result, error) {
	res, err := f.do(ctx, t)
	if err != nil && t.Site != nil {
		err = t.Site.unreachable(err)
	}
	return res, err
}

func (f *Farm) do(ctx context.Context, t Task) (*Result, error) {
	if err := f.Ready(); err != nil {
		return nil, err
	}
	if err := f.checkTarget(ctx, t.URL); err != nil {
		return nil, err
	}
	j := &job{ctx: ctx, task: t, queued: time.Now(), out: make(chan outcome, 1), parties: parties(caller.From(ctx))}
	ok, evicted := f.lanes.push(j)
	if evicted != nil {
		f.rejected.Add(1)
		f.evicted.Add(1)
		evicted.out <- outcome{err: f.busy(evicted, true)}
	}
	if !ok {
		f.rejected.Add(1)
		return nil, f.busy(j, false)
	}
	select {
	case o := <-j.out:
		return o.res, o.err
	case <-ctx.Done():
		f.lanes.remove(j)
		return nil, unfinished(fmt.Errorf("waiting for a browser: %w", ctx.Err()))
	}
}

// busy is the 429 of a job refused by a full lane, or evicted from it by a caller holding
// fewer places.
func (f *Farm) busy(j *job, evicted bool) error {
	paid, free, _ := f.lanes.depth()
	if evicted {
		return busy(f.retryAfter(f.lanes.placesOf(j), f.cfg.Size),
			"all %d browsers are busy and this call's place in the queue went to another caller's, since you hold %d places; nothing was charged",
			f.cfg.Size, f.lanes.placesOf(j)+1)
	}
	if j.task.Free {
		return busy(f.retryAfter(free, f.cfg.freeSlots()),
			"free calls may use %d of the %d browsers and %d free calls are waiting; paid calls are served first", f.cfg.freeSlots(), f.cfg.Size, free)
	}
	return busy(f.retryAfter(paid, f.cfg.Size), "all %d browsers are busy and %d calls are waiting", f.cfg.Size, paid)
}

// retryAfter estimates when a place in a lane frees: waiting jobs drain at browsers jobs per
// average job.
func (f *Farm) retryAfter(waiting, browsers int) time.Duration {
	avg := time.Duration(f.avgJobNS.Load())
	if avg <= 0 {
		avg = time.Second
	}
	d := time.Duration(math.Ceil(float64(waiting) / float64(max(browsers, 1)) * float64(avg)))
	return max(time.Second, d.Round(time.Second))
}

// worker keeps its slot's browser running and feeds it jobs; failures counts the slot's
// consecutive failed starts, which lengthen the next start's budget.
func (f *Farm) worker(s *slot, failures int) {
	defer f.wg.Done()
	backoff := 500 * time.Millisecond
	for f.ctx.Err() == nil {
		in := s.instance()
		if in == nil || in.dead() {
			// Counted as launching before the dead one is retired, so Ready never sees a gap.
			f.launching.Add(1)
			if in != nil {
				f.retire(s, in, "crashed or disconnected")
				f.restarts.Add(1)
			}
			nin, err := f.launch(f.ctx, s, failures)
			f.launching.Add(-1)
			if err != nil && f.ctx.Err() != nil {
				return // shutting down
			}
			if err != nil {
				f.launchErr.Add(1)
				failures++
				f.log.Error("browser launch failed", logSlot, s.id, logErr, err)
				select {
				case <-time.After(backoff):
				case <-f.ctx.Done():
				}
				backoff = min(2*backoff, 30*time.Second)
				continue
			}
			backoff = 500 * time.Millisecond
			failures = 0
			f.prewarm(nin)
			s.mu.Lock()
			s.cur = nin
			s.mu.Unlock()
			f.up.Add(1)
			f.started.Store(true)
			continue
		}
		if j := f.lanes.next(); j != nil {
			f.runJob(s, in, j)
			f.lanes.done(j)
			if reason := f.recycleReason(s, in); reason != "" {
				f.retire(s, in, reason)
				f.recycled.Add(1)
			}
			continue
		}
		select {
		case <-f.ctx.Done():
			return
		case <-in.exited:
			// Loop: the dead instance is replaced before it is handed a job.
		case <-f.lanes.wake:
		}
	}
}

// retire takes an instance out of service and kills it off the request path.
func (f *Farm) retire(s *slot, in *instance, reason string) {
	s.mu.Lock()
	if s.cur == in {
		s.cur = nil
		f.up.Add(-1)
	}
	s.mu.Unlock()
	if in.spare != nil {
		in.spare = nil
		f.warm.Add(-1)
	}
	s.memMB.Store(0)
	f.log.Info("browser retired", logSlot, s.id, logPID, in.pid, logReason, reason, logJobs, in.jobs)
	go in.kill()
}

func (f *Farm) recycleReason(s *slot, in *instance) string {
	switch {
	case in.dead():
		return "" // the worker loop replaces it and counts a restart
	case f.cfg.RecycleJobs > 0 && in.jobs >= f.cfg.RecycleJobs:
		return "job count"
	case f.cfg.RecycleAge > 0 && time.Since(in.started) >= f.cfg.RecycleAge:
		return "age"
	}
	if f.cfg.RecycleMemoryMB > 0 {
		rss := groupMemoryMB(in.pid)
		s.memMB.Store(int64(rss))
		if rss >= f.cfg.RecycleMemoryMB {
			f.log.Info("browser over its memory mark", logSlot, s.id, logMemMB, rss)
			return "memory"
		}
	}
	return ""
}

// launch starts a browser for the slot, spacing launches by LaunchStagger across the farm,
// within the budget for the slot's consecutive failures.
func (f *Farm) launch(ctx context.Context, s *slot, failures int) (*instance, error) {
	f.launchMu.Lock()
	if wait := f.cfg.LaunchStagger - time.Since(f.lastLaunch); wait > 0 {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			f.launchMu.Unlock()
			return nil, ctx.Err()
		}
	}
	f.lastLaunch = time.Now()
	f.launchMu.Unlock()
	in, err := launch(ctx, f.cfg, s.proxy.addr(), f.cfg.launchBudget(failures))
	if err != nil {
		return nil, err
	}
	f.log.Info("browser up", logSlot, s.id, logPID, in.pid)
	return in, nil
}

func (f *Farm) runJob(s *slot, in *instance, j *job) {
	if err := j.ctx.Err(); err != nil {
		j.out <- outcome{err: unfinished(err)}
		return
	}
	f.running.Add(1)
	start := time.Now()
	tb := in.spare
	if tb != nil {
		in.spare = nil
		f.warm.Add(-1)
	}
	var (
		res *Result
		err error
	)
	if tb == nil {
		tb, err = f.newTab(in)
		if err != nil {
			err = f.browserErr(j.ctx, err, "open a tab")
		}
	}
	if err == nil {
		res, err = f.execute(s, tb, j)
	}
	in.jobs++
	f.running.Add(-1)
	d := time.Since(start)
	// Exponential moving average with weight 1/8.
	if old := f.avgJobNS.Load(); old == 0 {
		f.avgJobNS.Store(int64(d))
	} else {
		f.avgJobNS.Store(old + (int64(d)-old)/8)
	}
	if err != nil && in.dead() && !j.navigated && !j.retried && j.ctx.Err() == nil {
		j.retried = true
		f.lanes.requeue(j)
		f.log.Info("job requeued after its browser died before navigating", logSlot, s.id, logURL, j.task.URL)
		f.dispose(in, tb)
		return
	}
	f.done.Add(1)
	if (heldToDeadline(err) || (err == nil && res.ReadAtDeadline)) && d >= f.cfg.JobTimeout/3 {
		// The page held its browser until the deadline: a strike against the caller who chose
		// it, whether it rendered nothing (a timeout) or was read there (a success, charged:
		// paying for it does not give the browser back any sooner).
		f.lanes.strike(j)
		f.strikes.Add(1)
	}
	if err != nil {
		f.failed.Add(1)
		if in.dead() {
			err = farmerr.New(farmerr.Unavailable, "the browser serving this call stopped during the job; nothing was charged, retry")
		}
		f.log.Debug("job failed", logSlot, s.id, logURL, j.task.URL, logErr, err, logDur, d.Milliseconds())
	}
	if res != nil {
		res.Timings.Queue = start.Sub(j.queued)
	}
	j.out <- outcome{res: res, err: err}
	// After the answer is on its way: drop this job's context, open the next one's.
	f.dispose(in, tb)
	f.prewarm(in)
}

// prewarm opens the next job's tab unless the browser is about to be retired.
func (f *Farm) prewarm(in *instance) {
	if in.dead() || in.spare != nil || (f.cfg.RecycleJobs > 0 && in.jobs >= f.cfg.RecycleJobs) {
		return
	}
	tb, err := f.newTab(in)
	if err != nil {
		if !in.dead() && f.ctx.Err() == nil {
			f.log.Warn("could not open a spare tab", logPID, in.pid, logErr, err)
		}
		return
	}
	in.spare = tb
	f.warm.Add(1)
}

// Idle reports whether the pool is quiet: no job running or waiting, and every browser up
// with its next tab ready.
func (f *Farm) Idle() bool {
	if paid, free, _ := f.lanes.depth(); f.running.Load() != 0 || paid+free != 0 || f.up.Load() != int64(len(f.slots)) {
		return false
	}
	return f.warm.Load() == int64(len(f.slots))
}

// BrowserPIDs lists the process-group leaders of the running browsers, for operators and for
// the tests and benchmark that kill one to prove recovery.
func (f *Farm) BrowserPIDs() []int {
	var pids []int
	for _, s := range f.slots {
		if in := s.instance(); in != nil && !in.dead() {
			pids = append(pids, in.pid)
		}
	}
	return pids
}

// Gauges is Stats as one labelled gauge family for /metrics: stat name → value, e.g.
// registry.GaugeFunc("peage_browserfarm", "Browser farm health.", farm.Gauges, "stat").
func (f *Farm) Gauges() map[string]float64 {
	s := f.Stats()
	return map[string]float64{
		"size": float64(s.Size), "browsers_up": float64(s.BrowsersUp), "jobs_running": float64(s.JobsRunning),
		"queue_depth": float64(s.QueueDepth), "queue_cap": float64(s.QueueCap), "free_slots": float64(s.FreeSlots),
		"free_running": float64(s.FreeRunning), "free_queued": float64(s.FreeQueued), "free_cap": float64(s.FreeCap),
		"jobs_done":   float64(s.JobsDone),
		"jobs_failed": float64(s.JobsFailed), "rejected": float64(s.Rejected), "restarts": float64(s.Restarts),
		"recycled": float64(s.Recycled), "launch_fails": float64(s.LaunchFails), "page_crashes": float64(s.Crashes),
		"avg_job_ms": float64(s.AvgJobMS), "memory_mb": float64(s.MemoryMB),
		"payer_browsers": float64(s.PayerBrowsers), "client_browsers": float64(s.ClientBrowsers),
		"evicted": float64(s.Evicted), "strikes": float64(s.Strikes), "demoted": float64(s.Demoted),
	}
}

// heldToDeadline reports whether a job's error says its page kept the browser until the
// job's deadline (it never settled, or its document never ended).
func heldToDeadline(err error) bool {
	return farmerr.Is(err, farmerr.Timeout)
}

// busy is the refusal of a job no lane can hold now.
func busy(retryAfter time.Duration, format string, args ...any) error {
	return &farmerr.Error{Kind: farmerr.Busy, RetryAfter: retryAfter, Message: fmt.Sprintf(format, args...)}
}

// unfinished is the failure of a job whose caller's context ended before a browser took it.
func unfinished(err error) error {
	msg := "the call did not finish within its deadline"
	if !errors.Is(err, context.DeadlineExceeded) {
		msg = "the call was cancelled"
	}
	return &farmerr.Error{Kind: farmerr.Timeout, Cause: err, Message: msg}
}
