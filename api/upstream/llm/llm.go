// Package llm is the language-model connector: one client speaking the OpenAI-compatible
// chat-completions wire format, so a hosted provider, a router, or a local llama.cpp, Ollama
// or vLLM server all work by configuration (upstream.override.llm.base_url and key or
// key_file; [llm] names the model of each route class). Structured answers ask the server for
// a JSON schema when it supports one and are always parsed and validated here, with one retry
// that tells the model what was wrong: local models half-honour schemas more often than not.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
)

// Name is the registry name of the model upstream.
const Name = "llm"

// Output token limits of the routes (spec: llm 2000, llm/pro 8000).
const (
	MaxTokensFast   = 2000
	MaxTokensStrong = 8000
)

// Config is the [llm] section: which model serves which class of route, and what the server
// supports. The server itself (base URL, key) is upstream.override.llm.
//
//	[llm]
//	model = "gpt-4o-mini"      # /v1/llm, /v1/classify, /v1/guard's review, extract-structured
//	model_pro = "gpt-4o"       # /v1/llm/pro, /v1/solve, /v1/agent/task, understand, briefs
//	structured = "json_schema" # or "json_object" (JSON mode) or "none"
//	token_field = "max_tokens" # or "max_completion_tokens" (newer OpenAI models)
type Config struct {
	Model      string `toml:"model" doc:"model of the cheap routes (/v1/llm, /v1/classify, /v1/extract-structured, guard review)"`
	ModelPro   string `toml:"model_pro" doc:"model of the strong routes (/v1/llm/pro, /v1/solve, /v1/agent/task, /v1/understand, briefs)"`
	Structured string `toml:"structured" doc:"json_schema (the server enforces a schema), json_object (JSON mode) or none; answers are validated against the schema in every case"`
	TokenField string `toml:"token_field" doc:"name of the output-token limit field: max_tokens, or max_completion_tokens for newer OpenAI models"`
}

// DefaultConfig names OpenAI's models; a local server's operator names its own.
func DefaultConfig() Config {
	return Config{Model: "gpt-4o-mini", ModelPro: "gpt-4o", Structured: "json_schema", TokenField: "max_tokens"}
}

// Validate names the key of a wrong value.
func (c Config) Validate() error {
	switch c.Structured {
	case "json_schema", "json_object", "none":
	default:
		return fmt.Errorf("llm.structured: must be json_schema, json_object or none")
	}
	switch c.TokenField {
	case "max_tokens", "max_completion_tokens":
	default:
		return fmt.Errorf("llm.token_field: must be max_tokens or max_completion_tokens")
	}
	return nil
}

// Class is which model a call uses.
type Class uint8

const (
	Fast   Class = iota // the cheap model
	Strong              // the strong model
)

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Schema asks for a JSON answer of this shape (a JSON Schema document, the subset Validate
// knows). Strict servers need additionalProperties false and every property required.
type Schema struct {
	Name string
	Doc  map[string]any
}

// Request is one completion.
type Request struct {
	Class     Class
	Messages  []Message
	MaxTokens int
	Schema    *Schema // nil for free text
}

// Usage is the token count the server reported, summed over the calls of one completion.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func (u *Usage) add(o Usage) {
	u.PromptTokens += o.PromptTokens
	u.CompletionTokens += o.CompletionTokens
	u.TotalTokens += o.TotalTokens
}

// Result is a completion.
type Result struct {
	Text         string // the answer's text (the JSON text for a structured answer)
	JSON         any    // the decoded, validated answer of a structured request
	FinishReason string // stop, length, tool_calls, content_filter
	Model        string // the model the server says answered
	Usage        Usage
	Calls        int // 2 when the validated fallback had to ask again
}

// Truncated reports whether the answer stopped at the output token limit.
func (r *Result) Truncated() bool { return r.FinishReason == "length" }

// RefusalError is the model declining to answer (message.refusal set).
type RefusalError struct{ Text string }

func (e *RefusalError) Error() string { return "the model refused: " + e.Text }

// ErrTruncated is a structured answer cut by the output token limit.
var ErrTruncated = errors.New("the model's structured answer was cut at the output token limit")

// InvalidError is a structured answer that failed validation twice.
type InvalidError struct{ Err error }

func (e *InvalidError) Error() string {
	return "the model's answer does not match the schema: " + e.Err.Error()
}
func (e *InvalidError) Unwrap() error { return e.Err }

// Client calls the configured server.
type Client struct {
	h   *httpc.Client
	cfg Config
}

// New builds the client over the llm upstream's httpc client.
func New(h *httpc.Client, cfg Config) *Client { return &Client{h: h, cfg: cfg} }

// Ready is nil once the server's key and both models are configured.
func (c *Client) Ready() error {
	if c == nil {
		return fmt.Errorf("%s: %w", Name, upstream.ErrNotConfigured)
	}
	if err := c.h.Ready(); err != nil {
		return err
	}
	if c.cfg.Model == "" || c.cfg.ModelPro == "" {
		return fmt.Errorf("%s: %w (set llm.model and llm.model_pro)", Name, upstream.ErrNotConfigured)
	}
	return nil
}

