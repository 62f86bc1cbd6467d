package paywall

import (
	"context"

	"github.com/peage/appliance/api/catalog"
)

// The free-call policy, in one place: which calls are served without a payment, what they
// spend, and what a client told "no" is answered. The server decides nothing of it: it hands
// a paid route's call to the Gate and a free route's to ServeFree.

// FreeBucket is each client's allowance of calls served free (the server's per-client token
// bucket). Take spends one token, or says why not (a 429 with its Retry-After); Refund gives
// back the token of a call that was then not served.
type FreeBucket interface {
	Take(client string) error
	Refund(client string)
}

// NewCall is the call the gate (or ServeFree) sees. Its Key is computed only when something
// needs it (a free route, a free first call, a payment, a cacheable result): the unpaid
// challenge, the hot path, needs neither the key nor a timer.
func NewCall(e *catalog.Entry, req *catalog.Request, resourceURL string, free FreeBucket) *Call {
	call := &Call{Entry: e, Request: req, ResourceURL: resourceURL, Free: free}
	if _, paid := call.Payment(); e.Kind != catalog.Paid || e.FreeFirstCall || paid != "" || e.CacheTTL > 0 {
		call.Key = e.Key(req.Args)
	}
	return call
}

// ColdProbe reports whether a call is a discovery crawler's unpaid probe: no parameter at all
// and no payment, on a paid route. It answers the 402, whose Bazaar declaration describes the
// input, rather than the 400 of a missing parameter (crawlers drop a route that answers 400).
// A call that carries any parameter is validated first as always.
func ColdProbe(e *catalog.Entry, raw map[string]any, req *catalog.Request) bool {
	return e.Kind == catalog.Paid && len(raw) == 0 && PaymentHeader(req) == ""
}

// ServeFree runs the work of a free route: it spends one of the client's free-call tokens
// (429 when none is left; the service's own descriptions spend none) and marks the call
// free, so the upstreams give paid calls precedence.
func ServeFree(ctx context.Context, call *Call, work func(context.Context) (any, error)) (any, error) {
	if !call.Entry.Document && call.Free != nil {
		if err := call.Free.Take(call.Request.ClientIP); err != nil {
			return nil, err
		}
	}
	call.Request.Free = true
	return work(ctx)
}

// freeFirstCall runs the free first call of a paid route, which served decides is the
// client's (the day's allowance), with the free-call token spent first: an empty bucket is
// a 402, since a client that would pay must get the challenge, never be told to wait; a
// token spent on a call then refused is given back.
func freeFirstCall(ctx context.Context, call *Call, served func() (bool, error), work func(context.Context) (any, error)) (bool, any, error) {
	client := call.Request.ClientIP
	if call.Free != nil {
		if err := call.Free.Take(client); err != nil {
			return false, nil, PaymentRequired(ReasonFreeCallLimited)
		}
	}
	ok, err := served()
	if err != nil || !ok {
		if call.Free != nil {
			call.Free.Refund(client)
		}
		return false, nil, err
	}
	call.Request.Free = true
	out, err := work(ctx)
	return true, out, err
}
