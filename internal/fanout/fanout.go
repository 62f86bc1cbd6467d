// Package fanout runs the parallel sources of one answer under the call's deadline: each
// source's answer may come from (and goes to) a cache, each source's outcome is reported in
// one shape (Source), and a source that panics is a failed source, never a crashed process.
// Every route family that asks several sources at once goes through it; docs/fanout.md shows
// the shape answers report their sources in.
package fanout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"
	"sync"
	"time"

	"github.com/peage/appliance/internal/obs"
)

// Status is how a source answered.
type Status string

const (
	OK       Status = "ok"
	NotFound Status = "not_found" // the source answered that it knows nothing: an answer, not a failure
	Failed   Status = "failed"
	Timeout  Status = "timeout" // the source did not answer before the deadline
)

// Source is how one source of an answer answered: the one shape every answer reports its
// sources in (all of them in "sources", or the failed ones in "sources_failed" beside the
// names in "sources_answered"). Error says why a source failed, in words safe for the
// caller; it is null when the source answered.
type Source struct {
	Source string `json:"source"`
	// Detail names what was asked when an answer asks one source several things.
	Detail    string  `json:"detail,omitempty"`
	Status    Status  `json:"status"`
	Error     *string `json:"error"`
	FetchedAt string  `json:"fetched_at"`
	Cached    bool    `json:"cached"` // answered from what an earlier call fetched
}

// Answered reports whether the source gave an answer (a not-found is one).
func (s Source) Answered() bool { return s.Status == OK || s.Status == NotFound }

// Cache keeps sources' answers between calls (the process's result cache).
type Cache interface {
	Get(key string) ([]byte, bool)
	Set(key string, val []byte, ttl time.Duration)
}

// Call is one source of a fan-out. Run asks it and fills the caller's variable, which Out
// points to; with a Key, an answer is kept in the cache for TTL, and a kept one fills Out
// instead of Run. Out is zeroed when Run fails, so a failed source feeds nothing.
type Call struct {
	Source string
	Detail string
	Key    string
	TTL    time.Duration
	Out    any
	Run    func(ctx context.Context) error
}

// Runner runs fan-outs. The zero value runs every call under the caller's context, with no
// cache, and describes failures with a generic reason.
type Runner struct {
	Cache Cache
	// Margin is kept between the sources' deadline and the call's, to assemble and send the
	// answer: a slow source is then reported as a timeout rather than failing the call.
	Margin time.Duration
	// NotFound tells the errors that mean the source knows nothing (an upstream's 404).
	NotFound func(error) bool
	// Describe is the caller-safe reason of a failure (never the source's own text).
	Describe func(error) string
	Now      func() time.Time
	Log      *slog.Logger
}

// PanicError is the failure of a source that panicked.
type PanicError struct {
	Source string
	Value  any
}

func (e *PanicError) Error() string { return fmt.Sprintf("source %s panicked: %v", e.Source, e.Value) }

// Run asks every call in parallel and reports, in the order of calls, each one's outcome and
// error (nil for an answer; a not-found keeps its error, for callers that need to tell it).
func (r *Runner) Run(ctx context.Context, calls ...Call) ([]Source, []error) {
	if dl, ok := ctx.Deadline(); ok && r.Margin > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-r.Margin))
		defer cancel()
	}
	out, errs := make([]Source, len(calls)), make([]error, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() { out[i], errs[i] = r.one(ctx, c) })
	}
	wg.Wait()
	return out, errs
}

// Go runs fns in parallel and returns each one's error, a panic being its function's
// failure: for the families that ask a fixed few things at once and report them their own
// way (a DNS answer and its DMARC record).
func Go(ctx context.Context, log *slog.Logger, fns ...func(context.Context) error) []error {
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Go(func() { errs[i] = guard(ctx, log, fmt.Sprint(i), fn) })
	}
	wg.Wait()
	return errs
}

// Go is the package's Go under the runner's margin, logging a panic to its Log.
func (r *Runner) Go(ctx context.Context, fns ...func(context.Context) error) []error {
	if dl, ok := ctx.Deadline(); ok && r.Margin > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-r.Margin))
		defer cancel()
	}
	return Go(ctx, r.Log, fns...)
}

// guard runs fn, turning its panic into a *PanicError logged with its stack.
func guard(ctx context.Context, log *slog.Logger, source string, fn func(context.Context) error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Source: source, Value: v}
			if log != nil {
				log.Error("source panicked", slog.String(obs.KeyUpstream, source), slog.String(obs.KeyErr, fmt.Sprint(v)),
					slog.String(obs.KeyStack, string(debug.Stack())))
			}
		}
	}()
	return fn(ctx)
}

func (r *Runner) one(ctx context.Context, c Call) (Source, error) {
	if r.Cache != nil && c.Key != "" && c.Out != nil {
		if b, ok := r.Cache.Get(c.Key); ok {
			var k kept
			if json.Unmarshal(b, &k) == nil && json.Unmarshal(k.V, c.Out) == nil {
				s := r.Outcome(c.Source, nil)
				s.Detail, s.FetchedAt, s.Cached = c.Detail, k.At.UTC().Format(time.RFC3339), true
				return s, nil
			}
		}
	}
	err := guard(ctx, r.Log, c.Source, c.Run)
	if err != nil && c.Out != nil {
		// Some connectors return a value with their error: a failed source feeds nothing.
		reflect.ValueOf(c.Out).Elem().SetZero()
	}
	if err == nil && r.Cache != nil && c.Key != "" && c.Out != nil {
		if v, merr := json.Marshal(c.Out); merr == nil {
			if b, merr := json.Marshal(kept{At: r.now(), V: v}); merr == nil {
				r.Cache.Set(c.Key, b, c.TTL)
			}
		}
	}
	s := r.Outcome(c.Source, err)
	s.Detail = c.Detail
	return s, err
}

// kept is an answer in the cache, with the time it was fetched.
type kept struct {
	At time.Time       `json:"at"`
	V  json.RawMessage `json:"v"`
}

// Outcome is the report of source's answer err, fetched now: for a source asked outside Run.
func (r *Runner) Outcome(source string, err error) Source {
	s := Source{Source: source, FetchedAt: r.now().UTC().Format(time.RFC3339), Status: OK}
	switch {
	case err == nil:
		return s
	case r.NotFound != nil && r.NotFound(err):
		s.Status = NotFound
		return s
	case errors.Is(err, context.DeadlineExceeded):
		s.Status = Timeout
	default:
		s.Status = Failed
	}
	why := "the source failed"
	var p *PanicError
	if errors.As(err, &p) {
		why = "internal error"
	} else if r.Describe != nil {
		why = r.Describe(err)
	}
	s.Error = &why
	return s
}

// Missing is the report of a source that answered without what it was asked for (an empty
// list, no row for the asset): a failure, said as why.
func (r *Runner) Missing(source, why string) Source {
	return Source{Source: source, FetchedAt: r.now().UTC().Format(time.RFC3339), Status: Failed, Error: &why}
}

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// FailedOf is the outcomes that did not answer, for "sources_failed"; never nil.
func FailedOf(outcomes []Source) []Source {
	out := []Source{}
	for _, s := range outcomes {
		if !s.Answered() {
			out = append(out, s)
		}
	}
	return out
}

// AnsweredOf is the names of the sources of outcomes that answered, for "sources_answered";
// never nil.
func AnsweredOf(outcomes []Source) []string {
	out := []string{}
	for _, s := range outcomes {
		if s.Answered() {
			out = append(out, s.Source)
		}
	}
	return out
}
