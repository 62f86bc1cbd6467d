package llm

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	model "github.com/peage/appliance/api/upstream/llm"
)

// Classification is the answer of /v1/classify, the spec's classification result: results
// holds the labelled messages only, each label one of the supplied ones (never null); the
// others are counted in unlabeled and listed, with the reason, in unlabeled_messages.
type Classification struct {
	Results []Labelled `json:"results"`
	// Unlabeled counts the messages left without a label: the model gave none, or gave one
	// that is not in the supplied list (never passed on).
	Unlabeled         int            `json:"unlabeled"`
	UnlabeledMessages []Unlabelled   `json:"unlabeled_messages"`
	Counts            map[string]int `json:"counts"` // messages per supplied label
	Labels            []string       `json:"labels"`
	Usage             Usage          `json:"usage"`
	LatencyMS         int64          `json:"latency_ms"`
}

// Labelled is one message's label.
type Labelled struct {
	Index      int     `json:"index"`
	Label      string  `json:"label"`
	Confidence float64 `json:"confidence"`
}

// Unlabelled is a message left without a label, and why.
type Unlabelled struct {
	Index  int    `json:"index"`
	Reason string `json:"reason"`
}

var classifySchema = &model.Schema{Name: "classification", Doc: map[string]any{
	"type": "object", "additionalProperties": false, "required": []any{"results"},
	"properties": map[string]any{"results": map[string]any{"type": "array", "items": map[string]any{
		"type": "object", "additionalProperties": false, "required": []any{"index", "label", "confidence"},
		"properties": map[string]any{
			"index":      map[string]any{"type": "integer", "minimum": 0.0},
			"label":      map[string]any{"type": "string"},
			"confidence": map[string]any{"type": "number", "minimum": 0.0, "maximum": 1.0},
		}}}}}}

func (r *Routes) classify(ctx context.Context, req *catalog.Request) (any, error) {
	start := time.Now()
	msgs, labels := req.Args.List("messages"), req.Args.List("labels")
	canon := map[string]string{} // lower-case → as supplied
	for _, l := range labels {
		k := strings.ToLower(strings.TrimSpace(l))
		if k == "" {
			return nil, apierr.BadParam("labels", "labels must not be empty strings")
		}
		if _, dup := canon[k]; dup {
			return nil, apierr.BadParam("labels", "labels lists %q twice", l)
		}
		canon[k] = l
	}
	var b strings.Builder
	b.WriteString("Labels (use one of these exactly): ")
	for i, l := range labels {
		if i > 0 {
			b.WriteString(" | ")
		}
		b.WriteString(l)
	}
	b.WriteString("\n\nMessages:\n")
	for i, m := range msgs {
		fmt.Fprintf(&b, "[%d] %s\n", i, strings.ReplaceAll(m, "\n", " "))
	}
	system := "You label messages. Give each message exactly one label from the list, by its index, with your confidence between 0 and 1. " +
		"If no label fits a message, answer the label \"none\". Answer with JSON only."
	if ins := req.Args.Str("instructions"); ins != "" {
		system += "\nThe caller's guidance: " + ins
	}
	res, err := r.m.Complete(ctx, model.Request{Class: model.Fast, MaxTokens: 60 + 40*len(msgs), Schema: classifySchema,
		Messages: []model.Message{{Role: "system", Content: system}, {Role: "user", Content: b.String()}}})
	if err != nil {
		return nil, modelError(err)
	}
	out := Classification{Results: []Labelled{}, UnlabeledMessages: []Unlabelled{}, Counts: map[string]int{}, Labels: labels, Usage: usageOf(res)}
	given := make([]*Labelled, len(msgs))
	why := make([]string, len(msgs))
	for _, it := range res.JSON.(map[string]any)["results"].([]any) {
		o := it.(map[string]any)
		i := int(o["index"].(float64))
		if i < 0 || i >= len(msgs) || given[i] != nil || why[i] != "" {
			continue // one label per message: the first answer for an index stands
		}
		answer, _ := o["label"].(string)
		label, ok := canon[strings.ToLower(strings.TrimSpace(answer))]
		if !ok {
			why[i] = fmt.Sprintf("the model's label %q is not in the supplied list", answer)
			continue
		}
		given[i] = &Labelled{Index: i, Label: label, Confidence: o["confidence"].(float64)}
	}
	for i, l := range given {
		switch {
		case l != nil:
			out.Results = append(out.Results, *l)
			out.Counts[l.Label]++
		default:
			out.Unlabeled++
			out.UnlabeledMessages = append(out.UnlabeledMessages, Unlabelled{Index: i, Reason: orDefault(why[i], "the model gave no label")})
		}
	}
	out.LatencyMS = since(start)
	return out, nil
}
