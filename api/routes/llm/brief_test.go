package llm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	llmroutes "github.com/peage/appliance/api/routes/llm"
	"github.com/peage/appliance/api/upstream/llm/llmtest"
)

func TestBriefNeedsNewsSearch(t *testing.T) {
	w := newWorld(t, true, nil, nil)
	if a := w.post(t, "/v1/brief", map[string]any{"topic": "stablecoin regulation"}); a.status != 503 || !strings.Contains(string(a.body), "news search") {
		t.Errorf("%d %s", a.status, a.body)
	}
}

// TestBriefVerifiesQuotes binds a stand-in for /v1/search/news (its family is not part of
// this package): it answers the route's documented fields for two headlines, so that what
// is tested is the brief's use of them.
func TestBriefVerifiesQuotes(t *testing.T) {
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.Bind("search.news", func(_ context.Context, req *catalog.Request) (any, error) {
		return map[string]any{"news": []any{
			map[string]any{"title": "EU adopts MiCA stablecoin rules", "link": "https://news.example/1", "date": "2 days ago", "source": "Example News", "snippet": "Issuers must hold reserves in EU banks."},
			map[string]any{"title": "Exchanges delist non-compliant tokens", "link": "https://news.example/2", "date": "1 day ago", "source": "Example Wire", "snippet": "Several tokens were removed for EU users."},
		}}, nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t, llmtest.Config())
	if err := llmroutes.New(llmroutes.Deps{Model: srv.Client(t, llmtest.Config())}).Bind(cat); err != nil {
		t.Fatal(err)
	}
	gate := &apitest.RecordingGate{}
	w := &world{h: apitest.Start(t, cat, apitest.Options{Gate: gate}), gate: gate, srv: srv}
	srv.Push(
		llmtest.JSON(t, map[string]any{"summary": "MiCA applies to stablecoins.", "open_questions": []string{"How will US issuers respond?"},
			"key_points": []any{map[string]any{"text": "Reserves must sit in EU banks.", "sources": []int{1}, "extrait": "hold reserves in EU banks"}}}),
		llmtest.JSON(t, map[string]any{"summary": "x", "open_questions": []string{},
			"key_points": []any{map[string]any{"text": "Tether was banned.", "sources": []int{2}, "extrait": "Tether was banned"}}}),
	)
	a := w.post(t, "/v1/brief", map[string]any{"topic": "stablecoin regulation"})
	m := a.json(t)
	if a.status != 200 || len(m["headlines"].([]any)) != 2 || m["key_points"].([]any)[0].(map[string]any)["sources"].([]any)[0] != 1.0 ||
		m["open_questions"].([]any)[0] != "How will US issuers respond?" {
		t.Fatalf("%d %s", a.status, a.body)
	}
	if b := w.post(t, "/v1/brief", map[string]any{"topic": "stablecoin regulation"}); b.status != 502 || !strings.Contains(string(b.body), "verification failed") {
		t.Errorf("invented quote: %d %s", b.status, b.body)
	}
	if c, wv := gate.Counts(); c != 1 || wv != 1 {
		t.Errorf("charged %d waived %d", c, wv)
	}
}

// TestAgentSearchesNews runs the news branch of the agent: search (the stand-in route),
// read the top story, answer with evidence from it.
func TestAgentSearchesNews(t *testing.T) {
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.Bind("search.news", func(_ context.Context, req *catalog.Request) (any, error) {
		return map[string]any{"news": []any{map[string]any{"title": "Kettle prices", "link": "https://shop.example/item", "date": "today", "source": "Shop", "snippet": "A kettle."}}}, nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t, llmtest.Config())
	if err := llmroutes.New(llmroutes.Deps{Model: srv.Client(t, llmtest.Config()), Pages: shop}).Bind(cat); err != nil {
		t.Fatal(err)
	}
	gate := &apitest.RecordingGate{}
	w := &world{h: apitest.Start(t, cat, apitest.Options{Gate: gate}), gate: gate, srv: srv}
	srv.Push(llmtest.JSON(t, map[string]any{"answerable": true, "answer": "29,90 €", "evidence": []string{"Price: **29,90 €**"}}))
	a := w.post(t, "/v1/agent/task", map[string]any{"objective": "what do kettles cost these days?"})
	m := a.json(t)
	if a.status != 200 || m["actual_cost_usd"] != "0.014" {
		t.Fatalf("%d %s", a.status, a.body)
	}
	steps := m["steps"].([]any)
	if len(steps) != 3 || steps[0].(map[string]any)["action"] != "search_news" || steps[1].(map[string]any)["input"].(map[string]any)["url"] != "https://shop.example/item" {
		t.Errorf("steps %v", steps)
	}
	if q := w.post(t, "/v1/agent/quote", map[string]any{"objective": "what do kettles cost these days?"}).json(t); q["feasible"] != true || q["plan_cost_usd"] != "0.014" {
		t.Errorf("quote %v", q)
	}
}
