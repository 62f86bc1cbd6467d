// Package apierr is the one error vocabulary of the API. Handlers return their collaborators'
// typed errors as they come (an upstream's, the farm's, the catalog's) or an *Error of their
// own; the edge maps them to HTTP exactly once, with From and Status. A plain error that is
// neither is an internal failure: its text is logged, never shown.
package apierr

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Code is the stable machine-readable error code in {"error":{"code":...}}.
type Code string

const (
	CodeBadParam      Code = "bad_param"
	CodeBadRequest    Code = "bad_request"
	CodePayment       Code = "payment_required"
	CodeForbidden     Code = "forbidden"
	CodeNotFound      Code = "not_found"
	CodeMethod        Code = "method_not_allowed"
	CodeGone          Code = "gone"
	CodeTooLarge      Code = "too_large"
	CodeHeaderTooBig  Code = "headers_too_large"
	CodeBusy          Code = "busy"
	CodeUpstream      Code = "upstream_failed"
	CodeUnavailable   Code = "not_available"
	CodeTimeout       Code = "timeout"
	CodeInternal      Code = "internal"
	CodeConflict      Code = "conflict"
	CodeLimitExceeded Code = "limit_exceeded"
	CodeStorageFull   Code = "storage_full"
)

var statusOf = map[Code]int{
	CodeBadParam:      400,
	CodeBadRequest:    400,
	CodePayment:       402,
	CodeForbidden:     403,
	CodeNotFound:      404,
	CodeMethod:        405,
	CodeConflict:      409,
	CodeGone:          410,
	CodeTooLarge:      413,
	CodeLimitExceeded: 429,
	CodeHeaderTooBig:  431,
	CodeBusy:          429,
	CodeUpstream:      502,
	CodeUnavailable:   503,
	CodeTimeout:       504,
	CodeInternal:      500,
	CodeStorageFull:   507,
}

// Error is a failure the client may see. Message is written for the caller; Cause is logged only.
type Error struct {
	Code       Code
	Message    string
	Param      string        // the offending parameter, for bad_param
	Upstream   string        // the upstream that failed, for upstream_failed/timeout
	RetryAfter time.Duration // for busy and limit_exceeded
	// Header is set on the answer beside the error body: a fleet gateway names the box that
	// failed the call, as it names the box of a result.
	Header map[string]string
	Cause  error
}

func (e *Error) Error() string {
	s := string(e.Code) + ": " + e.Message
	if e.Param != "" {
		s += " (param " + e.Param + ")"
	}
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Cause }

// Status is the HTTP status of the error's code.
func (e *Error) Status() int {
	if s, ok := statusOf[e.Code]; ok {
		return s
	}
	return 500
}

// Body is the JSON error shape shared by every non-2xx answer.
type Body struct {
	Error BodyError `json:"error"`
}

type BodyError struct {
	Code     Code   `json:"code"`
	Message  string `json:"message"`
	Param    string `json:"param,omitempty"`
	Upstream string `json:"upstream,omitempty"`
}

// Mapper is a typed error of a lower layer (an upstream's failure, ...) that says which
// *Error the client sees for it. The lower layer decides what it means; From applies it.
type Mapper interface {
	APIError() *Error
}

// From turns any error into the *Error the client sees: an *Error itself, else the first
// Mapper in the chain. Context deadlines become 504 and anything unknown becomes a 500 whose
// message hides the cause.
func From(err error) *Error {
	if e := Known(err); e != nil {
		return e
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &Error{Code: CodeTimeout, Message: "the call did not finish within its deadline", Cause: err}
	}
	if errors.Is(err, context.Canceled) {
		return &Error{Code: CodeTimeout, Message: "the call was cancelled", Cause: err}
	}
	return &Error{Code: CodeInternal, Message: "internal error", Cause: err}
}

// Reworded is Err told with Prefix before its message: a handler that adds context to a
// collaborator's failure (which steps of a task ran) without deciding its status, which the
// edge maps from Err as always.
type Reworded struct {
	Prefix string
	Err    error
}

func (r *Reworded) Error() string { return r.Prefix + r.Err.Error() }
func (r *Reworded) Unwrap() error { return r.Err }

// Known is the client-facing error err carries (an *Error, or a Mapper's), nil when err is
// unknown: for a handler that reports why one of its sources failed, in its answer.
func Known(err error) *Error {
	// AsType, not As: As's target escapes, an allocation on every error the edge answers.
	if e, ok := errors.AsType[*Error](err); ok {
		return e
	}
	var m Mapper
	if errors.As(err, &m) {
		return m.APIError()
	}
	return nil
}

// BodyOf renders the client-facing JSON body of err.
func BodyOf(e *Error) Body {
	return Body{Error: BodyError{Code: e.Code, Message: e.Message, Param: e.Param, Upstream: e.Upstream}}
}

func BadParam(param, format string, args ...any) *Error {
	return &Error{Code: CodeBadParam, Param: param, Message: fmt.Sprintf(format, args...)}
}

func BadRequest(format string, args ...any) *Error {
	return &Error{Code: CodeBadRequest, Message: fmt.Sprintf(format, args...)}
}

func NotFound(format string, args ...any) *Error {
	return &Error{Code: CodeNotFound, Message: fmt.Sprintf(format, args...)}
}

func Gone(format string, args ...any) *Error {
	return &Error{Code: CodeGone, Message: fmt.Sprintf(format, args...)}
}

func Forbidden(format string, args ...any) *Error {
	return &Error{Code: CodeForbidden, Message: fmt.Sprintf(format, args...)}
}

func TooLarge(format string, args ...any) *Error {
	return &Error{Code: CodeTooLarge, Message: fmt.Sprintf(format, args...)}
}

func Unavailable(format string, args ...any) *Error {
	return &Error{Code: CodeUnavailable, Message: fmt.Sprintf(format, args...)}
}

func Busy(retryAfter time.Duration, format string, args ...any) *Error {
	return &Error{Code: CodeBusy, RetryAfter: retryAfter, Message: fmt.Sprintf(format, args...)}
}

// Upstream reports that the named upstream failed (502). A deadline inside the cause makes it 504.
func Upstream(name string, cause error, format string, args ...any) *Error {
	code := CodeUpstream
	if errors.Is(cause, context.DeadlineExceeded) {
		code = CodeTimeout
	}
	return &Error{Code: code, Upstream: name, Cause: cause, Message: fmt.Sprintf(format, args...)}
}
