package operator

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestHandlerServes checks what the operator listener answers for each path of the dashboard,
// and that Fetch reads the snapshot back as served.
func TestHandlerServes(t *testing.T) {
	at := time.Date(2026, 11, 22, 18, 30, 0, 0, time.UTC)
	mux := http.NewServeMux()
	Register(mux, func(context.Context) Snapshot { return Snapshot{GeneratedAt: at, Version: "1.2.3"} })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	cases := []struct {
		path, wantType, wantBody string
		code                     int
		csp                      bool
	}{
		{"/", "text/html; charset=utf-8", `<script src="assets/dashboard.js" defer>`, 200, true},
		{"/assets/dashboard.js", "text/javascript; charset=utf-8", `fetch("status.json"`, 200, true},
		{"/assets/dashboard.css", "text/css; charset=utf-8", "--bar:", 200, true},
		{"/status.json", "application/json", `"generated_at": "2026-11-22T18:30:00Z"`, 200, false},
		{"/assets/missing.js", "text/plain; charset=utf-8", "404 page not found", 404, true},
		{"/other", "text/plain; charset=utf-8", "404 page not found", 404, false},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			resp, err := http.Get(srv.URL + c.path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != c.code || resp.Header.Get("Content-Type") != c.wantType || !strings.Contains(string(b), c.wantBody) {
				t.Fatalf("%d %q %.200s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
			}
			if got := resp.Header.Get("Content-Security-Policy") == pageCSP; got != c.csp {
				t.Fatalf("CSP %q", resp.Header.Get("Content-Security-Policy"))
			}
		})
	}
	s, err := Fetch(context.Background(), http.DefaultClient, srv.URL+"/")
	if err != nil || !s.GeneratedAt.Equal(at) || s.Version != "1.2.3" {
		t.Fatalf("Fetch: %+v %v", s, err)
	}
	if _, err := Fetch(context.Background(), http.DefaultClient, srv.URL+"/assets"); err == nil {
		t.Fatal("Fetch of a listener that is not the operator's succeeded")
	}
}
