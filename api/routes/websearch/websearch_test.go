package websearch_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/routes/websearch"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/search"
	"github.com/peage/appliance/api/upstream/upstreamtest"
	"github.com/peage/appliance/internal/obs"
)

var quiet = obs.Discard()

func fixture(name string) string {
	return filepath.Join("..", "..", "upstream", "search", "testdata", name)
}

// start serves the family with Serper pointed at srv (nil: nothing configured).
func start(t *testing.T, srv *upstreamtest.Server, gate paywall.Gate) *apitest.Harness {
	t.Helper()
	specs := map[string]upstream.Spec{}
	if srv != nil {
		specs[search.SerperName] = srv.Spec(t, search.SerperName)
	}
	return startSpecs(t, specs, gate)
}

// startSpecs serves the family with the providers of specs configured.
func startSpecs(t *testing.T, specs map[string]upstream.Spec, gate paywall.Gate) *apitest.Harness {
	t.Helper()
	chain, err := search.FromPool(httpc.NewPool(specs, httpc.Options{Contact: "test@example.org", Logger: quiet}), specs)
	if err != nil {
		t.Fatal(err)
	}
	return apitest.StartFamily(t, catalog.DefaultNames(), websearch.With(chain), apitest.Options{Gate: gate})
}

func get(t *testing.T, h *apitest.Harness, path string) (int, map[string]any) {
	t.Helper()
	resp, err := h.Client.Get(h.BaseURL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	b, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(b, &m)
	return resp.StatusCode, m
}

// serperBody checks the JSON body Serper receives: the query, gl, hl and 10 results.
func serperBody(t *testing.T, want map[string]any, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var got map[string]any
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Errorf("body: %v", err)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("serper body %s = %v, want %v", k, got[k], v)
			}
		}
		if r.Method != http.MethodPost || r.Header.Get("X-API-KEY") != "test-key" {
			t.Errorf("serper request %s with key %q", r.Method, r.Header.Get("X-API-KEY"))
		}
		h.ServeHTTP(w, r)
	})
}

func TestSearchSerper(t *testing.T) {
	srv := upstreamtest.New(t)
	srv.Expect("/search", nil, serperBody(t, map[string]any{"q": "Apple Inc.", "gl": "us", "hl": "en", "num": 10.0},
		upstreamtest.File(t, fixture("serper_search_apple_inc.json"))))
	gate := &apitest.RecordingGate{}
	h := start(t, srv, gate)
	status, m := get(t, h, "/v1/search?"+url.Values{"q": {"Apple Inc."}, "gl": {"us"}, "hl": {"en"}}.Encode())
	if status != 200 {
		t.Fatalf("status %d: %v", status, m)
	}
	results := m["results"].([]any)
	if len(results) != 6 || m["provider"] != "serper" || m["gl"] != "us" || m["hl"] != "en" {
		t.Fatalf("answer %v", m)
	}
	first := results[0].(map[string]any)
	if first["title"] != "Apple" || first["url"] != "https://www.apple.com/" || first["position"] != 1.0 || first["snippet"] == "" {
		t.Errorf("first result %v", first)
	}
	if last := results[5].(map[string]any); last["url"] != "https://finance.yahoo.com/quote/AAPL" || last["position"] != 6.0 {
		t.Errorf("last result %v", last)
	}
	// The recording's organic results carry no date: none is invented.
	if _, ok := first["date"]; ok {
		t.Errorf("date %v on a result without one", first["date"])
	}
	kg := m["knowledge_graph"].(map[string]any)
	if kg["title"] != "Apple" || kg["type"] != "Technology company" || kg["source"] != "Wikipedia" ||
		kg["attributes"].(map[string]any)["CEO"] != "Tim Cook (Aug 24, 2011–)" || len(kg["attributes"].(map[string]any)) != 6 {
		t.Errorf("knowledge graph %v", kg)
	}
	if m["answer_box"] != nil {
		t.Errorf("the recorded answer has no answer box: %v", m["answer_box"])
	}
	if rel := m["related_searches"].([]any); len(rel) != 10 || rel[0] != "Who invented the iPhone" || rel[9] != "Apple App Store" {
		t.Errorf("related %v", rel)
	}
	if c, w := gate.Counts(); c != 1 || w != 0 {
		t.Errorf("charged %d waived %d", c, w)
	}
}

