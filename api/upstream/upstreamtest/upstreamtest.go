// Package upstreamtest runs a local stand-in for an upstream: same paths, same wire format,
// answers read from the fixture files kept beside each connector. Only the base URL differs
// from production, so the code under test is the code that talks to the real upstream.
package upstreamtest

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
)

// Server is one fake upstream host.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	handler  http.Handler
	requests []*http.Request
}

// New starts a server answering 501 until Handle is called; it stops with the test.
func New(t testing.TB) *Server {
	s := &Server{handler: http.NotFoundHandler()}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.Clone(r.Context()))
		h := s.handler
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// Handle replaces the server's behaviour.
func (s *Server) Handle(h http.Handler) {
	s.mu.Lock()
	s.handler = h
	s.mu.Unlock()
}

// Requests returns what the server received, in order.
func (s *Server) Requests() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.requests...)
}

// Last returns the last request received, or nil.
func (s *Server) Last() *http.Request {
	r := s.Requests()
	if len(r) == 0 {
		return nil
	}
	return r[len(r)-1]
}

// Spec is the registry row of name pointed at this server, keeping the real base path so the
// fixture sees the real request paths. Retries are off and the timeout short, so failure
// tests are fast; nothing else changes.
func (s *Server) Spec(t testing.TB, name string) upstream.Spec {
	spec, ok := upstream.Lookup(name)
	if !ok {
		t.Fatalf("upstreamtest: no upstream %q in the registry", name)
	}
	u, err := url.Parse(spec.BaseURL)
	if err != nil {
		t.Fatal(err)
	}
	spec.BaseURL = s.URL + u.Path
	spec.Retries = 0
	spec.Timeout = 2 * time.Second
	spec.RPS = 0
	if spec.NeedsKey {
		spec.Key = "test-key"
	}
	return spec
}

// Client is an httpc client for name against this server.
func (s *Server) Client(t testing.TB, name string) *httpc.Client {
	c, err := httpc.New(s.Spec(t, name), httpc.Options{Contact: "test@example.org"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// File answers every request with the file's bytes; the content type follows the extension.
func File(t testing.TB, path string) http.Handler { return FileStatus(t, path, http.StatusOK) }

// FileStatus answers status with the file's bytes: a recorded error body. A name ending in
// .gz is served decompressed: large recordings are kept compressed in the repository.
func FileStatus(t testing.TB, path string, status int) http.Handler {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("upstreamtest: fixture: %v", err)
	}
	name := path
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("upstreamtest: fixture %s: %v", path, err)
		}
		if b, err = io.ReadAll(zr); err != nil {
			t.Fatalf("upstreamtest: fixture %s: %v", path, err)
		}
		name = strings.TrimSuffix(path, ".gz")
	}
	ct := "application/json; charset=utf-8"
	switch {
	case strings.HasSuffix(name, ".csv"):
		ct = "text/csv; charset=utf-8"
	case strings.HasSuffix(name, ".xml"):
		ct = "application/xml"
	}
	return Body(status, ct, b)
}

// Body answers status with body.
func Body(status int, contentType string, body []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = w.Write(body)
	})
}

// JSON answers status with a JSON text.
func JSON(status int, body string) http.Handler {
	return Body(status, "application/json; charset=utf-8", []byte(body))
}

// TooMany answers 429 the way rate-limited upstreams do, with Retry-After.
func TooMany() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "30")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"message":"Too Many Requests"}`))
	})
}

// ServerError answers 500 with an HTML page, as a failing gateway does.
func ServerError() http.Handler {
	return Body(500, "text/html", []byte("<html><body><h1>500 Internal Server Error</h1></body></html>"))
}

// Hang never answers: it holds the request until the client gives up.
func Hang() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
}

// Routes dispatches on the request path (without the query): the first matching prefix wins.
func Routes(pairs ...any) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(pairs); i += 2 {
			if strings.HasSuffix(r.URL.Path, pairs[i].(string)) || strings.Contains(r.URL.Path, pairs[i].(string)) {
				pairs[i+1].(http.Handler).ServeHTTP(w, r)
				return
			}
		}
		http.NotFound(w, r)
	})
}
