package a2a

import (
	"container/list"
	"sync"
	"time"

	"github.com/peage/appliance/api/catalog"
)

// The tasks live in memory, bounded in number, in bytes and in age. That suffices because a
// task holds no money: a paid message is verified, settled and recorded by the gate and the
// ledger exactly as an HTTP call is, and its result is returned in the SendMessage answer
// itself. A task lost to a restart or an eviction costs an unpaid client one more message
// (paying it answers TaskNotFound and charges nothing) and a paid one only tasks/get.
const (
	defaultMaxTasks = 10_000
	defaultMaxBytes = 64 << 20
	defaultTaskTTL  = time.Hour
)

// task is a stored task: its wire form and the call it stands for.
type task struct {
	Task
	entry  *catalog.Entry
	params map[string]any
	// busy is set while the paid call runs, so that a second payment for the same task is
	// refused rather than run twice.
	busy    bool
	size    int
	touched time.Time
	elem    *list.Element
}

// store holds the tasks, oldest update first, evicting the oldest beyond its bounds.
type store struct {
	mu       sync.Mutex
	tasks    map[string]*task
	order    *list.List
	bytes    int
	maxTasks int
	maxBytes int
	ttl      time.Duration
	now      func() time.Time
}

func newStore(maxTasks, maxBytes int, ttl time.Duration, now func() time.Time) *store {
	return &store{tasks: map[string]*task{}, order: list.New(), maxTasks: maxTasks, maxBytes: maxBytes, ttl: ttl, now: now}
}

// put stores a new task, sized by size bytes, and evicts beyond the bounds.
func (s *store) put(t *task, size int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.putLocked(t, size)
}

func (s *store) putLocked(t *task, size int) {
	if t.elem != nil {
		s.order.Remove(t.elem)
		s.bytes -= t.size
	}
	t.size, t.touched = size, s.now()
	t.elem = s.order.PushBack(t)
	s.tasks[t.ID] = t
	s.bytes += size
	s.evict()
}

// evict drops expired tasks and then the oldest until the bounds hold; the newest task stays
// even when it alone is over the byte budget, so that its client can read it once.
func (s *store) evict() {
	for s.order.Len() > 1 {
		oldest := s.order.Front().Value.(*task)
		if s.order.Len() <= s.maxTasks && s.bytes <= s.maxBytes && s.now().Sub(oldest.touched) < s.ttl {
			return
		}
		s.drop(oldest)
	}
}

func (s *store) drop(t *task) {
	s.order.Remove(t.elem)
	t.elem = nil
	s.bytes -= t.size
	delete(s.tasks, t.ID)
}

// get returns a copy of the task's wire form, or false when it is unknown or expired.
func (s *store) get(id string) (Task, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.live(id)
	if t == nil {
		return Task{}, false
	}
	return t.Task, true
}

func (s *store) live(id string) *task {
	t := s.tasks[id]
	if t == nil {
		return nil
	}
	if s.now().Sub(t.touched) >= s.ttl {
		s.drop(t)
		return nil
	}
	return t
}

// claim marks the task as running its paid call and returns it, or says why it cannot be:
// unknown, already running, or in a terminal state.
func (s *store) claim(id string) (*task, claimFault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.live(id)
	switch {
	case t == nil:
		return nil, claimUnknown
	case t.busy:
		return nil, claimBusy
	case terminal(t.Status.State):
		return nil, claimTerminal
	}
	t.busy = true
	return t, claimOK
}

// release ends a claim with the task's next form (written under the lock: readers copy it).
// A task evicted while its call ran is stored again, so that its client can read the result.
func (s *store) release(t *task, next Task, size int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t.busy = false
	t.Task = next
	s.putLocked(t, size)
}

type claimFault uint8

const (
	claimOK claimFault = iota
	claimUnknown
	claimBusy
	claimTerminal
)
