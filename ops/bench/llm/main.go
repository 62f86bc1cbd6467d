// Command llm benchmarks the deterministic parts of the language-model routes, each beside a
// baseline measured in the same run:
//
//  1. guard: texts per second of the prompt-injection scanner over the public corpus
//     (api/compute/injection/testdata), with its precision and recall, beside a naive scan
//     for six override phrases (strings.Contains) over the same texts; the held-out deepset
//     test split is reported on its own as well;
//  2. router: tasks per second and accuracy of /v1/solve's planning on the task table
//     (api/routes/llm/testdata/tasks.json), deterministic recognisers alone and with the
//     fixture model, beside the direct route's own input decoding of the same tasks.
//
// The fixture model is a loopback chat-completions server answering with the recorded
// OpenAI envelope of api/upstream/llm/testdata/chat_json_schema.json whose content is the
// table's expected routing: it measures the model path's cost (request, validation, the
// capability's decoder), not a real model's accuracy.
//
// Usage: go run ./ops/bench/llm [-rounds 3]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/compute/injection"
	llmroutes "github.com/peage/appliance/api/routes/llm"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
	model "github.com/peage/appliance/api/upstream/llm"
	"github.com/peage/appliance/ops/benchutil"
)

type routedTask struct {
	Task       string         `json:"task"`
	Capability string         `json:"capability"`
	By         string         `json:"by"`
	Input      map[string]any `json:"input"`
}

func main() {
	rounds := flag.Int("rounds", 3, "passes over the corpus and the table")
	flag.Parse()
	guard(*rounds)
	router(*rounds)
}

var naivePhrases = []string{"ignore previous instructions", "ignore all previous instructions", "disregard previous", "forget all previous", "system prompt", "you are now"}

func naive(text string) bool {
	l := strings.ToLower(text)
	for _, p := range naivePhrases {
		if strings.Contains(l, p) {
			return true
		}
	}
	return false
}

func pr(samples []injection.Sample, flag func(string) bool) (p, r float64) {
	tp, fp, pos := 0, 0, 0
	for _, s := range samples {
		f := flag(s.Text)
		if s.Injection {
			pos++
		}
		if f && s.Injection {
			tp++
		} else if f {
			fp++
		}
	}
	if tp+fp > 0 {
		p = float64(tp) / float64(tp+fp)
	}
	if pos > 0 {
		r = float64(tp) / float64(pos)
	}
	return p, r
}

func rate(n int, rounds int, f func()) float64 {
	start := time.Now()
	for range rounds {
		f()
	}
	return float64(n*rounds) / time.Since(start).Seconds()
}

func guard(rounds int) {
	corpus, err := injection.Corpus()
	check(err)
	inj := 0
	var heldOut []injection.Sample
	for _, s := range corpus {
		if s.Injection {
			inj++
		}
		if s.Source == "deepset_test" {
			heldOut = append(heldOut, s)
		}
	}
	scan := func(t string) bool { return injection.Scan(t).Flagged() }
	base := rate(len(corpus), rounds, func() {
		for _, s := range corpus {
			naive(s.Text)
		}
	})
	tps := rate(len(corpus), rounds, func() {
		for _, s := range corpus {
			injection.Scan(s.Text)
		}
	})
	p, r := pr(corpus, scan)
	np, nr := pr(corpus, naive)
	hp, hr := pr(heldOut, scan)
	fmt.Printf("guard corpus: %d texts (%d injections, %d benign)\n", len(corpus), inj, len(corpus)-inj)
	benchutil.Table([]string{"scanner", "texts/s", "precision", "recall"}, [][]string{
		{"rules (guard)", fmt.Sprintf("%.0f", tps), fmt.Sprintf("%.3f", p), fmt.Sprintf("%.3f", r)},
		{"naive phrases (baseline)", fmt.Sprintf("%.0f", base), fmt.Sprintf("%.3f", np), fmt.Sprintf("%.3f", nr)},
		{fmt.Sprintf("rules on deepset test split (%d)", len(heldOut)), "", fmt.Sprintf("%.3f", hp), fmt.Sprintf("%.3f", hr)},
	})
	fmt.Printf("guard: baseline/rules time ratio %.1fx (the rules cost this much more than six substring checks)\n\n", base/tps)
}

