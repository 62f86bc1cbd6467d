package web

import (
	"context"
	"errors"
	"testing"

	"github.com/peage/appliance/api/apierr"
)

// unblock's country is the exit's, read from the exit check: never assumed.
func TestExitCountry(t *testing.T) {
	for _, c := range []struct {
		name   string
		exit   func(context.Context) (string, error)
		want   string // "" for null
		status int
	}{
		{"no exit check", nil, "", 0},
		{"exit in France", func(context.Context) (string, error) { return "FR", nil }, "fr", 0},
		{"exit unreadable", func(context.Context) (string, error) { return "", errors.New("proxyd down") }, "", 0},
		{"exit elsewhere", func(context.Context) (string, error) { return "DE", nil }, "", 503},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &Routes{ExitCountry: c.exit}
			got, err := r.exitCountry(context.Background(), "fr")
			if s := apierr.From(err).Status(); err != nil && s != c.status || err == nil && c.status != 0 {
				t.Fatalf("err = %v, want status %d", err, c.status)
			}
			if (got == nil) != (c.want == "") || got != nil && *got != c.want {
				t.Errorf("country = %v, want %q", got, c.want)
			}
		})
	}
}
