package llm_test

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/routes/fr"
	llmroutes "github.com/peage/appliance/api/routes/llm"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/llm/llmtest"
)

// routedTask is one row of testdata/tasks.json, the router's table (also read by the bench).
type routedTask struct {
	Task       string         `json:"task"`
	Capability string         `json:"capability"`
	By         string         `json:"by"`    // deterministic, or model (no recogniser may match)
	Input      map[string]any `json:"input"` // the model's input for model rows
}

func loadTasks(t *testing.T) []routedTask {
	b, err := os.ReadFile("testdata/tasks.json")
	if err != nil {
		t.Fatal(err)
	}
	var ts []routedTask
	if err := json.Unmarshal(b, &ts); err != nil {
		t.Fatal(err)
	}
	return ts
}

func TestRouterTable(t *testing.T) {
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	tasks := loadTasks(t)
	if len(tasks) < 40 {
		t.Fatalf("%d tasks, the table needs at least 40", len(tasks))
	}
	for _, tc := range tasks {
		p, ok := llmroutes.Deterministic(cat, tc.Task, "")
		switch {
		case tc.By == "model" && ok:
			t.Errorf("%q: a recogniser (%s) took a task meant for the model: %s", tc.Task, p.Recogniser, p.Capability)
		case tc.By == "deterministic" && !ok:
			t.Errorf("%q: no recogniser matched, want %s", tc.Task, tc.Capability)
		case tc.By == "deterministic" && p.Capability != tc.Capability:
			t.Errorf("%q: routed to %s by %s, want %s", tc.Task, p.Capability, p.Recogniser, tc.Capability)
		}
		if ok && p.Provider != "deterministic" {
			t.Errorf("%q: provider %s", tc.Task, p.Provider)
		}
	}
	// Deterministic means the same answer every time.
	a, _ := llmroutes.Deterministic(cat, tasks[15].Task, "")
	b, _ := llmroutes.Deterministic(cat, tasks[15].Task, "")
	if a.Capability != b.Capability || a.Input["iban"] != b.Input["iban"] {
		t.Errorf("not deterministic: %+v %+v", a, b)
	}
}

