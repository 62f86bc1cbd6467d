package fr

import (
	"context"
	"math"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/internal/fanout"
)

// Source is how one upstream of a composite report answered, in the one shape of
// internal/fanout. A failed source is declared, never guessed around: the fields it feeds
// are null and confidence is lower.
type Source = fanout.Source

// Source statuses.
const (
	SourceOK       = fanout.OK
	SourceNotFound = fanout.NotFound
	SourceFailed   = fanout.Failed
	SourceTimeout  = fanout.Timeout
)

// Cache keeps upstream answers for the reports (the process's result cache), so that a
// second report on a company, of any kind, reuses what the first one fetched.
type Cache = fanout.Cache

// call is one upstream call of a report (fanout.Call): with a Key, a successful answer is
// kept for TTL and a kept one replaces the call.
type call = fanout.Call

// fanRunner runs the reports' sources: they stop a little before the route's deadline, so
// that a slow one is declared in the answer rather than turning the whole report into a 504;
// a 404 is an answer (the upstream knows nothing), not a failure.
func (r *Routes) fanRunner() *fanout.Runner {
	return &fanout.Runner{Cache: r.cache, Margin: assembleMargin, Now: r.now, NotFound: upstream.IsNotFound,
		// The client-facing message, not the upstream's own text: it names the upstream and
		// the status or the field, and nothing an upstream could inject.
		Describe: func(err error) string { return apierr.From(err).Message }}
}

// fetch makes one call, or reads its answer from the cache.
func (r *Routes) fetch(ctx context.Context, c call) (Source, error) {
	srcs, errs := r.fanRunner().Run(ctx, c)
	return srcs[0], errs[0]
}

// fanOut runs every call in parallel under ctx (the route's one deadline) and reports each
// outcome in the order of calls.
func (r *Routes) fanOut(ctx context.Context, calls ...call) []Source {
	out, _ := r.fanOutErrs(ctx, calls...)
	return out
}

// fanOutErrs is fanOut with each call's error, for the reports that cannot stand without
// some of their sources (see essential).
func (r *Routes) fanOutErrs(ctx context.Context, calls ...call) ([]Source, []error) {
	return r.fanRunner().Run(ctx, calls...)
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
func (r *Routes) source(name string, err error) Source { return r.fanRunner().Outcome(name, err) }

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
