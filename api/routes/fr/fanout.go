package fr

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"sync"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/upstream"
)

// Source is how one upstream of a composite report answered. A failed source is declared,
// never guessed around: the fields it feeds are null and confidence is lower.
type Source struct {
	Upstream  string  `json:"upstream"`
	FetchedAt string  `json:"fetched_at"`
	Status    string  `json:"status"` // ok, not_found, failed, timeout
	Error     *string `json:"error"`
	Cached    bool    `json:"cached"` // answered from the answer a previous report fetched
	// Detail names what was asked when a report asks one upstream several things (a DVF
	// file: commune and year).
	Detail string `json:"detail,omitempty"`
}

// Source statuses.
const (
	SourceOK       = "ok"
	SourceNotFound = "not_found"
	SourceFailed   = "failed"
	SourceTimeout  = "timeout"
)

// Cache keeps upstream answers for the reports (the process's result cache), so that a
// second report on a company, of any kind, reuses what the first one fetched.
type Cache interface {
	Get(key string) ([]byte, bool)
	Set(key string, val []byte, ttl time.Duration)
}

// call is one upstream call of a report: run fills the caller's variable, which out points
// to. With a key, a successful answer is kept for ttl and a kept one replaces the call.
type call struct {
	upstream string
	key      string
	ttl      time.Duration
	out      any
	run      func(ctx context.Context) error
}

// kept is an answer in the cache, with the time it was fetched.
type kept struct {
	At time.Time       `json:"at"`
	V  json.RawMessage `json:"v"`
}

// fetch makes one call, or reads its answer from the cache.
func (r *Routes) fetch(ctx context.Context, c call) (Source, error) {
	if r.cache != nil && c.key != "" {
		if b, ok := r.cache.Get(c.key); ok {
			var k kept
			if json.Unmarshal(b, &k) == nil && json.Unmarshal(k.V, c.out) == nil {
				s := r.source(c.upstream, nil)
				s.FetchedAt, s.Cached = k.At.UTC().Format(time.RFC3339), true
				return s, nil
			}
		}
	}
	err := c.run(ctx)
	if err != nil {
		// Some connectors return a value with their error: a failed source feeds nothing.
		reflect.ValueOf(c.out).Elem().SetZero()
	}
	if err == nil && r.cache != nil && c.key != "" {
		if v, merr := json.Marshal(c.out); merr == nil {
			if b, merr := json.Marshal(kept{At: r.now(), V: v}); merr == nil {
				r.cache.Set(c.key, b, c.ttl)
			}
		}
	}
	return r.source(c.upstream, err), err
}

// fanOut runs every call in parallel under ctx (the route's one deadline) and reports each
// outcome in the order of calls. A 404 is an answer (the upstream knows nothing), not a
// failure.
func (r *Routes) fanOut(ctx context.Context, calls ...call) []Source {
	out, _ := r.fanOutErrs(ctx, calls...)
	return out
}

// fanOutErrs is fanOut with each call's error, for the reports that cannot stand without
// some of their sources (see essential).
func (r *Routes) fanOutErrs(ctx context.Context, calls ...call) ([]Source, []error) {
	// The sources stop a little before the route's deadline, so that a slow one is declared
	// in the answer rather than turning the whole report into a 504.
	if dl, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-assembleMargin))
		defer cancel()
	}
	out, errs := make([]Source, len(calls)), make([]error, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() { out[i], errs[i] = r.fetch(ctx, c) })
	}
	wg.Wait()
	return out, errs
}

// essential fails the call with the first error of the sources a report cannot stand
// without (a 404 is an answer, not a failure): 502 or 504 naming the upstream, not charged.
func essential(errs []error, which ...int) error {
	for _, i := range which {
		if err := errs[i]; err != nil && !upstream.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// assembleMargin is the time kept after the sources to build and send the answer.
const assembleMargin = 2 * time.Second

// source describes the outcome err of one call to name.
func (r *Routes) source(name string, err error) Source {
	s := Source{Upstream: name, FetchedAt: r.now().UTC().Format(time.RFC3339), Status: SourceOK}
	var ue *upstream.Error
	switch {
	case err == nil:
		return s
	case upstream.IsNotFound(err):
		s.Status = SourceNotFound
		return s
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ue) && ue.Timeout():
		s.Status = SourceTimeout
	default:
		s.Status = SourceFailed
	}
	// The client-facing message, not the upstream's own text: it names the upstream and
	// the status or the field, and nothing an upstream could inject.
	msg := apierr.From(err).Message
	s.Error = &msg
	return s
}

// confidence is the share of the sources that answered, two decimals: a report built on
// every source is 1, one missing source of five is 0.8.
func confidence(sources []Source) float64 {
	if len(sources) == 0 {
		return 0
	}
	ok := 0
	for _, s := range sources {
		if s.Status == SourceOK || s.Status == SourceNotFound {
			ok++
		}
	}
	return math.Round(float64(ok)/float64(len(sources))*100) / 100
}
