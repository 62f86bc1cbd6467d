package fr

import (
	"context"
	"errors"
	"math"
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
}

// Source statuses.
const (
	SourceOK       = "ok"
	SourceNotFound = "not_found"
	SourceFailed   = "failed"
	SourceTimeout  = "timeout"
)

// call is one upstream call of a fan-out: run fills the caller's variables.
type call struct {
	upstream string
	run      func(ctx context.Context) error
}

// fanOut runs every call in parallel under ctx (the route's one deadline) and reports each
// outcome in the order of calls. A 404 is an answer (the upstream knows nothing), not a
// failure.
func (r *Routes) fanOut(ctx context.Context, calls ...call) []Source {
	out := make([]Source, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() {
			err := c.run(ctx)
			out[i] = r.source(c.upstream, err)
		})
	}
	wg.Wait()
	return out
}

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
	msg := apierr.From(fail(err)).Message
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

// answered reports whether the source can be read: the fields it feeds are filled.
func (s Source) answered() bool { return s.Status == SourceOK || s.Status == SourceNotFound }
