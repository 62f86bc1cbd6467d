package llm

import (
	"context"
	"time"

	"github.com/peage/appliance/api/catalog"
	model "github.com/peage/appliance/api/upstream/llm"
)

// Completion is the answer of /v1/llm and /v1/llm/pro.
type Completion struct {
	Completion   string `json:"completion"`
	FinishReason string `json:"finish_reason"`
	// Truncated says the completion stopped at max_tokens: it is what the model wrote, cut.
	Truncated bool  `json:"truncated"`
	MaxTokens int   `json:"max_tokens"`
	Usage     Usage `json:"usage"`
	LatencyMS int64 `json:"latency_ms"`
}

// completion serves one route class with its output limit (max_tokens above it is refused
// by the catalog, 400 before any 402).
func (r *Routes) completion(class model.Class, limit int) catalog.Handler {
	return func(ctx context.Context, req *catalog.Request) (any, error) {
		start := time.Now()
		maxTokens := limit
		if req.Args.Has("max_tokens") {
			maxTokens = int(req.Args.Int("max_tokens"))
		}
		var msgs []model.Message
		if s := req.Args.Str("system"); s != "" {
			msgs = append(msgs, model.Message{Role: "system", Content: s})
		}
		msgs = append(msgs, model.Message{Role: "user", Content: req.Args.Str("prompt")})
		res, err := r.m.Complete(ctx, model.Request{Class: class, Messages: msgs, MaxTokens: maxTokens})
		if err != nil {
			return nil, modelError(err)
		}
		return Completion{Completion: res.Text, FinishReason: res.FinishReason, Truncated: res.Truncated(), MaxTokens: maxTokens,
			Usage: usageOf(res), LatencyMS: since(start)}, nil
	}
}
