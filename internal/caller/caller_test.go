package caller_test

import (
	"context"
	"testing"

	"github.com/peage/appliance/internal/caller"
)

func TestWithFrom(t *testing.T) {
	cases := []struct {
		name string
		ctx  context.Context
		want caller.ID
	}{
		{"none", context.Background(), caller.ID{}},
		{"client_only", caller.With(context.Background(), caller.ID{Client: "192.0.2.7"}), caller.ID{Client: "192.0.2.7"}},
		{"payer_lower_cased", caller.With(context.Background(), caller.ID{Client: "2001:db8::/64", Payer: "0xAbCd"}), caller.ID{Client: "2001:db8::/64", Payer: "0xabcd"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := caller.From(c.ctx); got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}
