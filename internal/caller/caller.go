// Package caller carries who is calling, from the edge to the work, in the call's context:
// the client (api/clientid's identity) and, once its payment is verified, the payer. Work
// that shares something scarce between calls (the browser farm's browsers) shares it by
// caller, without depending on the server or the gate that learnt who it is.
package caller

import (
	"context"
	"strings"
)

// ID is who makes a call. Either part may be empty: a free call has no payer, and work
// started by the appliance itself has neither.
type ID struct {
	// Client is the client's identity for per-client limits: an IPv4 address, or an IPv6
	// prefix ("2001:db8:1:2::/64").
	Client string
	// Payer is the payer's address once a payment is verified, lower-case so that one
	// address is one payer however it was written.
	Payer string
}

type key struct{}

// With returns ctx carrying id.
func With(ctx context.Context, id ID) context.Context {
	id.Payer = strings.ToLower(id.Payer)
	return context.WithValue(ctx, key{}, id)
}

// From returns the caller ctx carries; the zero ID when none.
func From(ctx context.Context) ID {
	id, _ := ctx.Value(key{}).(ID)
	return id
}
