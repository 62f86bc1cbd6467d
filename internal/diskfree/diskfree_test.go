package diskfree

import (
	"context"
	"errors"
	"testing"
)

func TestAvailable(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		dir     string
		wantErr error // nil: any non-nil error is a failure, and the figure must be positive
	}{
		{"a directory", context.Background(), t.TempDir(), nil},
		{"missing directory", context.Background(), t.TempDir() + "/nope", errAny},
		{"cancelled", cancelled, t.TempDir(), context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := Available(tc.ctx, tc.dir)
			switch {
			case tc.wantErr == nil && (err != nil || n <= 0):
				t.Fatalf("Available = %d, %v; want a positive figure", n, err)
			case tc.wantErr == errAny && err == nil:
				t.Fatalf("Available = %d, nil; want an error", n)
			case tc.wantErr != nil && tc.wantErr != errAny && !errors.Is(err, tc.wantErr):
				t.Fatalf("Available: %v, want %v", err, tc.wantErr)
			}
		})
	}
}

var errAny = errors.New("any error")
