package connecthead

import (
	"net/netip"
	"sync"
	"time"
)

// WrongKeys counts each client's wrong (or missing) keys over a minute, so that a client
// guessing keys is refused once it reached the limit, until its minute ends.
type WrongKeys struct {
	Limit int              // wrong keys per client per minute; 0: no limit
	Now   func() time.Time // the clock (tests move it); nil means time.Now

	mu sync.Mutex
	m  map[netip.Prefix]*window
}

type window struct {
	start time.Time
	n     int
}

func (w *WrongKeys) now() time.Time {
	if w.Now == nil {
		return time.Now()
	}
	return w.Now()
}

// Add counts one wrong key from client; a window over a minute old starts again.
func (w *WrongKeys) Add(client netip.Prefix) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	win := w.m[client]
	if win == nil || now.Sub(win.start) > time.Minute {
		if w.m == nil {
			w.m = map[netip.Prefix]*window{}
		}
		win = &window{start: now}
		w.m[client] = win
	}
	win.n++
}

// Throttled says whether client reached the limit within its minute.
func (w *WrongKeys) Throttled(client netip.Prefix) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	win := w.m[client]
	return win != nil && w.Limit > 0 && win.n >= w.Limit && w.now().Sub(win.start) <= time.Minute
}

// Sweep forgets the windows over a minute old.
func (w *WrongKeys) Sweep() {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	for c, win := range w.m {
		if now.Sub(win.start) > time.Minute {
			delete(w.m, c)
		}
	}
}
