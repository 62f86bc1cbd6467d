package llm_test

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	llmroutes "github.com/peage/appliance/api/routes/llm"
	"github.com/peage/appliance/api/routes/websearch"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/llm/llmtest"
	"github.com/peage/appliance/api/upstream/search"
	"github.com/peage/appliance/api/upstream/upstreamtest"
	"github.com/peage/appliance/internal/obs"
)

func TestBriefNeedsNewsSearch(t *testing.T) {
	w := newWorld(t, true, nil, nil)
	if a := w.post(t, "/v1/brief", map[string]any{"topic": "stablecoin regulation"}); a.status != 503 || !strings.Contains(string(a.body), "news search") {
		t.Errorf("%d %s", a.status, a.body)
	}
}

// newsWorld serves the llm family beside the real /v1/search/news route (api/routes/websearch
// over the Serper connector) pointed at a fixture server that answers POST /news with
// Serper's recorded answer for "Tesla Inc." (api/upstream/search/testdata/PROVENANCE). The
// server checks each request: the query the route sends (wantQ), the search route's default
// country and language (fr) and 10 results; any other request fails the test.
func newsWorld(t *testing.T, pages llmroutes.Pages, wantQ ...string) (*world, *upstreamtest.Server) {
	t.Helper()
	serper := upstreamtest.New(t)
	recorded := upstreamtest.File(t, filepath.Join("..", "..", "upstream", "search", "testdata", "serper_news_tesla_inc.json"))
	asked := 0
	serper.Expect("/news", nil, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("serper body: %v", err)
		}
		want := map[string]any{"gl": "fr", "hl": "fr", "num": 10.0}
		if asked < len(wantQ) {
			want["q"] = wantQ[asked]
		}
		asked++
		for k, v := range want {
			if body[k] != v {
				t.Errorf("serper request %d: %s = %v, want %v (body %v)", asked, k, body[k], v, body)
			}
		}
		if r.Method != http.MethodPost || r.Header.Get("X-API-KEY") == "" {
			t.Errorf("serper request %s, key %q", r.Method, r.Header.Get("X-API-KEY"))
		}
		recorded.ServeHTTP(rw, r)
	}))
	specs := map[string]upstream.Spec{search.SerperName: serper.Spec(t, search.SerperName)}
	chain, err := search.FromPool(httpc.NewPool(specs, httpc.Options{Contact: "test@example.org", Logger: obs.Discard()}), specs)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	if err := websearch.With(chain).Bind(cat); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t, llmtest.Config())
	if err := llmroutes.With(llmroutes.Parts{Model: srv.Client(t, llmtest.Config()), Pages: pages}).Bind(cat); err != nil {
		t.Fatal(err)
	}
	gate := &apitest.RecordingGate{}
	return &world{h: apitest.Start(t, cat, apitest.Options{CheckShapes: true, Gate: gate}), gate: gate, srv: srv}, serper
}

// TestBriefVerifiesQuotes: /v1/brief searches news through the bound search route, numbers
// the recorded headlines, and gives a brief only when each key point's extrait is verbatim in
// a headline it cites.
func TestBriefVerifiesQuotes(t *testing.T) {
	w, serper := newsWorld(t, nil, "Tesla Inc.", "Tesla Inc.", "Tesla Inc.")
	w.srv.Push(
		// Quotes the snippet of headline 1 and the title of headline 5, whitespace aside.
		llmtest.JSON(t, map[string]any{"summary": "Tesla faces a governance vote and reopens Model 3 orders.", "open_questions": []string{"Will shareholders follow ISS?"},
			"key_points": []any{
				map[string]any{"text": "ISS advises against re-electing the chair.", "sources": []int{1}, "extrait": "recommended Tesla investors vote against re-election of board chair Robyn   Denholm"},
				map[string]any{"text": "Model 3 orders resume.", "sources": []int{4, 5}, "extrait": "Tesla resumes U.S. orders for a Model 3 version"},
			}}),
		// A quote that is in headline 1, cited as headline 2: fails.
		llmtest.JSON(t, map[string]any{"summary": "x", "open_questions": []string{},
			"key_points": []any{map[string]any{"text": "ISS.", "sources": []int{2}, "extrait": "Proxy advisory firm ISS"}}}),
		// A quote in no headline: fails.
		llmtest.JSON(t, map[string]any{"summary": "x", "open_questions": []string{},
			"key_points": []any{map[string]any{"text": "Tesla was fined.", "sources": []int{1}, "extrait": "Tesla was fined"}}}),
	)
	a := w.post(t, "/v1/brief", map[string]any{"topic": "Tesla Inc."})
	m := a.json(t)
	if a.status != 200 {
		t.Fatalf("%d %s", a.status, a.body)
	}
	if n := len(m["headlines"].([]any)); n != 9 {
		t.Errorf("%d headlines, want the recording's 9", n)
	}
	if apitest.At(m, "headlines", 0, "n") != 1.0 || apitest.At(m, "headlines", 0, "source") != "Reuters" || apitest.At(m, "headlines", 8, "n") != 9.0 ||
		apitest.At(m, "headlines", 8, "title") != "Tesla (TSLA) Resumes Orders for Model 3 Long Range After Backlog" {
		t.Errorf("headlines %v", m["headlines"])
	}
	if apitest.At(m, "key_points", 0, "extrait") != "recommended Tesla investors vote against re-election of board chair Robyn Denholm" ||
		apitest.At(m, "key_points", 1, "sources", 1) != 5.0 || apitest.At(m, "open_questions", 0) != "Will shareholders follow ISS?" ||
		apitest.At(m, "verification", "passe") != true || apitest.At(m, "verification", "checked") != 2.0 {
		t.Errorf("brief %s", a.body)
	}
	// The model was given the numbered recorded headlines.
	if user := w.srv.Bodies()[0]["messages"].([]any)[1].(map[string]any)["content"].(string); !strings.Contains(user, "[9] Tesla (TSLA) Resumes Orders") {
		t.Errorf("the model's headlines: %s", user)
	}
	for _, why := range []string{"none of the headlines it cites", "none of the headlines it cites"} {
		if b := w.post(t, "/v1/brief", map[string]any{"topic": "Tesla Inc."}); b.status != 502 || !strings.Contains(string(b.body), "verification failed") || !strings.Contains(string(b.body), why) {
			t.Errorf("unverified quote: %d %s", b.status, b.body)
		}
	}
	if c, wv := w.gate.Counts(); c != 1 || wv != 2 {
		t.Errorf("charged %d waived %d", c, wv)
	}
	if n := len(serper.Requests()); n != 3 {
		t.Errorf("%d news searches, want 3", n)
	}
}

