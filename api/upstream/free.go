package upstream

import "context"

type freeKey struct{}

// WithFree marks ctx as a call served free (a free route, a paid route's free first call):
// it takes only the share of an upstream's rate limit kept for free calls (httpc.Bucket), so
// free calls from many clients cannot starve the paid ones.
func WithFree(ctx context.Context) context.Context { return context.WithValue(ctx, freeKey{}, true) }

// IsFree reports whether ctx belongs to a call served free.
func IsFree(ctx context.Context) bool { v, _ := ctx.Value(freeKey{}).(bool); return v }
