package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/internal/caller"
	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/fleet/box"
)

// BoxRoutes is BoxOffer's routes for a box that does not know where its traffic exits: the
// routes whose answer depends on the exit are left out.
func BoxRoutes(cat *catalog.Catalog) map[string]box.Handler {
	return BoxOffer(cat, fleet.Exit{}).Routes
}

// Offer is what a box serves the fleet, by fleet route name, and what it withholds.
type Offer struct {
	Routes map[string]box.Handler
	// Withheld are the routes the box has the means for but does not serve: their answers
	// depend on the exit, and the box's is not known or not in their country.
	Withheld []string
}

// BoxOffer returns a box handler for every relayable entry of cat whose family is bound and
// ready now (what this box can serve, and so announces), except the exit-dependent ones that
// exit does not fit: a route of a fixed country only when the exit is there, a route whose
// caller names the country only when the exit's country is known.
func BoxOffer(cat *catalog.Catalog, exit fleet.Exit) Offer {
	out := Offer{Routes: map[string]box.Handler{}}
	for _, e := range cat.Entries() {
		if !Relayable(e) || !e.Available() {
			continue
		}
		if !exitFits(e, exit) {
			out.Withheld = append(out.Withheld, RouteName(e.ID))
			continue
		}
		out.Routes[RouteName(e.ID)] = serve(e, exit)
	}
	slices.Sort(out.Withheld)
	return out
}

func exitFits(e *catalog.Entry, exit fleet.Exit) bool {
	switch {
	case e.ExitCountry != "":
		return strings.EqualFold(e.ExitCountry, exit.Country)
	case e.ExitParam != "":
		return exit.Country != ""
	}
	return true
}

// serve runs one relayed call of e: the args validated again against the box's own catalog,
// then the family's handler under the call's deadline. A route's own failure travels back as
// an error answer with its code; a box that cannot serve the call now (not ready, a garbled
// call) fails it, so the gateway may try another box.
func serve(e *catalog.Entry, exit fleet.Exit) box.Handler {
	return func(ctx context.Context, data []byte) (frame []byte, err error) {
		c, raw, err := decodeCall(data)
		if err != nil {
			return nil, err
		}
		if c.Route != e.ID {
			return nil, fmt.Errorf("relay: a call of %s on the route of %s", c.Route, e.ID)
		}
		if e.Ready != nil {
			if err := e.Ready(); err != nil {
				return nil, fmt.Errorf("relay: %s not ready on this box: %w", e.ID, err)
			}
		}
		args, err := e.Decode(raw)
		if err != nil {
			return errorFrame(err)
		}
		if need := e.ExitFor(args); need != "" && !strings.EqualFold(need, exit.Country) {
			// The gateway picks by exit; a call that reaches another box is failed unrun, so it
			// may go to one that fits.
			return nil, fmt.Errorf("relay: %s needs an exit in %s, this box's is in %q", e.ID, need, exit.Country)
		}
		req := &catalog.Request{Route: e, Args: args, Method: c.Method, Path: c.Path, PathID: c.PathID,
			Query: c.Query, Header: c.Header, Body: c.Body, ClientIP: c.ClientIP, Free: c.Free,
			Payer: c.Payer, BaseURL: c.BaseURL}
		if req.Free {
			ctx = upstream.WithFree(ctx)
		}
		ctx = caller.With(ctx, caller.ID{Client: c.ClientIP, Payer: c.Payer})
		defer func() {
			if v := recover(); v != nil {
				frame, err = errorFrame(&apierr.Error{Code: apierr.CodeInternal, Message: "internal error; nothing was charged",
					Cause: fmt.Errorf("panic: %v", v)})
			}
		}()
		out, err := e.Handler(ctx, req)
		if err == nil && ctx.Err() != nil {
			err = ctx.Err()
		}
		if err != nil {
			return errorFrame(err)
		}
		return answerOf(e, out)
	}
}

// answerOf encodes a handler's result as the server does: a *catalog.Raw as it is, anything
// else as JSON.
func answerOf(e *catalog.Entry, out any) ([]byte, error) {
	if raw, ok := out.(*catalog.Raw); ok {
		status, ct := raw.Status, raw.ContentType
		if status == 0 {
			status = http.StatusOK
		}
		if ct == "" {
			ct = e.MediaType()
		}
		return encodeAnswer(answerMeta{Status: status, ContentType: ct, Header: raw.Header}, raw.Body)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("relay: encode result of %s", e.ID), err)
	}
	return encodeAnswer(answerMeta{Status: http.StatusOK, ContentType: "application/json"}, b)
}