// TestBriefNewsSearchDown: the news provider failing is a 502 naming it, and no model call.
func TestBriefNewsSearchDown(t *testing.T) {
	w, serper := newsWorld(t, nil)
	serper.Handle(upstreamtest.ServerError())
	a := w.post(t, "/v1/brief", map[string]any{"topic": "Tesla Inc."})
	if a.status != 502 || !strings.Contains(string(a.body), "serper") {
		t.Errorf("%d %s", a.status, a.body)
	}
	if n := len(w.srv.Bodies()); n != 0 {
		t.Errorf("%d model calls after the search failed", n)
	}
	if c, wv := w.gate.Counts(); c != 0 || wv != 1 {
		t.Errorf("charged %d waived %d", c, wv)
	}
}

// reuters stands in for the browser farm's reading of the recorded top story's link (the
// farm's extraction is tested in api/routes/web); its text is the recorded headline and
// snippet of that story, nothing more.
var reuters = pages{"https://www.reuters.com/business/autos-transportation/iss-recommends-tesla-investors-vote-against-re-election-robyn-denholm-2023-05-04/": {
	URL:      "https://www.reuters.com/business/autos-transportation/iss-recommends-tesla-investors-vote-against-re-election-robyn-denholm-2023-05-04/",
	FinalURL: "https://www.reuters.com/business/autos-transportation/iss-recommends-tesla-investors-vote-against-re-election-robyn-denholm-2023-05-04/",
	Title:    "ISS recommends Tesla investors vote against re-election of Robyn Denholm",
	Markdown: "# ISS recommends Tesla investors vote against re-election of Robyn Denholm\n\nProxy advisory firm ISS on Wednesday recommended Tesla investors vote against re-election of board chair Robyn Denholm, citing \"concerns on...",
}}

// TestAgentSearchesNews runs the agent's news branch over the bound search route: search the
// recorded news, read the top story, answer with evidence from it, each step at its route's
// price.
func TestAgentSearchesNews(t *testing.T) {
	objective := "What did the proxy adviser ISS recommend to Tesla investors?"
	w, serper := newsWorld(t, reuters, objective)
	w.srv.Push(llmtest.JSON(t, map[string]any{"answerable": true, "answer": "To vote against re-electing chair Robyn Denholm.",
		"evidence": []string{"recommended Tesla investors vote against re-election of board chair Robyn Denholm"}}))
	a := w.post(t, "/v1/agent/task", map[string]any{"objective": objective})
	m := a.json(t)
	if a.status != 200 || m["actual_cost"] != 0.014 || m["capability"] != "news_search" || m["answer"] != "To vote against re-electing chair Robyn Denholm." {
		t.Fatalf("%d %s", a.status, a.body)
	}
	want := []struct{ action, cost string }{{"search_news", "0.003"}, {"read_page", "0.005"}, {"answer_with_evidence", "0.006"}}
	steps := m["steps"].([]any)
	if len(steps) != len(want) {
		t.Fatalf("steps %v", steps)
	}
	for i, s := range want {
		if apitest.At(m, "steps", i, "action") != s.action || apitest.At(m, "steps", i, "statut") != "COMPLETED" || apitest.At(m, "steps", i, "cost_usd") != s.cost {
			t.Errorf("step %d: %v, want %s COMPLETED %s", i+1, steps[i], s.action, s.cost)
		}
	}
	if apitest.At(m, "steps", 1, "input", "url") != apitest.At(m, "sources", 0, "url") || !strings.HasPrefix(apitest.At(m, "sources", 0, "url").(string), "https://www.reuters.com/") {
		t.Errorf("read %v, sources %v", apitest.At(m, "steps", 1, "input"), m["sources"])
	}
	if q := w.post(t, "/v1/agent/quote", map[string]any{"objective": objective}).json(t); q["feasible"] != true || q["plan_cost_usd"] != "0.014" {
		t.Errorf("quote %v", q)
	}
	if n := len(serper.Requests()); n != 1 {
		t.Errorf("%d news searches, want 1 (a quote searches nothing)", n)
	}
	if c, wv := w.gate.Counts(); c != 1 || wv != 0 {
		t.Errorf("charged %d waived %d", c, wv)
	}
}

