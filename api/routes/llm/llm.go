// Package llm serves the language-model routes: /v1/llm, /v1/llm/pro, /v1/classify,
// /v1/guard, /v1/extract-structured, /v1/understand, /v1/brief, /v1/solve with
// /v1/solve/preview and /v1/capabilities, and /v1/agent/task with /v1/agent/quote
// (/v1/us/brief lives with the other US routes, over the same model client). They never invent:
// every label is one of the caller's, every field is on the page or null with a reason, every
// quoted piece of evidence is checked to be in the source, and an answer that fails its check
// is no answer (an error, so nothing is charged).
//
// The model is api/upstream/llm; without it the model routes are unavailable (503 before any
// 402) while /v1/guard's deterministic scanner and the router's deterministic recognisers keep
// serving.
package llm

import (
	"errors"
	"fmt"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/family"
	"github.com/peage/appliance/api/upstream"
	model "github.com/peage/appliance/api/upstream/llm"
)

// Pages reads a page for reasoning (the web family's, over the browser farm).
type Pages = family.PageReader

// Parts are the family's collaborators; nil ones leave their routes unavailable.
type Parts struct {
	Model *model.Client // nil: the model routes answer 503
	Pages Pages         // nil: the page routes answer 503
	Now   func() time.Time
}

// Routes holds the handlers.
type Routes struct {
	m     *model.Client
	pages Pages
	now   func() time.Time
	cat   *catalog.Catalog // the router's source of capabilities, set by Bind
}

// With builds the family.
func With(d Parts) *Routes {
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Routes{m: d.Model, pages: d.Pages, now: d.Now}
}

// modelReady is nil when the model can be called.
func (r *Routes) modelReady() error {
	if r.m == nil {
		return fmt.Errorf("%s: %w", model.Name, upstream.ErrNotConfigured)
	}
	return r.m.Ready()
}

func (r *Routes) pagesReady() error {
	if r.pages == nil {
		return errors.New("the browser farm is not running")
	}
	return r.pages.ReadyToRead()
}

func both(a, b func() error) func() error {
	return func() error {
		if err := a(); err != nil {
			return err
		}
		return b()
	}
}

// Bind attaches the handlers: the model routes ready with the model, the page routes with
// the model and the browser farm, /v1/brief with the model and the news search route, guard
// and the router always.
func (r *Routes) Bind(c *catalog.Catalog) error {
	r.cat = c
	binds := []struct {
		id    string
		h     catalog.Handler
		ready func() error
	}{
		{"llm", r.completion(model.Fast, model.MaxTokensFast), r.modelReady},
		{"llm.pro", r.completion(model.Strong, model.MaxTokensStrong), r.modelReady},
		{"classify", r.classify, r.modelReady},
		{"guard", r.guard, nil},
		{"extract-structured", r.extractStructured, both(r.modelReady, r.pagesReady)},
		{"understand", r.understand, both(r.modelReady, r.pagesReady)},
		{"solve", r.solve, nil},
		{"solve.preview", r.preview, nil},
		{"capabilities", r.capabilities, nil},
		{"agent.task", r.agentTask, both(r.modelReady, r.pagesReady)},
		{"brief", r.brief, both(r.modelReady, r.newsReady)},
		{"agent.quote", r.agentQuote, nil},
	}
	var errs []error
	for _, b := range binds {
		errs = append(errs, c.Bind(b.id, b.h, b.ready))
	}
	// Checks across parameters that need no I/O run before any 402.
	errs = append(errs, c.BindCheck("agent.task", r.checkBudget), c.BindCheck("solve", r.checkSolve), c.BindCheck("solve.preview", r.checkCapability),
		c.BindCheck("extract-structured", checkFieldNames))
	return errors.Join(errs...)
}

// modelError turns what the model did into the caller's error; none of them is charged.
func modelError(err error) error {
	var re *model.RefusalError
	var ie *model.InvalidError
	switch {
	case errors.As(err, &re):
		return &apierr.Error{Code: apierr.CodeUpstream, Upstream: model.Name, Cause: err,
			Message: "the model declined to answer (" + re.Text + "); nothing was charged"}
	case errors.Is(err, model.ErrTruncated):
		return &apierr.Error{Code: apierr.CodeUpstream, Upstream: model.Name, Cause: err,
			Message: "the model's answer was cut at its output limit before it was complete; nothing was charged"}
	case errors.As(err, &ie):
		return &apierr.Error{Code: apierr.CodeUpstream, Upstream: model.Name, Cause: err,
			Message: "the model's answer did not have the required shape, twice; nothing was charged"}
	}
	return err
}

// Usage is the model usage an answer reports.
type Usage struct {
	Model            string `json:"model"`
	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
	TotalTokens      int    `json:"total_tokens"`
	Calls            int    `json:"calls"`
}

func usageOf(res *model.Result) Usage {
	return Usage{Model: res.Model, PromptTokens: res.Usage.PromptTokens, CompletionTokens: res.Usage.CompletionTokens,
		TotalTokens: res.Usage.TotalTokens, Calls: res.Calls}
}

func since(t time.Time) int64 { return time.Since(t).Milliseconds() }

func unavailable(what string, err error) error {
	return &apierr.Error{Code: apierr.CodeUnavailable, Message: what + " is not available right now: " + err.Error(), Cause: err}
}

func apierrMessage(err error) string {
	if ae := apierr.Known(err); ae != nil {
		return ae.Message
	}
	return err.Error()
}

func pluralf(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf(one, n)
	}
	return fmt.Sprintf(many, n)
}
