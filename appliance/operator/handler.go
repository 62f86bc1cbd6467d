package operator

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// The page, its script and its style are in the binary: the dashboard works on a box with
// no internet access and loads nothing from elsewhere.
//
//go:embed assets
var assets embed.FS

// Paths on the operator listener.
const (
	PathPage   = "/"
	PathStatus = "/status.json"
	PathAssets = "/assets/"
)

// pageCSP lets the page run its own script and fetch its own JSON, and nothing else.
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Register adds the dashboard page, its assets and the JSON snapshot to mux. snapshot is
// called once per request of the JSON (the page asks for it on load and every 15 s).
func Register(mux *http.ServeMux, snapshot func(ctx context.Context) Snapshot) {
	mux.HandleFunc("GET "+PathStatus, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(snapshot(r.Context()))
	})
	page, err := assets.ReadFile("assets/dashboard.html")
	if err != nil {
		panic(err) // embedded at build time
	}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		securityHeaders(w)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(page)
	})
	files := http.FileServerFS(assets)
	mux.Handle("GET "+PathAssets, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w)
		files.ServeHTTP(w, r)
	}))
}

func securityHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

// Fetch reads the snapshot of the box whose operator listener is at base (http://HOST:PORT).
func Fetch(ctx context.Context, hc *http.Client, base string) (Snapshot, error) {
	var s Snapshot
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(base, "/")+PathStatus, nil)
	if err != nil {
		return s, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return s, err
	}
	if resp.StatusCode != http.StatusOK {
		return s, fmt.Errorf("%w: %s answered %d", ErrNoSnapshot, req.URL, resp.StatusCode)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("%w: %s: %v", ErrNoSnapshot, req.URL, err)
	}
	if s.GeneratedAt.IsZero() {
		return s, fmt.Errorf("%w: %s is not a péage operator listener", ErrNoSnapshot, req.URL)
	}
	return s, nil
}

// age is a short duration for the terminal ("3m", "2h5m", "4d3h").
func age(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
}