// TestSearchNewsSerper serves Serper's recorded POST /news answer (testdata/PROVENANCE).
func TestSearchNewsSerper(t *testing.T) {
	srv := upstreamtest.New(t)
	srv.Expect("/news", nil, serperBody(t, map[string]any{"q": "Tesla Inc.", "gl": "us", "hl": "en", "num": 10.0},
		upstreamtest.File(t, fixture("serper_news_tesla_inc.json"))))
	gate := &apitest.RecordingGate{}
	h := start(t, srv, gate)
	status, m := get(t, h, "/v1/search/news?"+url.Values{"q": {"Tesla Inc."}, "gl": {"us"}, "hl": {"en"}}.Encode())
	if status != 200 {
		t.Fatalf("status %d: %v", status, m)
	}
	news := m["news"].([]any)
	if len(news) != 9 || m["provider"] != "serper" || m["q"] != "Tesla Inc." {
		t.Fatalf("answer %v", m)
	}
	want := map[string]any{
		"title":   "ISS recommends Tesla investors vote against re-election of Robyn Denholm",
		"link":    "https://www.reuters.com/business/autos-transportation/iss-recommends-tesla-investors-vote-against-re-election-robyn-denholm-2023-05-04/",
		"date":    "5 mins ago",
		"source":  "Reuters",
		"snippet": `Proxy advisory firm ISS on Wednesday recommended Tesla investors vote against re-election of board chair Robyn Denholm, citing "concerns on...`,
	}
	if got := news[0].(map[string]any); !reflect.DeepEqual(got, want) {
		t.Errorf("first item %v\nwant %v", got, want)
	}
	if last := news[8].(map[string]any); last["source"] != "Bloomberg.com" || last["date"] != "5 hours ago" {
		t.Errorf("last item %v", last)
	}
	if c, w := gate.Counts(); c != 1 || w != 0 {
		t.Errorf("charged %d waived %d", c, w)
	}
}

func TestSearchFailures(t *testing.T) {
	t.Run("unconfigured is 503 before 402", func(t *testing.T) {
		h := start(t, nil, nil)
		if status, m := get(t, h, "/v1/search?q=x402"); status != 503 {
			t.Errorf("status %d %v", status, m)
		}
		if status, _ := get(t, h, "/v1/search/news?q=x402"); status != 503 {
			t.Errorf("news status %d", status)
		}
	})
	t.Run("bad input is 400 before 402", func(t *testing.T) {
		srv := upstreamtest.New(t)
		h := start(t, srv, nil)
		for _, q := range []string{"q=", "q=x&gl=usa", "q=x&hl=EN1"} { // no parameter at all is the cold probe (402)
			status, m := get(t, h, "/v1/search?"+q)
			if status != 400 {
				t.Errorf("%s: status %d %v", q, status, m)
			}
		}
		if n := len(srv.Requests()); n != 0 {
			t.Errorf("%d upstream requests for bad input", n)
		}
	})
	t.Run("provider down is 502, not charged", func(t *testing.T) {
		srv := upstreamtest.New(t)
		srv.Handle(upstreamtest.ServerError())
		gate := &apitest.RecordingGate{}
		h := start(t, srv, gate)
		status, m := get(t, h, "/v1/search/news?q=stablecoin")
		if status != 502 {
			t.Fatalf("status %d %v", status, m)
		}
		if c, w := gate.Counts(); c != 0 || w != 1 {
			t.Errorf("charged %d waived %d", c, w)
		}
	})
	t.Run("the unpaid call is challenged by the production gate", func(t *testing.T) {
		srv := upstreamtest.New(t)
		h := start(t, srv, nil)
		if status, _ := get(t, h, "/v1/search?q=x402"); status != 402 {
			t.Errorf("status %d", status)
		}
	})
}

