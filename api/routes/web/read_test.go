package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/routes/web"
)

func TestReadPage(t *testing.T) {
	r := web.With(env.Farm, env.Policy)
	ctx := context.Background()
	p, err := r.ReadPage(ctx, env.URL("/article"), false)
	if err != nil || p.Markdown == "" || p.Text == "" || p.FinalURL == "" {
		t.Fatalf("article: %+v %v", p, err)
	}
	for _, tc := range []struct{ path, want string }{
		{"/challenge", "anti-bot challenge"},
		{"/script-wall", "script wall"},
	} {
		_, err := r.ReadPage(ctx, env.URL(tc.path), false)
		ae := apierr.From(err)
		if err == nil || ae.Status() != 502 || !strings.Contains(ae.Message, tc.want) {
			t.Errorf("%s: %v, want a 502 naming %q", tc.path, err, tc.want)
		}
	}
}
