package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/family"
)

// Step is one step of an agent task. Its cost is the catalog price of the route that does
// the same work (reading a page is /v1/extract, searching news /v1/search/news, answering
// with verified evidence /v1/llm/pro), so a caller can compare with doing it by hand.
type Step struct {
	ID     string         `json:"id"` // step_<n>
	N      int            `json:"n"`
	Action string         `json:"action"` // search_news, read_page, answer_with_evidence
	Route  string         `json:"route"`  // the route whose price the step costs
	Input  map[string]any `json:"input"`
	Statut string         `json:"statut"` // PLANNED, COMPLETED, FAILED, SKIPPED
	// CostUSD is the step's list price; CoutReelUSD what it cost the task: its price once
	// COMPLETED, else 0.
	CostUSD     string  `json:"cost_usd"`
	CoutReelUSD float64 `json:"cout_reel_usd"`
	Detail      string  `json:"detail,omitempty"`
	LatencyMS   int64   `json:"latency_ms,omitempty"`
	cost        uint64
}

// Agent is the answer of /v1/agent/task, the spec's agent task result.
type Agent struct {
	Capability   string       `json:"capability"` // which of the three tasks: page_question, news_search, page_question_with_news
	Workflow     string       `json:"workflow"`   // the steps' actions in order
	Objective    string       `json:"objective"`
	Answer       string       `json:"answer"`
	Steps        []Step       `json:"steps"`
	ActualCost   float64      `json:"actual_cost"` // USD, the completed steps' prices
	BudgetUSD    string       `json:"budget_usd"`
	Sources      []Source     `json:"sources"`
	Evidence     []Evidence   `json:"evidence"`
	Verification Verification `json:"verification"`
	Usage        Usage        `json:"usage"`
	LatencyMS    int64        `json:"latency_ms"`
}

// Quote is the answer of /v1/agent/quote.
type Quote struct {
	Objective string `json:"objective"`
	Plan      []Step `json:"plan"`
	PriceUSD  string `json:"price_usd"`
	PlanUSD   string `json:"plan_cost_usd"`
	Feasible  bool   `json:"feasible"`
	Note      string `json:"note"`
	Limits    Limits `json:"limits"`
}

// Limits bound an agent task.
type Limits struct {
	BudgetUSD     string `json:"budget_usd"`
	MaxBudgetUSD  string `json:"max_budget_usd"`
	MaxSteps      int    `json:"max_steps"`
	MaxPageChars  int    `json:"max_page_chars"`
	TimeoutSecond int    `json:"timeout_seconds"`
}

// Step statuses. The spec evidences COMPLETED only; the others are named the same way.
const (
	statusPlanned   = "PLANNED"
	statusCompleted = "COMPLETED"
	statusFailed    = "FAILED"
	statusSkipped   = "SKIPPED"
)

// topNewsURL is the read_page input of the news story the search step will choose.
const topNewsURL = "the top news result"

// agentMaxSteps is the longest plan: read the source, search news, read the top story, answer.
const agentMaxSteps = 4

// asksForNews reports whether an objective asks about recent events, which a page alone
// cannot tell.
func asksForNews(objective string) bool {
	return newTask(objective).has("news", "latest", "recent", "recently", "today", "this week", "headlines", "current events",
		"actualité", "actualités", "dernières nouvelles", "récemment", "aujourd'hui", "cette semaine")
}

// agentPlan is the steps an objective needs. With a source (given, or the first URL of the
// objective): read it; when the objective also asks about recent events, search the news and
// read the top story as well. Without a source: search recent news and read the top story.
// Then answer with evidence from what was read.
func (r *Routes) agentPlan(args catalog.Args) []Step {
	objective, source := args.Str("objective"), args.Str("source")
	if source == "" {
		source = strings.TrimRight(urlRe.FindString(objective), ".,;:!?")
	}
	var steps []Step
	add := func(action, route string, in map[string]any) {
		e := r.cat.ByPath(route)
		steps = append(steps, Step{ID: fmt.Sprintf("step_%d", len(steps)+1), N: len(steps) + 1, Action: action, Route: route, Input: in, Statut: statusPlanned, cost: e.Price, CostUSD: usd(e.Price)})
	}
	if source != "" {
		add("read_page", "/v1/extract", map[string]any{"url": source})
	}
	if source == "" || asksForNews(objective) {
		q := strings.Join(strings.Fields(urlRe.ReplaceAllString(objective, " ")), " ")
		add("search_news", "/v1/search/news", map[string]any{"q": truncate(q, 300)})
		add("read_page", "/v1/extract", map[string]any{"url": topNewsURL})
	}
	add("answer_with_evidence", "/v1/llm/pro", map[string]any{"objective": objective})
	return steps
}

// budgetOf is the caller's budget in atomic units; by default the route's own price.
func (r *Routes) budgetOf(args catalog.Args) uint64 {
	if args.Has("budget") {
		return uint64(math.Round(args.Float("budget") * 1e6))
	}
	return r.cat.Entry("agent.task").Price
}

// checkBudget refuses a plan that costs more than the budget: the task would stop before its
// first step, so the call is a 400 before any 402 (agent.task's Entry.Check).
func (r *Routes) checkBudget(args catalog.Args) error {
	steps, budget := r.agentPlan(args), r.budgetOf(args)
	if total(steps) > budget {
		return apierr.BadParam("budget", "the plan costs %s USD (%d steps) and the budget is %s USD: the task stops before its first step; nothing was charged",
			usd(total(steps)), len(steps), usd(budget))
	}
	return nil
}

func total(steps []Step) (sum uint64) {
	for _, s := range steps {
		sum += s.cost
	}
	return sum
}