// TestAgentReadsPageAndNews: an objective with a page and a question on recent events reads
// the page, searches the news (the bound route over the recorded answer), reads the top story
// and answers from both, each quote attributed to the page it is in.
func TestAgentReadsPageAndNews(t *testing.T) {
	objective := "Does https://shop.example/item say the kettle is in stock, and what is the latest news on Tesla's board?"
	both := pages{}
	for k, v := range shop {
		both[k] = v
	}
	for k, v := range reuters {
		both[k] = v
	}
	w, serper := newsWorld(t, both, "Does say the kettle is in stock, and what is the latest news on Tesla's board?")
	w.srv.Push(
		llmtest.JSON(t, map[string]any{"answerable": true, "answer": "The kettle is in stock; ISS advises against re-electing Tesla's chair.",
			"evidence": []string{"In stock: yes.", "recommended Tesla investors vote against re-election of board chair Robyn Denholm"}}),
		llmtest.JSON(t, map[string]any{"answerable": true, "answer": "The kettle is in stock; Tesla's chair resigned.",
			"evidence": []string{"In stock: yes.", "Robyn Denholm resigned"}}),
	)
	a := w.post(t, "/v1/agent/task", map[string]any{"objective": objective})
	m := a.json(t)
	if a.status != 200 || m["actual_cost"] != 0.019 || m["capability"] != "page_question_with_news" || m["budget_usd"] != "0.05" {
		t.Fatalf("%d %s", a.status, a.body)
	}
	want := []struct{ action, cost string }{{"read_page", "0.005"}, {"search_news", "0.003"}, {"read_page", "0.005"}, {"answer_with_evidence", "0.006"}}
	if n := len(m["steps"].([]any)); n != len(want) {
		t.Fatalf("steps %v", m["steps"])
	}
	for i, s := range want {
		if apitest.At(m, "steps", i, "action") != s.action || apitest.At(m, "steps", i, "statut") != "COMPLETED" || apitest.At(m, "steps", i, "cost_usd") != s.cost {
			t.Errorf("step %d: %v, want %s COMPLETED %s", i+1, apitest.At(m, "steps", i), s.action, s.cost)
		}
	}
	if apitest.At(m, "sources", 0, "url") != "https://shop.example/item" || !strings.HasPrefix(apitest.At(m, "sources", 1, "url").(string), "https://www.reuters.com/") ||
		apitest.At(m, "evidence", 0, "source") != 1.0 || apitest.At(m, "evidence", 1, "source") != 2.0 || apitest.At(m, "verification", "checked") != 2.0 {
		t.Errorf("sources %v evidence %v", m["sources"], m["evidence"])
	}
	// The model read both pages, numbered.
	if user := w.srv.Bodies()[0]["messages"].([]any)[1].(map[string]any)["content"].(string); !strings.Contains(user, "Page [1] (https://shop.example/item)") ||
		!strings.Contains(user, "Page [2] (https://www.reuters.com/") || !strings.Contains(user, "Robyn Denholm") {
		t.Errorf("the model was given %s", user)
	}
	// A quote in neither page: explicit failure naming the steps, not charged.
	f := w.post(t, "/v1/agent/task", map[string]any{"objective": objective})
	if f.status != 502 || !strings.Contains(string(f.body), "not in any page as read") || !strings.Contains(string(f.body), "search_news: COMPLETED") {
		t.Errorf("unverified: %d %s", f.status, f.body)
	}
	// Over budget: the four-step plan stops before its first step and says what it costs.
	b := w.post(t, "/v1/agent/task", map[string]any{"objective": objective, "budget": 0.015})
	if b.status != 400 || !strings.Contains(string(b.body), "0.019 USD (4 steps)") || !strings.Contains(string(b.body), "0.015") {
		t.Errorf("over budget: %d %s", b.status, b.body)
	}
	if n := len(serper.Requests()); n != 2 {
		t.Errorf("%d news searches, want 2 (none over budget)", n)
	}
	if n := len(w.srv.Bodies()); n != 2 {
		t.Errorf("%d model calls, want 2", n)
	}
	// The over-budget call is refused at decoding: it never reaches the gate.
	if c, wv := w.gate.Counts(); c != 1 || wv != 1 {
		t.Errorf("charged %d waived %d", c, wv)
	}
}