// ModelOf is the configured model of a class.
func (c *Client) ModelOf(k Class) string {
	if k == Strong {
		return c.cfg.ModelPro
	}
	return c.cfg.Model
}

// wire types of POST /chat/completions.
type chatRequest struct {
	Model               string    `json:"model"`
	Messages            []Message `json:"messages"`
	Temperature         *float64  `json:"temperature,omitempty"`
	MaxTokens           int       `json:"max_tokens,omitempty"`
	MaxCompletionTokens int       `json:"max_completion_tokens,omitempty"`
	ResponseFormat      any       `json:"response_format,omitempty"`
}

type chatResponse struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content   *string           `json:"content"`
			Refusal   *string           `json:"refusal"`
			ToolCalls []json.RawMessage `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage Usage `json:"usage"`
}

// Complete runs one completion; a structured one is validated and asked again once.
func (c *Client) Complete(ctx context.Context, r Request) (*Result, error) {
	if r.Schema == nil {
		res, err := c.call(ctx, r, r.Messages)
		if err != nil {
			return nil, err
		}
		return res, nil
	}
	msgs := c.withSchemaInstructions(r)
	var total Usage
	for attempt := 1; ; attempt++ {
		res, err := c.call(ctx, r, msgs)
		if err != nil {
			return nil, err
		}
		total.add(res.Usage)
		res.Usage, res.Calls = total, attempt
		if res.Truncated() {
			return res, ErrTruncated
		}
		v, verr := ParseJSON(res.Text)
		if verr == nil {
			verr = Validate(r.Schema.Doc, v)
		}
		if verr == nil {
			res.JSON = v
			return res, nil
		}
		if attempt == 2 {
			return res, &InvalidError{Err: verr}
		}
		msgs = append(append([]Message(nil), msgs...),
			Message{Role: "assistant", Content: res.Text},
			Message{Role: "user", Content: "That answer is not valid: " + verr.Error() + ". Answer again with only the JSON value matching the schema."})
	}
}

// withSchemaInstructions states the schema in the prompt unless the server enforces it.
func (c *Client) withSchemaInstructions(r Request) []Message {
	if c.cfg.Structured == "json_schema" {
		return r.Messages
	}
	doc, _ := json.Marshal(r.Schema.Doc)
	note := Message{Role: "system", Content: "Answer with one JSON value only, no prose and no code fence, matching this JSON Schema: " + string(doc)}
	return append([]Message{note}, r.Messages...)
}

func (c *Client) call(ctx context.Context, r Request, msgs []Message) (*Result, error) {
	body := chatRequest{Model: c.ModelOf(r.Class), Messages: msgs}
	if c.cfg.TokenField == "max_completion_tokens" {
		body.MaxCompletionTokens = r.MaxTokens
	} else {
		body.MaxTokens = r.MaxTokens
	}
	if r.Schema != nil {
		zero := 0.0
		body.Temperature = &zero
		switch c.cfg.Structured {
		case "json_schema":
			body.ResponseFormat = map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": r.Schema.Name, "strict": true, "schema": r.Schema.Doc}}
		case "json_object":
			body.ResponseFormat = map[string]any{"type": "json_object"}
		}
	}
	var out chatResponse
	if err := c.h.PostJSON(ctx, "/chat/completions", body, &out); err != nil {
		return nil, err
	}
	if len(out.Choices) == 0 {
		return nil, upstream.BadAnswer(Name, "POST /chat/completions", 200, "choices", errors.New("no choice in the answer"))
	}
	ch := out.Choices[0]
	if ch.Message.Refusal != nil && *ch.Message.Refusal != "" {
		return nil, &RefusalError{Text: *ch.Message.Refusal}
	}
	res := &Result{FinishReason: ch.FinishReason, Model: out.Model, Usage: out.Usage, Calls: 1}
	if ch.Message.Content != nil {
		res.Text = *ch.Message.Content
	}
	if res.Text == "" && len(ch.Message.ToolCalls) == 0 && ch.FinishReason != "length" {
		return nil, upstream.BadAnswer(Name, "POST /chat/completions", 200, "choices[0].message.content", errors.New("empty answer"))
	}
	return res, nil
}

// ParseJSON reads the JSON value of an answer, tolerating a code fence or prose around it.
func ParseJSON(text string) (any, error) {
	s := strings.TrimSpace(text)
	if strings.HasPrefix(s, "```") {
		s = strings.TrimPrefix(s, "```json")
		s = strings.TrimPrefix(s, "```")
		s = strings.TrimSuffix(strings.TrimSpace(s), "```")
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err == nil {
		return v, nil
	}
	if i, j := strings.IndexByte(s, '{'), strings.LastIndexByte(s, '}'); i >= 0 && j > i {
		if err := json.Unmarshal([]byte(s[i:j+1]), &v); err == nil {
			return v, nil
		}
	}
	return nil, errors.New("the answer is not JSON")
}
