package x402

import "context"

type boxKey struct{}

// WithBox carries to Complete the name of the fleet box that served the paid call, which the
// ledger records with the payment ("" or absent: the appliance served it itself).
func WithBox(ctx context.Context, box string) context.Context {
	if box == "" {
		return ctx
	}
	return context.WithValue(ctx, boxKey{}, box)
}

// BoxOf is the box WithBox named, or "".
func BoxOf(ctx context.Context) string {
	box, _ := ctx.Value(boxKey{}).(string)
	return box
}
