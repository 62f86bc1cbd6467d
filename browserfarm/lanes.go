package browserfarm

import (
	"slices"
	"sync"
)

// lanes hold the jobs waiting for a browser, paid and free apart: a free browser takes the
// oldest paid job first, and a free job only while fewer than freeSlots free jobs run, so
// paid calls never wait behind free ones and free calls never hold the whole pool.
type lanes struct {
	mu          sync.Mutex
	paid, free  []*job
	paidCap     int
	freeCap     int
	freeSlots   int
	freeRunning int
	// wake holds one signal per job that may have become startable; a worker checks the
	// lanes before it sleeps on it, so a dropped signal (buffer full) loses no job.
	wake chan struct{}
}

func newLanes(paidCap, freeCap, freeSlots, workers int) *lanes {
	return &lanes{paidCap: paidCap, freeCap: freeCap, freeSlots: freeSlots, wake: make(chan struct{}, workers)}
}

// push queues j in its lane, or reports that the lane is full.
func (l *lanes) push(j *job) bool {
	l.mu.Lock()
	if j.task.Free {
		if len(l.free) >= l.freeCap {
			l.mu.Unlock()
			return false
		}
		l.free = append(l.free, j)
	} else {
		if len(l.paid) >= l.paidCap {
			l.mu.Unlock()
			return false
		}
		l.paid = append(l.paid, j)
	}
	l.mu.Unlock()
	l.signal()
	return true
}

// requeue puts a job that was already admitted back at the head of its lane, capacity or not.
func (l *lanes) requeue(j *job) {
	l.mu.Lock()
	if j.task.Free {
		l.free = slices.Insert(l.free, 0, j)
	} else {
		l.paid = slices.Insert(l.paid, 0, j)
	}
	l.mu.Unlock()
	l.signal()
}

// next takes the job a free browser should run now, or nil. A free job taken counts against
// the free share until done is called for it.
func (l *lanes) next() *job {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.paid) > 0 {
		j := l.paid[0]
		l.paid[0] = nil
		l.paid = l.paid[1:]
		return j
	}
	if len(l.free) > 0 && l.freeRunning < l.freeSlots {
		j := l.free[0]
		l.free[0] = nil
		l.free = l.free[1:]
		l.freeRunning++
		return j
	}
	return nil
}

// done returns a finished job's place in the free share.
func (l *lanes) done(j *job) {
	if !j.task.Free {
		return
	}
	l.mu.Lock()
	l.freeRunning--
	waiting := len(l.free) > 0
	l.mu.Unlock()
	if waiting {
		l.signal()
	}
}

// remove takes back a job whose caller stopped waiting, so it holds no place in its lane.
func (l *lanes) remove(j *job) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i := slices.Index(l.paid, j); i >= 0 {
		l.paid = slices.Delete(l.paid, i, i+1)
	}
	if i := slices.Index(l.free, j); i >= 0 {
		l.free = slices.Delete(l.free, i, i+1)
	}
}

// drain empties both lanes.
func (l *lanes) drain() []*job {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := append(l.paid, l.free...)
	l.paid, l.free = nil, nil
	return out
}

// depth is how many jobs wait in each lane, and how many free jobs run.
func (l *lanes) depth() (paid, free, freeRunning int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.paid), len(l.free), l.freeRunning
}

func (l *lanes) signal() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}