func (r *Routes) agentQuote(ctx context.Context, req *catalog.Request) (any, error) {
	steps, budget := r.agentPlan(req.Args), r.budgetOf(req.Args)
	q := Quote{Objective: req.Args.Str("objective"), Plan: steps, PriceUSD: usd(r.cat.Entry("agent.task").Price), PlanUSD: usd(total(steps)),
		Limits: Limits{BudgetUSD: usd(budget), MaxBudgetUSD: "1", MaxSteps: agentMaxSteps, MaxPageChars: maxPageChars, TimeoutSecond: int(r.cat.Entry("agent.task").Timeout / time.Second)}}
	q.Feasible = true
	switch {
	case total(steps) > budget:
		q.Feasible, q.Note = false, "the plan costs "+q.PlanUSD+" USD, over the budget of "+q.Limits.BudgetUSD+" USD: the task would stop before its first step and charge nothing"
	case r.modelReady() != nil || r.pagesReady() != nil:
		q.Feasible, q.Note = false, "the model or the browser farm is not available right now: /v1/agent/task answers 503"
	case hasAction(steps, "search_news") && !r.cat.ByPath("/v1/search/news").Available():
		q.Feasible, q.Note = false, "news search is not available on this appliance: give a source URL, or the task fails explicitly without charge"
	default:
		q.Note = "the task answers only from what its steps read, each quote checked against the page; when it cannot, it fails explicitly and charges nothing"
	}
	return q, nil
}

// taskKind names which of the spec's three agent tasks a plan is (page reading with a
// question, recent news search, or both) and its workflow, the actions in order.
func taskKind(steps []Step) (capability, workflow string) {
	actions := make([]string, len(steps))
	for i, s := range steps {
		actions[i] = s.Action
	}
	news, page := hasAction(steps, "search_news"), steps[0].Action == "read_page" // a source is read first
	switch {
	case news && page:
		capability = "page_question_with_news"
	case news:
		capability = "news_search"
	default:
		capability = "page_question"
	}
	return capability, strings.Join(actions, " then ")
}

func hasAction(steps []Step, action string) bool {
	for _, s := range steps {
		if s.Action == action {
			return true
		}
	}
	return false
}

// agentFailure is the explicit failure of a task, naming its steps and what became of each
// (those after a failed one are SKIPPED); nothing is charged.
func agentFailure(steps []Step, err error) error {
	var b strings.Builder
	for _, s := range steps {
		if s.Statut != statusPlanned {
			b.WriteString(" " + s.Action + ": " + s.Statut + ";")
		}
	}
	return &apierr.Reworded{Prefix: "the agent could not answer from its sources (steps:" + strings.TrimSuffix(b.String(), ";") + "): ", Err: err}
}

func (r *Routes) agentTask(ctx context.Context, req *catalog.Request) (any, error) {
	start := time.Now()
	// The plan's cost was held against the budget when the parameters were decoded
	// (checkBudget, the entry's Check), before any 402.
	steps, budget := r.agentPlan(req.Args), r.budgetOf(req.Args)
	var read []*family.Page
	var spent uint64
	for i := range steps {
		s := &steps[i]
		t0 := time.Now()
		var err error
		switch s.Action {
		case "search_news":
			var url string
			url, err = r.topNews(ctx, req, s.Input["q"].(string))
			if err == nil {
				steps[i+1].Input["url"] = url
			}
		case "read_page":
			var page *family.Page
			page, err = r.pages.ReadPage(ctx, s.Input["url"].(string), req.Free)
			if err == nil {
				read = append(read, page)
			}
		case "answer_with_evidence":
			var answer string
			var ev []Evidence
			var u Usage
			answer, ev, u, err = r.answerFrom(ctx, req.Args.Str("objective"), read...)
			if err == nil {
				s.Statut, s.LatencyMS, s.CoutReelUSD = statusCompleted, since(t0), usdNumber(s.cost)
				spent += s.cost
				capability, workflow := taskKind(steps)
				return Agent{Capability: capability, Workflow: workflow, Objective: req.Args.Str("objective"), Answer: answer, Steps: steps,
					ActualCost: usdNumber(spent), BudgetUSD: usd(budget),
					Sources: sourcesOf(read), Evidence: ev, Verification: verificationOf(ev), Usage: u, LatencyMS: since(start)}, nil
			}
		}
		s.LatencyMS = since(t0)
		if err != nil {
			s.Statut, s.Detail = statusFailed, apierrMessage(err)
			for j := i + 1; j < len(steps); j++ {
				steps[j].Statut = statusSkipped
			}
			return nil, agentFailure(steps, err)
		}
		s.Statut, s.CoutReelUSD = statusCompleted, usdNumber(s.cost)
		spent += s.cost
	}
	return nil, agentFailure(steps, apierr.Unavailable("the plan ended without an answer"))
}

// topNews runs the news search route's own handler and returns the first result's link.
func (r *Routes) topNews(ctx context.Context, req *catalog.Request, q string) (string, error) {
	e := r.cat.ByPath("/v1/search/news")
	in, err := e.Decode(map[string]any{"q": q})
	if err != nil {
		return "", err
	}
	raw, err := r.call(ctx, &Plan{Capability: e.ID, Route: e.Method + " " + e.Path, Input: in}, req)
	if err != nil {
		return "", err
	}
	var res struct {
		News []struct {
			Link string `json:"link"`
		} `json:"news"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || len(res.News) == 0 || res.News[0].Link == "" {
		return "", apierr.NotFound("the news search found nothing to read for this objective")
	}
	return res.News[0].Link, nil
}
