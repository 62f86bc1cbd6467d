// Package cache is the appliance's in-memory result cache: a typed wrapper over ristretto v2
// holding byte values under string keys with a per-entry TTL and a total size bound, plus
// hit/miss counters for /metrics.
//
// Two users: the API server caches upstream answers per (route ID, canonical args) for the
// route's catalog CacheTTL, and keeps settled results for idempotent replay of a paid call.
// Ristretto admits entries by frequency (TinyLFU) and may drop a Set under contention, so the
// cache is a cache: a miss must always be survivable. For a value that should be readable at
// once (a settled result), use SetSync.
package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/ristretto/v2"
)

// Options sizes the cache. Zero values take the defaults in brackets.
type Options struct {
	MaxBytes int64 // total cost bound: keys plus values plus per-entry overhead [256 MiB]
	// AvgBytes is the expected average entry size, used to size the admission counters [4 KiB].
	AvgBytes int64
}

// entryOverhead approximates ristretto's per-item bookkeeping, charged to each entry's cost.
const entryOverhead = 64

// Cache is safe for concurrent use.
type Cache struct {
	c            *ristretto.Cache[string, []byte]
	hits, misses atomic.Uint64
	sets, reject atomic.Uint64
}

// New builds a cache.
func New(opts Options) (*Cache, error) {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = 256 << 20
	}
	if opts.AvgBytes <= 0 {
		opts.AvgBytes = 4 << 10
	}
	items := max(opts.MaxBytes/opts.AvgBytes, 100)
	c, err := ristretto.NewCache(&ristretto.Config[string, []byte]{
		NumCounters: items * 10, // ristretto's advice: 10x the number of items when full
		MaxCost:     opts.MaxBytes,
		BufferItems: 64,
		Metrics:     true,
	})
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	return &Cache{c: c}, nil
}

// Get returns the value under key if present and not expired. The returned slice is shared:
// do not modify it.
func (c *Cache) Get(key string) ([]byte, bool) {
	v, ok := c.c.Get(key)
	if ok {
		c.hits.Add(1)
	} else {
		c.misses.Add(1)
	}
	return v, ok
}

// Set stores val under key for ttl (ttl <= 0 does nothing: an uncacheable answer). It is
// asynchronous: a Get right after may still miss. The cache keeps val; do not modify it after.
func (c *Cache) Set(key string, val []byte, ttl time.Duration) { c.set(key, val, ttl) }

func (c *Cache) set(key string, val []byte, ttl time.Duration) bool {
	if ttl <= 0 {
		return false
	}
	c.sets.Add(1)
	ok := c.c.SetWithTTL(key, val, cost(key, val), ttl)
	if !ok {
		c.reject.Add(1)
	}
	return ok
}

// SetSync is Set followed by a wait until the value is applied: a Get that follows sees it,
// unless the admission policy refused it or it was evicted (it reports false when refused
// outright).
func (c *Cache) SetSync(key string, val []byte, ttl time.Duration) bool {
	ok := c.set(key, val, ttl)
	c.c.Wait()
	return ok
}

// Del removes key.
func (c *Cache) Del(key string) { c.c.Del(key) }

// Close stops the cache's goroutines.
func (c *Cache) Close() { c.c.Close() }

func cost(key string, val []byte) int64 { return int64(len(key)+len(val)) + entryOverhead }

// Stats are the cache's counters for /metrics.
type Stats struct {
	Hits, Misses uint64 // Get results
	Sets         uint64 // Set calls with a positive TTL
	SetsRejected uint64 // Sets dropped at once (contention) as Set reported
	KeysAdded    uint64 // entries admitted
	KeysEvicted  uint64 // entries evicted for space
	CostAdded    uint64 // bytes admitted
	CostEvicted  uint64 // bytes evicted
	BytesUsed    int64  // bytes held now (approximate)
	MaxBytes     int64
	HitRatio     float64 // Hits / (Hits+Misses), 0 before any Get
}

// Stats reads the counters.
func (c *Cache) Stats() Stats {
	m := c.c.Metrics
	s := Stats{Hits: c.hits.Load(), Misses: c.misses.Load(), Sets: c.sets.Load(), SetsRejected: c.reject.Load(),
		MaxBytes: c.c.MaxCost()}
	if m != nil {
		s.KeysAdded, s.KeysEvicted = m.KeysAdded(), m.KeysEvicted()
		s.CostAdded, s.CostEvicted = m.CostAdded(), m.CostEvicted()
		s.BytesUsed = int64(s.CostAdded) - int64(s.CostEvicted)
	}
	if total := s.Hits + s.Misses; total > 0 {
		s.HitRatio = float64(s.Hits) / float64(total)
	}
	return s
}

// Key builds a cache key from a namespace (e.g. a route ID, or "settled") and arguments in a
// canonical form: args are marshalled as JSON (map keys sorted by encoding/json), so the same
// arguments in any order give the same key. Long keys are hashed.
func Key(namespace string, args any) string {
	b, err := json.Marshal(args)
	if err != nil {
		b = []byte(fmt.Sprintf("%#v", args))
	}
	if len(b) > 200 {
		sum := sha256.Sum256(b)
		return namespace + "\x00#" + hex.EncodeToString(sum[:])
	}
	return namespace + "\x00" + string(b)
}