// solveWorld binds the real French family too: its offline routes (IBAN, holidays) are
// capabilities the router can call without any network.
func solveWorld(t *testing.T, withModel bool) *world {
	t.Helper()
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	specs, err := upstream.Resolve(upstream.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	french, err := fr.With(fr.Parts{Upstreams: specs})
	if err != nil {
		t.Fatal(err)
	}
	if err := french.Bind(cat); err != nil {
		t.Fatal(err)
	}
	w := &world{gate: &apitest.RecordingGate{}}
	deps := llmroutes.Parts{}
	if withModel {
		w.srv = llmtest.New(t, llmtest.Config())
		deps.Model = w.srv.Client(t, llmtest.Config())
	}
	if err := llmroutes.With(deps).Bind(cat); err != nil {
		t.Fatal(err)
	}
	w.h = apitest.Start(t, cat, apitest.Options{CheckShapes: true, Gate: w.gate})
	return w
}

func TestSolveDeterministicCallsTheCapability(t *testing.T) {
	w := solveWorld(t, false)
	a := w.post(t, "/v1/solve", map[string]any{"task": "is FR14 2004 1010 0505 0001 3M02 606 a valid IBAN?"})
	m := a.json(t)
	a.golden(t, "solve_iban")
	if a.status != 200 {
		t.Fatalf("%d %s", a.status, a.body)
	}
	plan, routing, pricing := m["plan"].(map[string]any), m["routing"].(map[string]any), m["pricing"].(map[string]any)
	if m["capability"] != "fr.iban" || plan["capability"] != "fr.iban" || plan["input"].(map[string]any)["iban"] == nil || routing["provider"] != "deterministic" {
		t.Errorf("plan %v routing %v", plan, routing)
	}
	if _, ok := routing["latency_ms"].(float64); !ok {
		t.Errorf("routing has no latency: %v", routing)
	}
	if pricing["direct_route_cheaper"] != true || pricing["direct_price_usd"] != "0.005" || pricing["solve_price_usd"] != "0.05" {
		t.Errorf("pricing %v", pricing)
	}
	// The result is the direct route's own answer, byte for byte the same JSON value.
	direct := w.call(t, "GET", "/v1/fr/iban?iban=FR1420041010050500013M02606", nil)
	if direct.status != 200 || !reflect.DeepEqual(m["result"], direct.json(t)) {
		t.Errorf("via solve %v, direct %s", m["result"], direct.body)
	}
	if c, wv := w.gate.Counts(); c != 2 || wv != 0 {
		t.Errorf("charged %d waived %d", c, wv)
	}
}

func TestSolveModelFallback(t *testing.T) {
	w := solveWorld(t, true)
	w.srv.Push(llmtest.JSON(t, map[string]any{"capability": "fr.jours-feries", "input_json": `{"annee": 2027}`}),
		llmtest.JSON(t, map[string]any{"capability": "fr.jours-feries", "input_json": `{"annee": 1066}`}))
	a := w.post(t, "/v1/solve", map[string]any{"task": "public holidays in France next year"})
	m := a.json(t)
	if a.status != 200 || m["plan"].(map[string]any)["capability"] != "fr.jours-feries" || m["routing"].(map[string]any)["provider"] != "model" {
		t.Fatalf("%d %s", a.status, a.body)
	}
	if u := m["routing"].(map[string]any)["usage"].(map[string]any); u["total_tokens"] != 101.0 {
		t.Errorf("usage %v", u)
	}
	body := w.srv.Bodies()[0]
	rf := body["response_format"].(map[string]any)["json_schema"].(map[string]any)["schema"].(map[string]any)
	enum := rf["properties"].(map[string]any)["capability"].(map[string]any)["enum"].([]any)
	if body["model"] != "gpt-4o" || len(enum) < 50 {
		t.Errorf("routing request: model %v, %d capabilities", body["model"], len(enum))
	}
	for _, id := range enum {
		if id == "solve" || id == "proxy.1gb" || id == "site.agent-readiness" || id == "fr.kyb" {
			t.Errorf("the router may not call %s", id)
		}
	}
	// An input the capability's own checks refuse is no answer, and nothing is charged.
	bad := w.post(t, "/v1/solve", map[string]any{"task": "public holidays in France in the year of Hastings"})
	if bad.status != 502 || !strings.Contains(string(bad.body), "annee") {
		t.Errorf("refused input: %d %s", bad.status, bad.body)
	}
	if c, wv := w.gate.Counts(); c != 1 || wv != 1 {
		t.Errorf("charged %d waived %d", c, wv)
	}
	// A capability dearer than solve is not offered to the model; one it names anyway is no
	// answer (issue 34: solve sold its dearer capabilities at its own price).
	dearAnswer := llmtest.JSON(t, map[string]any{"capability": "site.agent-readiness", "input_json": `{"url": "https://example.com"}`})
	w.srv.Push(dearAnswer, dearAnswer) // out of the schema's enum: asked again once
	dear := w.post(t, "/v1/solve", map[string]any{"task": "public holidays in France, or whatever"})
	if dear.status != 502 {
		t.Errorf("model routed to a dearer capability: %d %s", dear.status, dear.body)
	}
	if c, wv := w.gate.Counts(); c != 1 || wv != 2 {
		t.Errorf("charged %d waived %d", c, wv)
	}
}

func TestSolveWithoutMatchOrModel(t *testing.T) {
	w := solveWorld(t, false)
	a := w.post(t, "/v1/solve", map[string]any{"task": "write me a poem about toll roads"})
	if a.status != 400 || !strings.Contains(string(a.body), "task") {
		t.Errorf("%d %s", a.status, a.body)
	}
	if c, _ := w.gate.Counts(); c != 0 {
		t.Errorf("charged %d", c)
	}
}

func TestPreviewAndCapabilities(t *testing.T) {
	w := solveWorld(t, true)
	pa := w.post(t, "/v1/solve/preview", map[string]any{"task": "decode VIN 1HGCM82633A004352"})
	pa.golden(t, "solve_preview_vin")
	p := pa.json(t)
	plan := p["plan"].(map[string]any)
	if p["routable"] != true || plan["capability"] != "vin.decode" || plan["input"].(map[string]any)["vin"] != "1HGCM82633A004352" {
		t.Errorf("preview %v", p)
	}
	if pr := p["pricing"].(map[string]any); pr["direct_route_cheaper"] != true || !strings.Contains(p["note"].(string), "not available") {
		t.Errorf("preview pricing %v note %v", pr, p["note"])
	}
	if p["price"] != 0.05 {
		t.Errorf("preview price %v, want solve's 0.05 USD", p["price"])
	}
	// Not routable: the plan the spec names is there, null.
	if n := w.post(t, "/v1/solve/preview", map[string]any{"task": "write me a poem"}).json(t); n["routable"] != false || n["plan"] != nil || n["price"] != 0.05 {
		t.Errorf("unroutable preview %v", n)
	}
	if len(w.srv.Bodies()) != 0 {
		t.Errorf("a free preview called the model")
	}
	c := w.call(t, "GET", "/v1/capabilities", nil).json(t)
	if c["model_fallback"].(map[string]any)["available"] != true || c["count"].(float64) < 50 {
		t.Errorf("capabilities %v", c["model_fallback"])
	}
	found := false
	for _, d := range c["deterministic"].([]any) {
		for _, cp := range d.(map[string]any)["capabilities"].([]any) {
			if cm := cp.(map[string]any); cm["capability"] == "fr.iban" && cm["available"] == true {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("fr.iban is not listed as solvable")
	}
	w2 := solveWorld(t, false)
	c2 := w2.call(t, "GET", "/v1/capabilities", nil).json(t)
	if c2["model_fallback"].(map[string]any)["available"] != false || c2["count"].(float64) >= c["count"].(float64) {
		t.Errorf("without a model the router claims %v capabilities", c2["count"])
	}
}
