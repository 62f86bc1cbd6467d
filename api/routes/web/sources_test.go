package web_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/routes/web"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/search"
	"github.com/peage/appliance/api/upstream/upstreamtest"
	"github.com/peage/appliance/internal/obs"
)

// serperPointingAt serves the recorded Serper answer with its organic links replaced, in
// order, by links: the pages the test wants read (derived from serper_search_apple_inc.json).
func serperPointingAt(t *testing.T, links []string) http.Handler {
	b, err := os.ReadFile(filepath.Join("..", "..", "upstream", "search", "testdata", "serper_search_apple_inc.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	organic := m["organic"].([]any)
	for i, l := range links {
		organic[i].(map[string]any)["link"] = l
	}
	out, _ := json.Marshal(m)
	return upstreamtest.Body(200, "application/json", out)
}

func sourcesServer(t *testing.T, links []string) (*apitest.Harness, *apitest.RecordingGate) {
	t.Helper()
	return sourcesServerWithin(t, serperPointingAt(t, links), 0)
}

// sourcesServerWithin serves the route over a Serper answering serper, with the route's
// timeout set to timeout (0: the catalog's).
func sourcesServerWithin(t *testing.T, serper http.Handler, timeout time.Duration) (*apitest.Harness, *apitest.RecordingGate) {
	t.Helper()
	srv := upstreamtest.New(t)
	srv.Expect("/search", nil, serper)
	specs := map[string]upstream.Spec{search.SerperName: srv.Spec(t, search.SerperName)}
	chain, err := search.FromPool(httpc.NewPool(specs, httpc.Options{Logger: obs.Discard()}), specs)
	if err != nil {
		t.Fatal(err)
	}
	c, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	if timeout > 0 {
		c.ByPath("/v1/search/sources").Timeout = timeout
	}
	if err := web.With(env.Farm, env.Policy).WithSearch(chain).Bind(c); err != nil {
		t.Fatal(err)
	}
	gate := &apitest.RecordingGate{}
	return apitest.Start(t, c, apitest.Options{CheckShapes: true, Gate: gate}), gate
}

func postSources(t *testing.T, h *apitest.Harness, body string) (int, map[string]any) {
	t.Helper()
	resp, err := h.Client.Post(h.BaseURL+"/v1/search/sources", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s", b)
	}
	return resp.StatusCode, m
}

func TestSearchSources(t *testing.T) {
	links := []string{env.URL("/article"), env.URL("/data.json"), env.URL("/challenge"), "http://169.254.169.254/latest/meta-data/", env.URL("/short")}
	h, gate := sourcesServer(t, links)
	status, m := postSources(t, h, `{"q":"apple inc","top":5,"max_chars":200}`)
	if status != 200 {
		t.Fatalf("status %d %v", status, m)
	}
	results := m["results"].([]any)
	if len(results) != 5 || m["read"] != 2.0 || m["failed"] != 3.0 || m["provider"] != "serper" {
		t.Fatalf("answer %v", m)
	}
	want := []struct {
		ok     bool
		reason string
	}{{true, ""}, {false, "not_html"}, {false, "blocked"}, {false, "refused"}, {true, ""}}
	for i, w := range want {
		r := results[i].(map[string]any)
		if r["url"] != links[i] || r["ok"] != w.ok || (r["reason"] != nil && r["reason"] != w.reason) || (!w.ok && r["reason"] != w.reason) {
			t.Errorf("result %d: %v, want ok=%v reason=%q", i, r, w.ok, w.reason)
		}
		if w.ok && (r["markdown"] == "" || r["chars"].(float64) > 200) {
			t.Errorf("result %d: markdown %q (%v chars)", i, r["markdown"], r["chars"])
		}
	}
	if a := results[0].(map[string]any); a["truncated"] != true || a["chars"] != 200.0 || a["title"] != "Apple" {
		t.Errorf("article not cut at max_chars: %v", a)
	}
	if c, w := gate.Counts(); c != 1 || w != 0 {
		t.Errorf("charged %d waived %d", c, w)
	}
}

func TestSearchSourcesNoneReadable(t *testing.T) {
	h, gate := sourcesServer(t, []string{env.URL("/data.json"), "http://10.0.0.1/"})
	status, m := postSources(t, h, `{"q":"apple inc","top":2}`)
	if status != 502 {
		t.Fatalf("status %d %v", status, m)
	}
	if c, w := gate.Counts(); c != 0 || w != 1 {
		t.Errorf("charged %d waived %d", c, w)
	}
	if status, m := postSources(t, h, `{"q":"a","top":2}`); status != 400 {
		t.Errorf("q too short: %d %v", status, m)
	}
	if status, m := postSources(t, h, `{"q":"apple inc","top":11}`); status != 400 {
		t.Errorf("top 11: %d %v", status, m)
	}
}

// TestSearchSourcesOnePageTimesOut: the pages are read under one deadline (the call's, less
// the margin kept to answer); a page that never finishes loading is ok: false with reason
// timeout, the others are answered, and the call is charged for what it read.
func TestSearchSourcesOnePageTimesOut(t *testing.T) {
	links := []string{env.URL("/article"), env.URL("/hang"), env.URL("/short")}
	h, gate := sourcesServerWithin(t, serperPointingAt(t, links), 7*time.Second)
	status, m := postSources(t, h, `{"q":"apple inc","top":3}`)
	if status != 200 {
		t.Fatalf("status %d %v", status, m)
	}
	want := []struct {
		ok     bool
		reason string
	}{{true, ""}, {false, "timeout"}, {true, ""}}
	for i, w := range want {
		if apitest.At(m, "results", i, "ok") != w.ok || (!w.ok && apitest.At(m, "results", i, "reason") != w.reason) {
			t.Errorf("result %d: %v, want ok=%v reason=%q", i, apitest.At(m, "results", i), w.ok, w.reason)
		}
	}
	if m["read"] != 2.0 || m["failed"] != 1.0 {
		t.Errorf("read %v failed %v", m["read"], m["failed"])
	}
	if c, w := gate.Counts(); c != 1 || w != 0 {
		t.Errorf("charged %d waived %d", c, w)
	}
}

// TestSearchSourcesSearchDown: the search provider failing is a 502 naming it; no page is
// read and nothing is charged.
func TestSearchSourcesSearchDown(t *testing.T) {
	h, gate := sourcesServerWithin(t, upstreamtest.ServerError(), 0)
	status, m := postSources(t, h, `{"q":"apple inc","top":3}`)
	if status != 502 || !strings.Contains(apitest.At(m, "error", "message").(string), "serper") {
		t.Fatalf("status %d %v", status, m)
	}
	if c, w := gate.Counts(); c != 0 || w != 1 {
		t.Errorf("charged %d waived %d", c, w)
	}
}
