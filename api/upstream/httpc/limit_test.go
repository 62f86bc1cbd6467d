package httpc

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/peage/appliance/api/upstream"
)

// TestFreeShare: calls served free take at most the free share (half the burst, at least
// one, refilled at half the rate); paid calls then still find the rest of the burst. The rate
// is so low (one token per 1,000 s) that nothing refills during the test, and every call's
// 10 s deadline is far shorter than a refill: a call is served only by a banked token.
func TestFreeShare(t *testing.T) {
	for _, tc := range []struct {
		name       string
		burst      int
		freeServed int // of 10 free calls in a row
		paidAfter  int // paid calls then served without waiting
	}{
		{"burst 1", 1, 1, 0},
		{"burst 2", 2, 1, 1},
		{"burst 5", 5, 2, 3},
		{"burst 10", 10, 5, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBucket(0.001, tc.burst)
			served := 0
			for range 10 {
				ctx, cancel := context.WithTimeout(upstream.WithFree(context.Background()), 10*time.Second)
				err := b.Wait(ctx)
				cancel()
				switch {
				case err == nil:
					served++
				case !errors.Is(err, ErrFreeShare):
					t.Fatalf("a free call: %v", err)
				}
			}
			if served != tc.freeServed {
				t.Fatalf("%d free calls served, want %d", served, tc.freeServed)
			}
			for i := range tc.paidAfter + 1 {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				err := b.Wait(ctx)
				cancel()
				if (i < tc.paidAfter) != (err == nil) {
					t.Fatalf("paid call %d: %v (want %d served)", i+1, err, tc.paidAfter)
				}
			}
		})
	}
}