func router(rounds int) {
	b, err := os.ReadFile("api/routes/llm/testdata/tasks.json")
	check(err)
	var tasks []routedTask
	check(json.Unmarshal(b, &tasks))
	cat, err := catalog.Default(catalog.DefaultNames())
	check(err)

	// Baseline: the direct routes' own decoding of the same inputs.
	var direct []map[string]any
	for _, t := range tasks {
		if p, ok := llmroutes.Deterministic(cat, t.Task, ""); ok {
			direct = append(direct, map[string]any(p.Input))
		}
	}
	base := rate(len(tasks), rounds, func() {
		for i, t := range tasks {
			if i < len(direct) {
				_, _ = cat.Entry(t.Capability).Decode(direct[i])
			}
		}
	})
	correct, recognisable, leftToModel := 0, 0, 0
	for _, t := range tasks {
		if t.By == "deterministic" {
			recognisable++
		}
	}
	det := rate(len(tasks), rounds, func() {
		correct, leftToModel = 0, 0
		for _, t := range tasks {
			p, ok := llmroutes.Deterministic(cat, t.Task, "")
			if ok && p.Capability == t.Capability && t.By == "deterministic" {
				correct++
			}
			if !ok && t.By == "model" {
				leftToModel++
			}
		}
	})

	// With the fixture model: a loopback server answering each model row's routing.
	byTask := map[string]routedTask{}
	for _, t := range tasks {
		byTask[t.Task] = t
	}
	envelope, err := os.ReadFile("api/upstream/llm/testdata/chat_json_schema.json")
	check(err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []model.Message `json:"messages"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		t := byTask[req.Messages[len(req.Messages)-1].Content]
		in, _ := json.Marshal(t.Input)
		content, _ := json.Marshal(map[string]any{"capability": t.Capability, "input_json": string(in)})
		var env map[string]any
		_ = json.Unmarshal(envelope, &env)
		env["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"] = string(content)
		_ = json.NewEncoder(w).Encode(env)
	}))
	defer srv.Close()
	spec, _ := upstream.Lookup(model.Name)
	spec.BaseURL, spec.Key, spec.RPS = srv.URL+"/v1", "bench", 0
	h, err := httpc.New(spec, httpc.Options{})
	check(err)
	routes := llmroutes.With(llmroutes.Parts{Model: model.New(h, model.DefaultConfig())})
	check(routes.Bind(cat))
	withModel := 0
	wm := rate(len(tasks), rounds, func() {
		withModel = 0
		for _, t := range tasks {
			if p, err := routes.Plan(context.Background(), t.Task, ""); err == nil && p.Capability == t.Capability {
				withModel++
			}
		}
	})
	fmt.Printf("router table: %d tasks\n", len(tasks))
	benchutil.Table([]string{"planner", "tasks/s", "accuracy"}, [][]string{
		{"deterministic recognisers", fmt.Sprintf("%.0f", det), fmt.Sprintf("%d/%d (%.3f); %d/%d recognisable; %d/%d left to the model", correct, len(tasks),
			float64(correct)/float64(len(tasks)), correct, recognisable, leftToModel, len(tasks)-recognisable)},
		{"recognisers + fixture model", fmt.Sprintf("%.0f", wm), fmt.Sprintf("%d/%d (%.3f)", withModel, len(tasks), float64(withModel)/float64(len(tasks)))},
		{"direct decoding (baseline)", fmt.Sprintf("%.0f", base), ""},
	})
	fmt.Printf("router: deterministic planning costs %.1fx the direct route's decoding\n", base/det)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
