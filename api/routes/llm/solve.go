package llm

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	model "github.com/peage/appliance/api/upstream/llm"
)

// Solved is the answer of /v1/solve.
type Solved struct {
	Capability string          `json:"capability"` // the catalog id the task was routed to, as in plan
	Task       string          `json:"task"`
	Plan       *Plan           `json:"plan"`
	Result     json.RawMessage `json:"result"` // the capability's own answer, as its route gives it
	Routing    Routing         `json:"routing"`
	Pricing    Pricing         `json:"pricing"`
}

// Routing says who chose the capability and how long the choice took.
type Routing struct {
	Provider   string `json:"provider"` // deterministic or model
	Recogniser string `json:"recogniser"`
	LatencyMS  int64  `json:"latency_ms"`
	Usage      *Usage `json:"usage,omitempty"`
}

// Pricing compares the router's price with the direct route's.
type Pricing struct {
	SolvePriceUSD      string `json:"solve_price_usd"`
	DirectRoute        string `json:"direct_route"`
	DirectPriceUSD     string `json:"direct_price_usd"`
	DirectRouteCheaper bool   `json:"direct_route_cheaper"`
	Note               string `json:"note,omitempty"`
}

// Preview is the answer of /v1/solve/preview: the plan without running it.
type Preview struct {
	Task     string  `json:"task"`
	Routable bool    `json:"routable"`
	Plan     *Plan   `json:"plan"`  // null when the task is not routable
	Price    float64 `json:"price"` // what /v1/solve charges, USD
	Pricing  Pricing `json:"pricing,omitempty"`
	Note     string  `json:"note"`
}

// excluded are the entries the router never calls: itself, the agent, and routes that sell
// a resource with a side effect (a proxy key, an inbox, a page, a phone number).
var excluded = map[string]bool{"solve": true, "agent.task": true, "publish": true, "callbacks": true,
	"proxy.1gb": true, "proxy.5gb": true, "proxy.20gb": true, "sms.number": true, "sms.inbox": true}

// routable lists the paid capabilities the router may choose.
func (r *Routes) routable() []*catalog.Entry {
	var out []*catalog.Entry
	for _, e := range r.cat.Entries() {
		if e.Kind == catalog.Paid && !excluded[e.ID] {
			out = append(out, e)
		}
	}
	return out
}

