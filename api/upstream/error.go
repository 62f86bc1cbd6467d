package upstream

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/peage/appliance/api/apierr"
)

// Sentinel causes that are not an upstream answer.
var (
	// ErrCircuitOpen means the breaker refused the call after repeated failures.
	ErrCircuitOpen = errors.New("circuit open after repeated failures")
	// ErrThrottled means our own rate limit for the upstream could not admit the call in time.
	ErrThrottled = errors.New("local rate limit for this upstream reached")
	// ErrFreeShare means a call served free found the share of the upstream's rate limit
	// kept for free calls used (WithFree).
	ErrFreeShare = errors.New("the share of this upstream's rate limit for free calls is used")
	// ErrNotConfigured means the upstream needs a credential that is not configured: 503
	// at the edge, whoever returns it.
	ErrNotConfigured error = notConfigured{}
	// ErrBadAnswer means the upstream answered in a shape the connector cannot read: the
	// provider changed its format. Error.Field names where.
	ErrBadAnswer = errors.New("answer not in the expected shape")
)

// Error is the one failure type of every connector. Status is the upstream's HTTP status
// (0 when no answer came back). The edge maps it to 502/504 and charges nothing.
type Error struct {
	Upstream  string
	Op        string // e.g. "GET /search"
	Status    int
	Retryable bool
	// Field is the path of the field that could not be read (results.gazole_prix), for an
	// answer that is not in the expected shape; "" for the whole body.
	Field string
	Err   error
	// Body is the upstream's answer to a non-2xx status, for connectors whose errors say what
	// went wrong in the body (OSRM's code); nil otherwise.
	Body []byte
	// Reason is the refusal the upstream named in an answer whose HTTP status says success
	// (VIES's IP_BLOCKED, MS_UNAVAILABLE): a code safe to show the client, which the status
	// alone would hide.
	Reason string
	// Display is how messages name the upstream when its name alone would not tell which one
	// failed (the DNS resolvers asked); "" for Upstream.
	Display string
}

func (e *Error) Error() string {
	s := fmt.Sprintf("upstream %s: %s", e.Upstream, e.Op)
	if e.Status != 0 {
		s += fmt.Sprintf(": status %d", e.Status)
	}
	if e.Field != "" {
		s += ": field " + e.Field
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Timeout reports whether the call ran out of time.
func (e *Error) Timeout() bool { return errors.Is(e.Err, context.DeadlineExceeded) }

// BadAnswer builds the error of an answer that cannot be read: err wrapped in ErrBadAnswer.
func BadAnswer(name, op string, status int, field string, err error) *Error {
	return &Error{Upstream: name, Op: op, Status: status, Field: field, Err: fmt.Errorf("%w: %w", ErrBadAnswer, err)}
}

// StatusOf returns the upstream HTTP status carried by err, or 0.
func StatusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// BodyOf returns the body of the upstream's non-2xx answer carried by err, or nil.
func BodyOf(err error) []byte {
	var e *Error
	if errors.As(err, &e) {
		return e.Body
	}
	return nil
}

// IsNotFound reports whether the upstream answered 404.
func IsNotFound(err error) bool { return StatusOf(err) == 404 }

// notConfigured is ErrNotConfigured's type, a Mapper so that a handler returning it (wrapped
// with the upstream's name and the setting to fill in) answers 503, never 500.
type notConfigured struct{}

func (notConfigured) Error() string { return "upstream credential not configured" }

func (notConfigured) APIError() *apierr.Error {
	return apierr.Unavailable("this route's upstream is not configured on this appliance; nothing was charged")
}

// APIError is the client-facing form of a connector error, applied once at the edge
// (apierr.From) for every route family: 502 naming the upstream, 504 on a deadline, 429 when
// our own rate limit for the upstream is saturated. The upstream's own text stays in the
// logged cause.
func (e *Error) APIError() *apierr.Error {
	err, who := error(e), cmp.Or(e.Display, e.Upstream)
	switch {
	case errors.Is(err, ErrFreeShare):
		return apierr.Busy(10*time.Second, "free calls to %s take at most half of what it may be asked, and that half is used right now; retry later, or pay for the route", who)
	case errors.Is(err, ErrThrottled):
		return apierr.Busy(time.Second, "too many calls to %s right now; retry in a second", who)
	case errors.Is(err, ErrNotConfigured):
		return &apierr.Error{Code: apierr.CodeUnavailable, Cause: err, Message: who + " is not configured on this appliance; nothing was charged"}
	case errors.Is(err, ErrCircuitOpen):
		return apierr.Upstream(e.Upstream, err, "%s is failing; calls to it are paused for a moment", who)
	case e.Timeout():
		return apierr.Upstream(e.Upstream, err, "%s did not answer in time", who)
	case errors.Is(err, ErrBadAnswer) && e.Field != "":
		return apierr.Upstream(e.Upstream, err, "%s answered in an unexpected shape (field %s)", who, e.Field)
	case errors.Is(err, ErrBadAnswer):
		return apierr.Upstream(e.Upstream, err, "%s answered in an unexpected shape", who)
	case e.Status == 429:
		return apierr.Upstream(e.Upstream, err, "%s refused the call (rate limited)", who)
	case e.Reason != "":
		return apierr.Upstream(e.Upstream, err, "%s did not answer: %s", who, e.Reason)
	case e.Status != 0:
		return apierr.Upstream(e.Upstream, err, "%s answered status %d", who, e.Status)
	default:
		return apierr.Upstream(e.Upstream, err, "%s could not be reached", who)
	}
}