// TestSearchSearXNG serves a recorded SearXNG answer (api/upstream/search/testdata/PROVENANCE)
// through the route, SearXNG being the only provider configured.
func TestSearchSearXNG(t *testing.T) {
	srv := upstreamtest.New(t)
	srv.Expect("/search", upstreamtest.Query("q", "openclaw latest features", "format", "json", "categories", "general", "language", "en-US", "pageno", "1"),
		upstreamtest.File(t, fixture("searxng_openclaw_latest_features.json")))
	gate := &apitest.RecordingGate{}
	h := startSpecs(t, map[string]upstream.Spec{search.SearXNGName: srv.Spec(t, search.SearXNGName)}, gate)
	status, m := get(t, h, "/v1/search?"+url.Values{"q": {"openclaw latest features"}, "gl": {"us"}, "hl": {"en"}}.Encode())
	if status != 200 {
		t.Fatalf("status %d: %v", status, m)
	}
	if m["provider"] != "searxng" || apitest.At(m, "results", 0, "url") != "https://openclaw.ai/" ||
		apitest.At(m, "results", 0, "title") != "OpenClaw — Personal AI Assistant" || apitest.At(m, "results", 0, "position") != 1.0 {
		t.Errorf("answer %v", m)
	}
	if n := len(m["results"].([]any)); n != 1 {
		t.Errorf("%d results", n)
	}
	if rel, _ := m["related_searches"].([]any); len(rel) != 8 {
		t.Errorf("related %v", m["related_searches"])
	}
	if c, w := gate.Counts(); c != 1 || w != 0 {
		t.Errorf("charged %d waived %d", c, w)
	}
}

// TestSearchProviderChain configures both providers: Serper first, SearXNG after it. One
// provider down is answered by the other (provider says which); both down is a 502 naming the
// last one asked, not charged.
func TestSearchProviderChain(t *testing.T) {
	searxQuery := upstreamtest.Query("q", "openclaw latest features", "format", "json", "categories", "general", "language", "en-US", "pageno", "1")
	serperWant := map[string]any{"q": "openclaw latest features", "gl": "us", "hl": "en", "num": 10.0}
	target := "/v1/search?" + url.Values{"q": {"openclaw latest features"}, "gl": {"us"}, "hl": {"en"}}.Encode()
	for _, tc := range []struct {
		name          string
		serper, searx func(t *testing.T, srv *upstreamtest.Server)
		status        int
		provider      string
		charged       int
	}{
		{"serper answers, searxng is not asked",
			func(t *testing.T, s *upstreamtest.Server) {
				s.Expect("/search", nil, serperBody(t, map[string]any{"q": "openclaw latest features", "gl": "us", "hl": "en", "num": 10.0},
					upstreamtest.File(t, fixture("serper_search_apple_inc.json"))))
			},
			func(t *testing.T, s *upstreamtest.Server) {}, 200, "serper", 1},
		{"serper down (500), searxng answers",
			func(t *testing.T, s *upstreamtest.Server) {
				s.Expect("/search", nil, serperBody(t, serperWant, upstreamtest.ServerError()))
			},
			func(t *testing.T, s *upstreamtest.Server) {
				s.Expect("/search", searxQuery, upstreamtest.File(t, fixture("searxng_openclaw_latest_features.json")))
			}, 200, "searxng", 1},
		{"both down",
			func(t *testing.T, s *upstreamtest.Server) {
				s.Expect("/search", nil, serperBody(t, serperWant, upstreamtest.ServerError()))
			},
			func(t *testing.T, s *upstreamtest.Server) {
				s.Expect("/search", searxQuery, upstreamtest.ServerError())
			},
			502, "searxng", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			serper, searx := upstreamtest.New(t), upstreamtest.New(t)
			tc.serper(t, serper)
			tc.searx(t, searx)
			gate := &apitest.RecordingGate{}
			h := startSpecs(t, map[string]upstream.Spec{search.SerperName: serper.Spec(t, search.SerperName), search.SearXNGName: searx.Spec(t, search.SearXNGName)}, gate)
			status, m := get(t, h, target)
			if status != tc.status {
				t.Fatalf("status %d %v", status, m)
			}
			if status == 200 && m["provider"] != tc.provider {
				t.Errorf("provider %v, want %s", m["provider"], tc.provider)
			}
			if status != 200 {
				if msg, _ := apitest.At(m, "error", "message").(string); !strings.Contains(msg, tc.provider) {
					t.Errorf("error %v does not name %s", m["error"], tc.provider)
				}
			}
			if tc.provider == "serper" && len(searx.Requests()) != 0 {
				t.Errorf("searxng asked although serper answered")
			}
			if c, w := gate.Counts(); c != tc.charged || w != 1-tc.charged {
				t.Errorf("charged %d waived %d", c, w)
			}
		})
	}
}