func usd(atomic uint64) string {
	s := strconv.FormatUint(atomic, 10)
	for len(s) < 7 {
		s = "0" + s
	}
	s = s[:len(s)-6] + "." + s[len(s)-6:]
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

// usdNumber renders an amount for the fields the spec gives as a number of USD (actual_cost,
// cout_reel_usd); amounts stay atomic units until here. A float64 holds every amount of a
// call exactly enough that JSON prints its decimal text (0.011, not 0.010999...).
func usdNumber(atomic uint64) float64 { return float64(atomic) / 1e6 }

func (r *Routes) pricing(p *Plan) Pricing {
	solve, direct := r.cat.Entry("solve"), r.cat.Entry(p.Capability)
	pr := Pricing{SolvePriceUSD: usd(solve.Price), DirectRoute: p.Route, DirectPriceUSD: usd(direct.Price), DirectRouteCheaper: direct.Price < solve.Price}
	if pr.DirectRouteCheaper {
		pr.Note = fmt.Sprintf("calling %s directly with this input costs %s USD instead of %s", p.Route, pr.DirectPriceUSD, pr.SolvePriceUSD)
	}
	return pr
}

// checkCapability refuses a named capability the router cannot call (solve's and
// solve/preview's Entry.Check: a 400 before any 402).
func (r *Routes) checkCapability(args catalog.Args) error {
	if want := args.Str("capability"); want != "" {
		if e := r.cat.Entry(want); e == nil || e.Kind != catalog.Paid || excluded[want] {
			return apierr.BadParam("capability", "capability %q is not one the router can call; see /v1/capabilities", want)
		}
	}
	return nil
}

// affordable reports whether solve's own price pays for e: /v1/solve charges its flat price
// whatever it routes to, so it never runs a capability that costs more (issue 34: a 1 USDC
// audit was sold for 0.05).
func (r *Routes) affordable(e *catalog.Entry) bool { return e.Price <= r.cat.Entry("solve").Price }

// dearer is the refusal of a task routed to a capability that costs more than solve: a 400
// before any 402 naming the capability, its route, its price and the input to call it with.
func (r *Routes) dearer(param string, e *catalog.Entry, in catalog.Args) error {
	direct := e.Method + " " + e.Path
	if in != nil {
		if b, err := json.Marshal(in); err == nil {
			direct += " with " + string(b)
		}
	}
	return apierr.BadParam(param, "this task routes to %s, which costs %s USD, more than /v1/solve's %s USD: call %s directly; nothing was charged",
		e.ID, usd(e.Price), usd(r.cat.Entry("solve").Price), direct)
}

// checkSolve is /v1/solve's Entry.Check: a named capability, or the one a recogniser routes
// the task to, must cost no more than solve itself. (Tasks left to the model are routed
// among such capabilities only.) Deterministic does no I/O.
func (r *Routes) checkSolve(args catalog.Args) error {
	if err := r.checkCapability(args); err != nil {
		return err
	}
	want := args.Str("capability")
	if want != "" {
		if e := r.cat.Entry(want); !r.affordable(e) {
			var in catalog.Args
			if p, ok := Deterministic(r.cat, args.Str("task"), want); ok {
				in = p.Input
			}
			return r.dearer("capability", e, in)
		}
		return nil
	}
	if p, ok := Deterministic(r.cat, args.Str("task"), ""); ok {
		if e := r.cat.Entry(p.Capability); !r.affordable(e) {
			return r.dearer("task", e, p.Input)
		}
	}
	return nil
}

// plan chooses the capability: the recognisers first, the model only when none matches.
func (r *Routes) plan(ctx context.Context, raw, want string) (*Plan, *Usage, error) {
	if err := r.checkCapability(catalog.Args{"capability": want}); err != nil {
		return nil, nil, err
	}
	if p, ok := Deterministic(r.cat, raw, want); ok {
		return p, nil, nil
	}
	if want != "" {
		// A named capability with one required text input takes the task as that input.
		e := r.cat.Entry(want)
		var req []catalog.Param
		for _, prm := range e.Params {
			if prm.Required {
				req = append(req, prm)
			}
		}
		if len(req) == 1 && req[0].Type == catalog.String {
			in, err := e.Decode(map[string]any{req[0].Name: raw})
			if err == nil {
				return &Plan{Capability: want, Route: e.Method + " " + e.Path, Input: in, Recogniser: "named_capability", Provider: "deterministic"}, nil, nil
			}
		}
	}
	if err := r.modelReady(); err != nil {
		return nil, nil, apierr.BadParam("task", "no recogniser matched this task and no model is configured to route it; /v1/capabilities lists what is recognised")
	}
	return r.modelPlan(ctx, raw, want)
}

// modelPlan asks the strong model for a capability and its input; the input must pass the
// capability's own decoder, like any caller's.
func (r *Routes) modelPlan(ctx context.Context, raw, want string) (*Plan, *Usage, error) {
	var ids []any
	var b strings.Builder
	for _, e := range r.routable() {
		if (want != "" && e.ID != want) || !r.affordable(e) {
			continue
		}
		ids = append(ids, e.ID)
		schema, _ := json.Marshal(e.Schema())
		fmt.Fprintf(&b, "- %s: %s Input schema: %s\n", e.ID, e.Summary, schema)
	}
	schema := &model.Schema{Name: "route", Doc: map[string]any{
		"type": "object", "additionalProperties": false, "required": []any{"capability", "input_json"},
		"properties": map[string]any{
			"capability": map[string]any{"type": "string", "enum": ids},
			"input_json": map[string]any{"type": "string"},
		}}}
	res, err := r.m.Complete(ctx, model.Request{Class: model.Strong, MaxTokens: 300, Schema: schema, Messages: []model.Message{
		{Role: "system", Content: "You route a task to exactly one capability and write its input as a JSON object in input_json, using only values present in the task. Capabilities:\n" + b.String()},
		{Role: "user", Content: raw},
	}})
	if err != nil {
		return nil, nil, modelError(err)
	}
	u := usageOf(res)
	o := res.JSON.(map[string]any)
	id := o["capability"].(string)
	var in map[string]any
	if err := json.Unmarshal([]byte(o["input_json"].(string)), &in); err != nil {
		return nil, &u, &apierr.Error{Code: apierr.CodeUpstream, Upstream: model.Name, Message: "the model's routing input is not a JSON object; nothing was charged"}
	}
	e := r.cat.Entry(id)
	decoded, err := e.Decode(in)
	if err != nil {
		return nil, &u, &apierr.Error{Code: apierr.CodeUpstream, Upstream: model.Name, Cause: err,
			Message: "the model routed to " + id + " with an input its checks refuse (" + apierrMessage(err) + "); nothing was charged"}
	}
	return &Plan{Capability: id, Route: e.Method + " " + e.Path, Input: decoded, Recogniser: "model", Provider: "model"}, &u, nil
}

// call runs the capability's own handler with the plan's decoded input, under the
// capability's deadline: the same validation and the same code as its direct route, inside
// the payment of /v1/solve.
func (r *Routes) call(ctx context.Context, p *Plan, req *catalog.Request) (json.RawMessage, error) {
	e := r.cat.Entry(p.Capability)
	if !r.affordable(e) { // checkSolve and modelPlan keep these out; never sell one at solve's price
		return nil, r.dearer("task", e, p.Input)
	}
	if e.Handler == nil {
		return nil, apierr.Unavailable("%s is listed but not available on this appliance yet; nothing was charged", e.Path)
	}
	if e.Ready != nil {
		if err := e.Ready(); err != nil {
			return nil, unavailable(e.Path, err)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, e.Timeout)
	defer cancel()
	sub := &catalog.Request{Route: e, Args: p.Input, Method: e.Method, Path: e.Path, Header: req.Header,
		ClientIP: req.ClientIP, Free: req.Free, Payer: req.Payer, BaseURL: req.BaseURL}
	out, err := e.Handler(cctx, sub)
	if err != nil {
		return nil, err
	}
	if raw, ok := out.(*catalog.Raw); ok {
		if strings.HasPrefix(raw.ContentType, "application/json") || (raw.ContentType == "" && e.MediaType() == "application/json") {
			return raw.Body, nil
		}
		b, _ := json.Marshal(map[string]any{"content_type": orDefault(raw.ContentType, e.MediaType()), "base64": base64.StdEncoding.EncodeToString(raw.Body)})
		return b, nil
	}
	return json.Marshal(out)
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func (r *Routes) solve(ctx context.Context, req *catalog.Request) (any, error) {
	start := time.Now()
	p, u, err := r.plan(ctx, req.Args.Str("task"), req.Args.Str("capability"))
	if err != nil {
		return nil, err
	}
	routing := Routing{Provider: p.Provider, Recogniser: p.Recogniser, LatencyMS: since(start), Usage: u}
	res, err := r.call(ctx, p, req)
	if err != nil {
		return nil, err
	}
	return Solved{Capability: p.Capability, Task: req.Args.Str("task"), Plan: p, Result: res, Routing: routing, Pricing: r.pricing(p)}, nil
}

// preview plans deterministically only: a free call never spends a model call.
func (r *Routes) preview(ctx context.Context, req *catalog.Request) (any, error) {
	raw, want := req.Args.Str("task"), req.Args.Str("capability")
	if err := r.checkCapability(req.Args); err != nil {
		return nil, err
	}
	p, ok := Deterministic(r.cat, raw, want)
	if !ok {
		note := "no recogniser matches this task; /v1/solve would ask the model to route it"
		if r.modelReady() != nil {
			note = "no recogniser matches this task and no model is configured: /v1/solve would refuse it (400, nothing charged)"
		}
		return Preview{Task: raw, Price: usdNumber(r.cat.Entry("solve").Price), Note: note}, nil
	}
	pr := r.pricing(p)
	note := "the router would call " + p.Route + " with this input"
	switch e := r.cat.Entry(p.Capability); {
	case !r.affordable(e):
		note = "this task routes to " + p.Route + ", which costs more than /v1/solve: /v1/solve refuses it (400, nothing charged); call " + p.Route + " directly with this input"
	case !e.Available():
		note += ", which is not available right now (/v1/solve would answer 503, nothing charged)"
	}
	return Preview{Task: raw, Routable: true, Plan: p, Price: usdNumber(r.cat.Entry("solve").Price), Pricing: pr, Note: note}, nil
}

// Capabilities is /v1/capabilities: what the router really solves.
type Capabilities struct {
	Router          string          `json:"router"`
	RouterAvailable bool            `json:"router_available"`
	Deterministic   []RecogniserDoc `json:"deterministic"`
	ModelFallback   ModelFallback   `json:"model_fallback"`
	Count           int             `json:"count"`
}

// RecogniserDoc is one recogniser with the capabilities it routes to.
type RecogniserDoc struct {
	Recogniser   string          `json:"recogniser"`
	Example      string          `json:"example"`
	Capabilities []CapabilityDoc `json:"capabilities"`
}

// CapabilityDoc is one callable capability.
type CapabilityDoc struct {
	Capability  string `json:"capability"`
	Route       string `json:"route"`
	Description string `json:"description"`
	PriceUSD    string `json:"price_usd"`
	Available   bool   `json:"available"`
}

// ModelFallback says whether tasks no recogniser matches can be routed by the model.
type ModelFallback struct {
	Available    bool            `json:"available"`
	Note         string          `json:"note"`
	Capabilities []CapabilityDoc `json:"capabilities,omitempty"`
}

func (r *Routes) doc(e *catalog.Entry) CapabilityDoc {
	return CapabilityDoc{Capability: e.ID, Route: e.Method + " " + e.Path, Description: e.Summary, PriceUSD: usd(e.Price), Available: e.Available()}
}

func (r *Routes) capabilities(ctx context.Context, req *catalog.Request) (any, error) {
	out := Capabilities{Router: "/v1/solve", RouterAvailable: true}
	seen := map[string]bool{}
	for _, rc := range recognisers {
		d := RecogniserDoc{Recogniser: rc.name, Example: rc.example}
		for _, id := range rc.routes {
			if e := r.cat.Entry(id); e != nil {
				d.Capabilities = append(d.Capabilities, r.doc(e))
				seen[id] = true
			}
		}
		out.Deterministic = append(out.Deterministic, d)
	}
	if r.modelReady() == nil {
		out.ModelFallback = ModelFallback{Available: true, Note: "tasks no recogniser matches are routed by the model to one of these, its input checked like any caller's"}
		for _, e := range r.routable() {
			out.ModelFallback.Capabilities = append(out.ModelFallback.Capabilities, r.doc(e))
			seen[e.ID] = true
		}
	} else {
		out.ModelFallback = ModelFallback{Note: "no model is configured: only tasks a recogniser matches are solved"}
	}
	out.Count = len(seen)
	return out, nil
}

// Plan is the router's choice for a task, the model included when no recogniser matches
// (the bench measures it; /v1/solve runs it).
func (r *Routes) Plan(ctx context.Context, task, capability string) (*Plan, error) {
	p, _, err := r.plan(ctx, task, capability)
	return p, err
}
