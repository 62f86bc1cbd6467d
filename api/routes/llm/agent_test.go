package llm_test

import (
	"strings"
	"testing"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/upstream/llm/llmtest"
)

func TestAgentTask(t *testing.T) {
	w := newWorld(t, true, shop, nil)
	w.srv.Push(
		llmtest.JSON(t, map[string]any{"answerable": true, "answer": "29,90 €", "evidence": []string{"Price: **29,90 €**"}}),
		llmtest.JSON(t, map[string]any{"answerable": false, "answer": "", "evidence": []string{}}),
	)
	a := w.post(t, "/v1/agent/task", map[string]any{"objective": "What does the kettle at https://shop.example/item cost?"})
	m := a.json(t)
	a.golden(t, "agent_task_page_question")
	if a.status != 200 || m["answer"] != "29,90 €" || m["actual_cost"] != 0.011 || m["budget_usd"] != "0.05" {
		t.Fatalf("%d %s", a.status, a.body)
	}
	// The spec's agent task result: the task's kind and workflow, each step's id and real
	// cost (a number, USD), and the verification block with its controls.
	if m["capability"] != "page_question" || m["workflow"] != "read_page then answer_with_evidence" ||
		apitest.At(m, "verification", "passe") != true || apitest.At(m, "verification", "controles", 0, "controle") != "extrait_1_dans_source_1" ||
		apitest.At(m, "verification", "controles", 0, "ok") != true || len(apitest.At(m, "verification", "echecs").([]any)) != 0 {
		t.Errorf("task %s", a.body)
	}
	steps := m["steps"].([]any)
	if len(steps) != 2 || steps[0].(map[string]any)["statut"] != "COMPLETED" || steps[0].(map[string]any)["cost_usd"] != "0.005" ||
		steps[0].(map[string]any)["id"] != "step_1" || steps[0].(map[string]any)["cout_reel_usd"] != 0.005 || steps[1].(map[string]any)["cout_reel_usd"] != 0.006 ||
		steps[1].(map[string]any)["action"] != "answer_with_evidence" || steps[1].(map[string]any)["statut"] != "COMPLETED" {
		t.Errorf("steps %v", steps)
	}
	// Cannot answer from its source: an explicit failure naming the steps, not charged.
	f := w.post(t, "/v1/agent/task", map[string]any{"objective": "Who designed the kettle?", "source": "https://shop.example/item"})
	if f.status != 404 || !strings.Contains(string(f.body), "could not answer from its sources") || !strings.Contains(string(f.body), "read_page: COMPLETED") {
		t.Errorf("unanswerable: %d %s", f.status, f.body)
	}
	// Over budget: stops before its first step and says so.
	b := w.post(t, "/v1/agent/task", map[string]any{"objective": "Price?", "source": "https://shop.example/item", "budget": 0.01})
	if b.status != 400 || !strings.Contains(string(b.body), "budget") || !strings.Contains(string(b.body), "0.011") {
		t.Errorf("over budget: %d %s", b.status, b.body)
	}
	// No source and no news search on this appliance: explicit failure.
	n := w.post(t, "/v1/agent/task", map[string]any{"objective": "latest news on stablecoin rules"})
	if n.status != 503 || !strings.Contains(string(n.body), "search_news: FAILED") {
		t.Errorf("no news: %d %s", n.status, n.body)
	}
	// A captcha page: the read step fails, the model is never asked, nothing is charged.
	c := w.post(t, "/v1/agent/task", map[string]any{"objective": "What is on this page?", "source": "https://captcha.example/"})
	if c.status != 502 || !strings.Contains(string(c.body), "read_page: FAILED; answer_with_evidence: SKIPPED") || !strings.Contains(string(c.body), "anti-bot challenge") {
		t.Errorf("captcha: %d %s", c.status, c.body)
	}
	if calls := len(w.srv.Bodies()); calls != 2 {
		t.Errorf("%d model calls, want 2", calls)
	}
	// The over-budget call is refused at decoding: it never reaches the gate.
	if c, wv := w.gate.Counts(); c != 1 || wv != 3 {
		t.Errorf("charged %d waived %d", c, wv)
	}
}

func TestAgentQuote(t *testing.T) {
	w := newWorld(t, true, shop, nil)
	q := w.post(t, "/v1/agent/quote", map[string]any{"objective": "summarise https://shop.example/item"}).json(t)
	if q["feasible"] != true || q["plan_cost_usd"] != "0.011" || q["price_usd"] != "0.05" || len(q["plan"].([]any)) != 2 {
		t.Errorf("quote %v", q)
	}
	lim := q["limits"].(map[string]any)
	if lim["budget_usd"] != "0.05" || lim["max_budget_usd"] != "1" || lim["max_page_chars"] != 24000.0 {
		t.Errorf("limits %v", lim)
	}
	o := w.post(t, "/v1/agent/quote", map[string]any{"objective": "summarise https://shop.example/item", "budget": 0.01}).json(t)
	if o["feasible"] != false || !strings.Contains(o["note"].(string), "over the budget") {
		t.Errorf("over-budget quote %v", o)
	}
	if len(w.srv.Bodies()) != 0 {
		t.Errorf("a quote called the model")
	}
}

// TestAgentPlanFollowsTheTask: the plan is chosen by the objective: a page to read, recent
// news, or both; the quote prices it and says when the budget does not cover it.
func TestAgentPlanFollowsTheTask(t *testing.T) {
	w := newWorld(t, true, shop, nil)
	for _, tc := range []struct {
		name    string
		params  map[string]any
		actions string
		cost    string
	}{
		{"a page and a question", map[string]any{"objective": "What does the kettle at https://shop.example/item cost?"}, "read_page answer_with_evidence", "0.011"},
		{"a source given", map[string]any{"objective": "What does the kettle cost?", "source": "https://shop.example/item"}, "read_page answer_with_evidence", "0.011"},
		{"recent news", map[string]any{"objective": "What happened to stablecoin rules this week?"}, "search_news read_page answer_with_evidence", "0.014"},
		{"no source at all", map[string]any{"objective": "Who chairs Tesla's board?"}, "search_news read_page answer_with_evidence", "0.014"},
		{"a page and the latest news", map[string]any{"objective": "Compare https://shop.example/item with the latest news on kettle prices"},
			"read_page search_news read_page answer_with_evidence", "0.019"},
		{"a source and recent events", map[string]any{"objective": "Is the kettle still sold? Check recent headlines too.", "source": "https://shop.example/item"},
			"read_page search_news read_page answer_with_evidence", "0.019"},
		{"actualités", map[string]any{"objective": "Quelles sont les actualités sur https://shop.example/item ?"}, "read_page search_news read_page answer_with_evidence", "0.019"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := w.post(t, "/v1/agent/quote", tc.params).json(t)
			var actions []string
			for _, s := range q["plan"].([]any) {
				st := s.(map[string]any)
				actions = append(actions, st["action"].(string))
				if st["statut"] != "PLANNED" {
					t.Errorf("step %v", st)
				}
			}
			if got := strings.Join(actions, " "); got != tc.actions || q["plan_cost_usd"] != tc.cost {
				t.Errorf("plan %q costing %v, want %q costing %s", got, q["plan_cost_usd"], tc.actions, tc.cost)
			}
			if strings.Contains(tc.actions, "search_news") {
				// Without a bound news search the quote says the task cannot run.
				if q["feasible"] != false || !strings.Contains(q["note"].(string), "news search is not available") {
					t.Errorf("quote %v", q)
				}
			}
		})
	}
	if n := len(w.srv.Bodies()); n != 0 {
		t.Errorf("%d model calls for quotes", n)
	}
}
