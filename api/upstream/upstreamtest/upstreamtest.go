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
	t        testing.TB
	mu       sync.Mutex
	handler  http.Handler
	expected []expectation
	requests []*http.Request
}

// expectation is one request the server knows the answer to.
type expectation struct {
	path  string
	query url.Values
	h     http.Handler
}

// New starts a server answering 404 until Handle or Expect is called; it stops with the test.
func New(t testing.TB) *Server {
	s := &Server{t: t, handler: http.NotFoundHandler()}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.Clone(r.Context()))
	h, expected := s.handler, s.expected
	s.mu.Unlock()
	if len(expected) == 0 {
		h.ServeHTTP(w, r)
		return
	}
	for _, e := range expected {
		if e.path == r.URL.Path && equalQuery(e.query, r.URL.Query()) {
			e.h.ServeHTTP(w, r)
			return
		}
	}
	// The code under test sent a request no recording answers: the real upstream would have
	// answered something else, so the test fails rather than replay a wrong answer.
	s.t.Errorf("upstreamtest: unexpected request %s %s?%s; expected one of:\n%s", r.Method, r.URL.Path, r.URL.RawQuery, describe(expected))
	http.Error(w, "upstreamtest: unexpected request", http.StatusTeapot)
}

// Handle answers every request with h, without checking it: for the tests of failure modes
// (hang, 500, 429), where what was asked does not matter. Recorded answers go through Expect.
func (s *Server) Handle(h http.Handler) {
	s.mu.Lock()
	s.handler = h
	s.expected = nil
	s.mu.Unlock()
}

// Expect answers h to a request for exactly path (the full path, base path included) with
// exactly the parameters of query (every one, with its values in order; nil means none).
// Once one request is expected, any other request fails the test.
func (s *Server) Expect(path string, query url.Values, h http.Handler) {
	s.mu.Lock()
	s.expected = append(s.expected, expectation{path: path, query: query, h: h})
	s.mu.Unlock()
}

// Reset forgets every expectation and recorded request.
func (s *Server) Reset() {
	s.mu.Lock()
	s.expected, s.requests, s.handler = nil, nil, http.NotFoundHandler()
	s.mu.Unlock()
}

// Query builds url.Values from name, value pairs: Query("q", "credit agricole", "page", "1").
func Query(pairs ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		v.Add(pairs[i], pairs[i+1])
	}
	return v
}

func equalQuery(want, got url.Values) bool {
	if len(want) != len(got) {
		return false
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if w[i] != g[i] {
				return false
			}
		}
	}
	return true
}

func describe(es []expectation) string {
	var b strings.Builder
	for _, e := range es {
		b.WriteString("  " + e.path)
		if len(e.query) > 0 {
			b.WriteString("?" + e.query.Encode())
		}
		b.WriteString("\n")
	}
	return b.String()
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
	_, rest, _ := strings.Cut(spec.BaseURL, "://")
	host, path, _ := strings.Cut(rest, "/")
	if strings.Contains(host, "{") {
		// A host per call ("{lang}.wikipedia.org"): the fixture sees the filled-in host as
		// the first path segment, so the test checks it too.
		spec.BaseURL = s.URL + "/" + host + "/" + path
	} else {
		u, err := url.Parse(spec.BaseURL) // empty for an upstream with no public default
		if err != nil {
			t.Fatal(err)
		}
		spec.BaseURL = s.URL + u.Path
	}
	spec.NeedsBaseURL = false
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

// Want answers h to requests for exactly path and query (as Expect does), and fails the test
// on any other: for servers shared by several tests, whose behaviour is set with Handle.
func Want(t testing.TB, path string, query url.Values, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path || !equalQuery(query, r.URL.Query()) {
			t.Errorf("upstreamtest: unexpected request %s %s?%s; expected:\n%s", r.Method, r.URL.Path, r.URL.RawQuery, describe([]expectation{{path: path, query: query}}))
			http.Error(w, "upstreamtest: unexpected request", http.StatusTeapot)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Route is one request a shared server answers: exactly Path and Query.
type Route struct {
	Path  string
	Query url.Values
	H     http.Handler
}

// Match answers each request with the handler of the route it matches exactly, and fails the
// test on any other: Want for several requests.
func Match(t testing.TB, routes ...Route) http.Handler {
	es := make([]expectation, len(routes))
	for i, r := range routes {
		es[i] = expectation{path: r.Path, query: r.Query, h: r.H}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, e := range es {
			if e.path == r.URL.Path && equalQuery(e.query, r.URL.Query()) {
				e.h.ServeHTTP(w, r)
				return
			}
		}
		t.Errorf("upstreamtest: unexpected request %s %s?%s; expected one of:\n%s", r.Method, r.URL.Path, r.URL.RawQuery, describe(es))
		http.Error(w, "upstreamtest: unexpected request", http.StatusTeapot)
	})
}
