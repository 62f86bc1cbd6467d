package upstreamtest

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
)

// recorder keeps the failures the server reports instead of failing the real test.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func TestExpectChecksPathAndEveryParameter(t *testing.T) {
	cases := []struct {
		name   string
		target string
		ok     bool
	}{
		{"exact", "/search?q=credit+agricole&page=1", true},
		{"order of parameters does not matter", "/search?page=1&q=credit%20agricole", true},
		{"spaces stripped", "/search?q=creditagricole&page=1", false},
		{"missing parameter", "/search?q=credit+agricole", false},
		{"extra parameter", "/search?q=credit+agricole&page=1&per_page=25", false},
		{"repeated parameter", "/search?q=credit+agricole&page=1&page=1", false},
		{"other path", "/searches?q=credit+agricole&page=1", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := &recorder{TB: t}
			s := New(rec)
			s.Expect("/search", Query("q", "credit agricole", "page", "1"), JSON(200, `{}`))
			resp, err := http.Get(s.URL + c.target)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got := len(rec.errors) == 0 && resp.StatusCode == 200; got != c.ok {
				t.Errorf("accepted = %v, want %v (status %d, failures %q)", got, c.ok, resp.StatusCode, rec.errors)
			}
		})
	}
}

func TestHandleAnswersAnything(t *testing.T) {
	rec := &recorder{TB: t}
	s := New(rec)
	s.Handle(ServerError())
	resp, err := http.Get(s.URL + "/whatever?x=1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 500 || len(rec.errors) != 0 {
		t.Errorf("status %d, failures %q", resp.StatusCode, rec.errors)
	}
	if r := s.Last(); r == nil || r.URL.Query().Get("x") != "1" {
		t.Errorf("last = %v", r)
	}
}

func TestWantFailsOnAnotherRequest(t *testing.T) {
	rec := &recorder{TB: t}
	s := New(rec)
	s.Handle(Want(rec, "/search", Query("q", "la poste"), JSON(200, `{}`)))
	for target, ok := range map[string]bool{"/search?q=la+poste": true, "/search?q=laposte": false} {
		rec.errors = nil
		resp, err := http.Get(s.URL + target)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := len(rec.errors) == 0 && resp.StatusCode == 200; got != ok {
			t.Errorf("%s: accepted = %v", target, got)
		}
	}
}

// TestSpecKeepsTheBasePath: the fixture server sees the registry's real base path, and a host
// with a placeholder becomes the first path segment, so tests check the filled-in host too.
func TestSpecKeepsTheBasePath(t *testing.T) {
	s := New(t)
	for name, want := range map[string]string{
		"vpic":      s.URL + "/api",
		"osrm":      s.URL + "/routed-{profile}",
		"wikipedia": s.URL + "/{lang}.wikipedia.org/",
	} {
		if got := s.Spec(t, name).BaseURL; got != want {
			t.Errorf("%s: base %q, want %q", name, got, want)
		}
	}
}
