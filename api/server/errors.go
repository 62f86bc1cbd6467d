package server

import (
	"errors"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/browserfarm/farmerr"
)

// errorOf is the one mapping of a call's failure to what the client sees: the handler's own
// *apierr.Error, else the typed error of the layer that failed (an upstream's through
// apierr.Mapper, the browser farm's here, since the farm imports nothing of the API), else a
// deadline's 504 or an internal 500. Handlers return their collaborators' errors as they come.
func errorOf(err error) *apierr.Error {
	if r, ok := errors.AsType[*apierr.Reworded](err); ok {
		e := *errorOf(r.Err)
		e.Message = r.Prefix + e.Message
		return &e
	}
	if e := apierr.Known(err); e != nil {
		return e
	}
	if fe := farmerr.As(err); fe != nil {
		return farmError(fe)
	}
	return apierr.From(err)
}

// farmError is the answer to a failure of a browser job: the caller's refused url is a 400
// naming it, the page's or a route's own site's failure a 502 (504 on its deadline) naming
// that party, a full pool a 429 with Retry-After.
func farmError(fe *farmerr.Error) *apierr.Error {
	e := &apierr.Error{Message: fe.Message, Cause: fe}
	switch fe.Kind {
	case farmerr.Refused:
		e.Code, e.Param = apierr.CodeBadParam, "url"
	case farmerr.Busy:
		e.Code, e.RetryAfter = apierr.CodeBusy, fe.RetryAfter
	case farmerr.Unavailable:
		e.Code = apierr.CodeUnavailable
	case farmerr.Timeout:
		e.Code, e.Upstream = apierr.CodeTimeout, fe.Party
	case farmerr.PageFailed:
		e.Code, e.Upstream = apierr.CodeUpstream, fe.Party
	case farmerr.TooLarge:
		e.Code = apierr.CodeTooLarge
	case farmerr.NotFound:
		e.Code = apierr.CodeNotFound
	default:
		e.Code, e.Message = apierr.CodeInternal, "internal error"
	}
	return e
}
