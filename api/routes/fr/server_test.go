package fr

import (
	"encoding/json"
	"io"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

// mapCache is a deterministic server.Cache for tests (ristretto may drop a Set).
type mapCache struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (c *mapCache) Get(k string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *mapCache) Set(k string, v []byte, _ time.Duration) {
	c.mu.Lock()
	c.m[k] = v
	c.mu.Unlock()
}

func get(t *testing.T, h *apitest.Harness, path string, q url.Values) (int, map[string]any) {
	t.Helper()
	resp, err := h.Client.Get(h.BaseURL + path + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
	}
	return resp.StatusCode, doc
}

// TestThroughTheServer drives the real server: a success is charged, an upstream failure
// is a 502 naming the upstream and charged nothing, a bad parameter is a 400 that never
// reaches the gate, and a repeated call is served from the cache.
func TestThroughTheServer(t *testing.T) {
	e := setup(t, 0)
	gate := &apitest.RecordingGate{}
	h := apitest.Start(t, e.cat, apitest.Options{CheckShapes: true, Gate: gate, Cache: &mapCache{m: map[string][]byte{}}})

	e.serve("ban", upstreamtest.Want(t, "/geocodage/search", upstreamtest.Query("q", "21 rue des ardennes, Paris", "limit", "5"), e.file("ban", "search_paris_ardennes.json")))
	for range 2 {
		status, doc := get(t, h, "/v1/fr/geocode", url.Values{"q": {"21 rue des ardennes, Paris"}})
		if status != 200 || typeAt(doc, "results.0.lat") != "number" {
			t.Fatalf("geocode = %d %v", status, doc)
		}
	}
	if n := len(e.servers["ban"].Requests()); n != 1 {
		t.Errorf("BAN called %d times for two identical calls, want 1 (cache)", n)
	}

	e.serve("geo-api", upstreamtest.ServerError())
	status, doc := get(t, h, "/v1/fr/insee-commune", url.Values{"insee": {"44109"}})
	if status != 502 || typeAt(doc, "error.upstream") != "string" || doc["error"].(map[string]any)["upstream"] != "geo-api" {
		t.Errorf("upstream 500 = %d %v, want 502 naming geo-api", status, doc)
	}

	e.serve("vies", upstreamtest.Hang())
	before := len(gate.Charged) + len(gate.Waived)
	status, doc = get(t, h, "/v1/fr/vat-eu", url.Values{"vat": {"GR094014201"}})
	if status != 400 || doc["error"].(map[string]any)["param"] != "vat" {
		t.Errorf("bad vat = %d %v, want 400 on vat", status, doc)
	}
	if after := len(gate.Charged) + len(gate.Waived); after != before {
		t.Errorf("a bad parameter reached the gate")
	}
	if n := len(e.servers["vies"].Requests()); n != 0 {
		t.Errorf("a bad parameter reached VIES")
	}

	status, _ = get(t, h, "/v1/fr/jours-feries", url.Values{"annee": {"2026"}})
	if status != 200 {
		t.Errorf("jours-feries = %d", status)
	}
	charged, waived := gate.Counts()
	// A cached answer is still a paid answer: geocode twice, jours-feries once.
	if charged != 3 || waived != 1 {
		t.Errorf("charged %d, waived %d; want 3 charged and 1 waived (the 502)", charged, waived)
	}
}
