package crypto

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// snapshot keeps the last good answer of an expensive fetch and refreshes it when it is older
// than its time to live. Concurrent callers that find it stale share one refresh: the upstream
// sees one request however many agents ask at once.
type snapshot[T any] struct {
	now   func() time.Time
	fetch func(context.Context) (T, time.Duration, error) // the value and how long it may be served
	// refreshTimeout bounds a refresh, which runs detached from the caller that started it so
	// that one caller giving up does not fail the others waiting on the same refresh.
	refreshTimeout time.Duration

	mu      sync.Mutex
	val     T
	at      time.Time // when val was fetched; zero before the first success
	expires time.Time
	group   singleflight.Group
}

func newSnapshotTTL[T any](now func() time.Time, fetch func(context.Context) (T, time.Duration, error)) *snapshot[T] {
	return &snapshot[T]{now: now, fetch: fetch, refreshTimeout: 20 * time.Second}
}

// Get returns the value, when it was fetched, and whether it came from the snapshot (true) or
// from a refresh this call waited for (false).
func (s *snapshot[T]) Get(ctx context.Context) (T, time.Time, bool, error) {
	s.mu.Lock()
	if !s.at.IsZero() && s.now().Before(s.expires) {
		v, at := s.val, s.at
		s.mu.Unlock()
		return v, at, true, nil
	}
	s.mu.Unlock()
	ch := s.group.DoChan("refresh", func() (any, error) {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.refreshTimeout)
		defer cancel()
		v, ttl, err := s.fetch(rctx)
		if err != nil {
			return nil, err
		}
		at := s.now()
		s.mu.Lock()
		s.val, s.at, s.expires = v, at, at.Add(ttl)
		s.mu.Unlock()
		return at, nil
	})
	var zero T
	select {
	case <-ctx.Done():
		return zero, time.Time{}, false, ctx.Err()
	case res := <-ch:
		if res.Err != nil {
			return zero, time.Time{}, false, res.Err
		}
		s.mu.Lock()
		v, at := s.val, s.at
		s.mu.Unlock()
		return v, at, false, nil
	}
}
