// Package farmerr is the browser farm's failures in its own terms: what went wrong with the
// pool, the caller's target or the page, never an HTTP status. The API's edge maps each Kind
// to its answer once (api/server); the farm imports nothing of the API. Standard library only,
// so the edge can read these errors without depending on the browser driver.
package farmerr

import (
	"context"
	"errors"
	"time"
)

// Kind is what failed.
type Kind uint8

const (
	// Unavailable: the pool cannot take the job (starting, stopped, shutting down), or the
	// browser serving it broke; retrying later may work.
	Unavailable Kind = iota + 1
	// Busy: every browser is busy and the job's lane is full, or the job lost its place in
	// it; RetryAfter estimates when a place frees.
	Busy
	// Refused: the caller's target is refused before or instead of being read (not an
	// absolute http(s) URL, no such host, an address the egress policy refuses).
	Refused
	// Timeout: the page (or the wait for a browser) did not finish within the job's deadline
	// or a stage's budget.
	Timeout
	// PageFailed: the page could not be loaded, crashed its tab, sent no document, or is not
	// the page asked for (a site's wall, its HTTP error).
	PageFailed
	// TooLarge: the rendered page is over the configured size limit.
	TooLarge
	// NotFound: a route's own site has no such page (its HTTP 404 for what the route asked).
	NotFound
)

// Error is a failure of a farm job. Message is written for the caller; Cause is logged only.
type Error struct {
	Kind    Kind
	Message string
	// Party is who failed, for PageFailed and Timeout: "target" for the page the caller
	// asked for, a route's own site's name (Task.Site), "" for the farm itself.
	Party      string
	RetryAfter time.Duration // for Busy
	Cause      error
}

// TargetParty is the Party of the caller's own page.
const TargetParty = "target"

func (e *Error) Error() string {
	if e.Cause != nil {
		return e.Message + ": " + e.Cause.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Cause }

// As returns the farm error err carries, nil when it carries none.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// KindOf is the kind of the farm failure err carries, 0 when it carries none.
func KindOf(err error) Kind {
	if e := As(err); e != nil {
		return e.Kind
	}
	return 0
}

// Is reports whether err is a farm failure of kind k.
func Is(err error, k Kind) bool { return KindOf(err) == k }

// New is a failure of kind k, with no party and no cause.
func New(k Kind, msg string) *Error { return &Error{Kind: k, Message: msg} }

// Page is a failure of the page party failed: PageFailed, or Timeout when cause is a
// deadline.
func Page(party string, cause error, msg string) *Error {
	k := PageFailed
	if errors.Is(cause, context.DeadlineExceeded) {
		k = Timeout
	}
	return &Error{Kind: k, Party: party, Cause: cause, Message: msg}
}
