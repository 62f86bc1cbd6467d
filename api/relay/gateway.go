package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/fleet/dispatch"
	"github.com/peage/appliance/internal/fleet/registry"
)

// Gateway binds catalog entries to the fleet.
type Gateway struct {
	d    *dispatch.Dispatcher
	view *registry.View
}

// NewGateway relays through d, and lists a route available while view has a box for it.
func NewGateway(d *dispatch.Dispatcher, view *registry.View) *Gateway {
	return &Gateway{d: d, view: view}
}

// Bind binds every relayable entry of cat to the fleet, in place of a handler the gateway's
// own families bound: the routes it keeps are those that are not relayable (discovery, free
// routes, and the paid ones that create something on the gateway).
func (g *Gateway) Bind(cat *catalog.Catalog) error {
	names := map[string]string{}
	for _, e := range cat.Entries() {
		if !Relayable(e) {
			continue
		}
		route := RouteName(e.ID)
		if err := fleet.ValidName(route); err != nil {
			return fmt.Errorf("relay: entry %s: %w", e.ID, err)
		}
		if other, dup := names[route]; dup {
			return fmt.Errorf("relay: entries %s and %s share the fleet route %s", other, e.ID, route)
		}
		names[route] = e.ID
		// The gateway's own families may serve the route too: its calls go to the boxes.
		bind := cat.Bind
		if e.Handler != nil {
			bind = cat.Override
		}
		if err := bind(e.ID, g.handler(e, route), g.ready(route, exitsOf(e))); err != nil {
			return err
		}
	}
	return nil
}

var errNoBox = errors.New("no box of the fleet serves it")

// ready: some box serves the route, and for a route whose calls need an exit in one of a few
// countries, some box exiting in one of them; else the route is a 503 before any 402.
func (g *Gateway) ready(route string, countries []string) func() error {
	return func() error {
		if len(countries) == 0 {
			if g.view.Serving(route) {
				return nil
			}
			return errNoBox
		}
		for _, c := range countries {
			if g.view.ServingWithin(route, registry.Constraints{Country: c}) {
				return nil
			}
		}
		return fmt.Errorf("no box of the fleet whose exit is in %s serves it", strings.Join(countries, " or "))
	}
}

// exitsOf lists the countries a call of e may need the box's exit in, upper case: its fixed
// exit country, or the values its exit parameter admits; none for a route any exit serves, or
// whose parameter admits any country (a box announces such a route only when its exit is known).
func exitsOf(e *catalog.Entry) []string {
	if e.ExitCountry != "" {
		return []string{strings.ToUpper(e.ExitCountry)}
	}
	if e.ExitParam == "" {
		return nil
	}
	var out []string
	for _, p := range e.Params {
		if p.Name == e.ExitParam {
			for _, v := range p.Enum {
				if c := strings.ToUpper(v); !slices.Contains(out, c) {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

func (g *Gateway) handler(e *catalog.Entry, route string) catalog.Handler {
	sideEffects := e.Creates
	return func(ctx context.Context, req *catalog.Request) (any, error) {
		body, err := json.Marshal(callOf(req))
		if err != nil {
			return nil, fmt.Errorf("relay: encode %s: %w", e.ID, err)
		}
		// A call whose answer depends on the exit goes only to a box exiting in its country.
		fit := registry.Constraints{Country: e.ExitFor(req.Args)}
		frame, box, err := g.d.Do(ctx, route, fit, dispatch.Request{Body: body, NoSideEffects: !sideEffects})
		if err != nil {
			var de *dispatch.Error
			if errors.As(err, &de) {
				box = de.Box
			}
			return nil, namingBox(edgeError(e, fit, err), box)
		}
		meta, answer, err := decodeAnswer(frame)
		if err != nil {
			return nil, namingBox(&apierr.Error{Code: apierr.CodeUpstream, Upstream: "fleet",
				Message: "the box " + box + " answered " + e.Path + " unreadably; nothing was charged", Cause: err}, box)
		}
		if meta.Error != nil {
			return nil, namingBox(meta.Error.apiError(), box)
		}
		header := make(map[string]string, len(meta.Header)+1)
		for k, v := range meta.Header {
			header[k] = v
		}
		header[HeaderBox] = box
		return &catalog.Raw{Status: meta.Status, ContentType: meta.ContentType, Header: header, Body: answer}, nil
	}
}

// namingBox has an error answer name the box whose failure it reports (the last box tried,
// when a retry failed too), as a result names the box that served it; "" names none.
func namingBox(e *apierr.Error, box string) *apierr.Error {
	if box != "" {
		e.Header = map[string]string{HeaderBox: box}
	}
	return e
}

// edgeError maps the dispatcher's typed errors to the answer: no box 503, a box that failed
// or went away 502, the deadline 504. None is charged: the gate settles only a result.
func edgeError(e *catalog.Entry, fit registry.Constraints, err error) *apierr.Error {
	switch {
	case errors.Is(err, dispatch.ErrNoBox) && fit.Country != "":
		return &apierr.Error{Code: apierr.CodeUnavailable, Cause: err,
			Message: e.Path + " is not available right now: no box of the fleet whose exit is in " + fit.Country + " serves it; nothing was charged"}
	case errors.Is(err, dispatch.ErrNoBox):
		return &apierr.Error{Code: apierr.CodeUnavailable, Message: e.Path + " is not available right now: " + errNoBox.Error(), Cause: err}
	case errors.Is(err, dispatch.ErrBoxFailed):
		return &apierr.Error{Code: apierr.CodeUpstream, Upstream: "fleet",
			Message: "the box serving " + e.Path + " failed; nothing was charged", Cause: err}
	case errors.Is(err, dispatch.ErrTimeout):
		return &apierr.Error{Code: apierr.CodeTimeout, Upstream: "fleet",
			Message: e.Path + " did not finish within its deadline; nothing was charged", Cause: err}
	}
	// The gateway's own link to the hub refused the call.
	return &apierr.Error{Code: apierr.CodeUnavailable, Message: e.Path + " is not available right now: the fleet cannot be reached", Cause: err}
}
