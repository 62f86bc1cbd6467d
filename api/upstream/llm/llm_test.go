package llm_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/llm"
	"github.com/peage/appliance/api/upstream/llm/llmtest"
)

// personSchema is the schema of the recorded structured answer (chat_json_schema.request.json).
var personSchema = &llm.Schema{Name: "output", Doc: map[string]any{
	"type": "object", "additionalProperties": false, "required": []any{"name", "age", "hobbies"},
	"properties": map[string]any{"name": map[string]any{"type": "string"}, "age": map[string]any{"type": "integer"},
		"hobbies": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}}}}

var greetingSchema = &llm.Schema{Name: "greeting", Doc: map[string]any{
	"type": "object", "required": []any{"greeting"}, "properties": map[string]any{"greeting": map[string]any{"type": "string", "enum": []any{"hello"}}}}}

func user(s string) []llm.Message { return []llm.Message{{Role: "user", Content: s}} }

func TestComplete(t *testing.T) {
	cases := []struct {
		name       string
		structured string
		tokenField string
		req        llm.Request
		replies    []func(t *testing.T) llmtest.Reply
		check      func(t *testing.T, res *llm.Result, err error, bodies []map[string]any)
	}{
		{name: "plain answer with its usage", req: llm.Request{Messages: user("What is the capital of France?"), MaxTokens: 2000},
			replies: []func(*testing.T) llmtest.Reply{func(t *testing.T) llmtest.Reply { return llmtest.OK(t, "chat_basic") }},
			check: func(t *testing.T, res *llm.Result, err error, bodies []map[string]any) {
				if err != nil || res.Text != "The capital of France is Paris." || res.Truncated() {
					t.Fatalf("res %+v err %v", res, err)
				}
				if res.Usage != (llm.Usage{PromptTokens: 14, CompletionTokens: 7, TotalTokens: 21}) || res.Model != "gpt-4o-mini-2024-07-18" {
					t.Errorf("usage %+v model %s", res.Usage, res.Model)
				}
				if b := bodies[0]; b["model"] != "gpt-4o-mini" || b["max_tokens"] != 2000.0 || b["response_format"] != nil {
					t.Errorf("request %v", b)
				}
			}},
		{name: "a local Ollama server's answer (recorded: no refusal, logprobs or service tier fields)",
			req:     llm.Request{Messages: []llm.Message{{Role: "system", Content: "You are a helpful assistant."}, {Role: "user", Content: "Who are you?"}}, MaxTokens: 2000},
			replies: []func(*testing.T) llmtest.Reply{func(t *testing.T) llmtest.Reply { return llmtest.OK(t, "chat_ollama_llama3") }},
			check: func(t *testing.T, res *llm.Result, err error, bodies []map[string]any) {
				if err != nil || res.Truncated() || !strings.HasPrefix(res.Text, "Hello there! *adjusts glasses*") || !strings.HasSuffix(res.Text, "How may I assist you today?") {
					t.Fatalf("res %+v err %v", res, err)
				}
				if res.Usage != (llm.Usage{PromptTokens: 22, CompletionTokens: 73, TotalTokens: 95}) || res.Model != "llama3" {
					t.Errorf("usage %+v model %s", res.Usage, res.Model)
				}
				if msgs := bodies[0]["messages"].([]any); len(msgs) != 2 || msgs[0].(map[string]any)["role"] != "system" {
					t.Errorf("request %v", bodies[0])
				}
			}},
		{name: "strong class and max_completion_tokens", tokenField: "max_completion_tokens",
			req:     llm.Request{Class: llm.Strong, Messages: user("Write a long poem about the sea."), MaxTokens: 5},
			replies: []func(*testing.T) llmtest.Reply{func(t *testing.T) llmtest.Reply { return llmtest.OK(t, "chat_length") }},
			check: func(t *testing.T, res *llm.Result, err error, bodies []map[string]any) {
				if err != nil || !res.Truncated() || res.Text != "**Whispers of the" {
					t.Fatalf("res %+v err %v", res, err)
				}
				if b := bodies[0]; b["model"] != "gpt-4o" || b["max_completion_tokens"] != 5.0 || b["max_tokens"] != nil {
					t.Errorf("request %v", b)
				}
			}},
		{name: "json_schema enforced by the server", req: llm.Request{Messages: user("Generate a person who likes Ruby"), MaxTokens: 400, Schema: personSchema},
			replies: []func(*testing.T) llmtest.Reply{func(t *testing.T) llmtest.Reply { return llmtest.OK(t, "chat_json_schema") }},
			check: func(t *testing.T, res *llm.Result, err error, bodies []map[string]any) {
				if err != nil || res.JSON.(map[string]any)["name"] != "Alex Johnson" || res.Calls != 1 {
					t.Fatalf("res %+v err %v", res, err)
				}
				rf, _ := bodies[0]["response_format"].(map[string]any)
				js, _ := rf["json_schema"].(map[string]any)
				if rf["type"] != "json_schema" || js["strict"] != true || js["name"] != "output" || bodies[0]["temperature"] != 0.0 {
					t.Errorf("response_format %v", bodies[0])
				}
			}},
		{name: "json_object mode states the schema in the prompt", structured: "json_object",
			req:     llm.Request{Messages: user("Generate a JSON object with a key 'greeting' and value 'hello'."), MaxTokens: 100, Schema: greetingSchema},
			replies: []func(*testing.T) llmtest.Reply{func(t *testing.T) llmtest.Reply { return llmtest.OK(t, "chat_json_object") }},
			check: func(t *testing.T, res *llm.Result, err error, bodies []map[string]any) {
				if err != nil || res.JSON.(map[string]any)["greeting"] != "hello" {
					t.Fatalf("res %+v err %v", res, err)
				}
				msgs := bodies[0]["messages"].([]any)
				if rf := bodies[0]["response_format"].(map[string]any); rf["type"] != "json_object" || len(msgs) != 2 || msgs[0].(map[string]any)["role"] != "system" {
					t.Errorf("request %v", bodies[0])
				}
			}},
		{name: "an answer off the schema is asked again once (derived: greeting answered to the person schema)",
			req: llm.Request{Messages: user("Generate a person who likes Ruby"), MaxTokens: 400, Schema: personSchema},
			replies: []func(*testing.T) llmtest.Reply{func(t *testing.T) llmtest.Reply { return llmtest.OK(t, "chat_json_object") },
				func(t *testing.T) llmtest.Reply { return llmtest.OK(t, "chat_json_schema") }},
			check: func(t *testing.T, res *llm.Result, err error, bodies []map[string]any) {
				if err != nil || res.Calls != 2 || res.Usage.TotalTokens != 33+101 {
					t.Fatalf("res %+v err %v", res, err)
				}
				msgs := bodies[1]["messages"].([]any)
				if len(msgs) != 3 || msgs[2].(map[string]any)["role"] != "user" {
					t.Errorf("retry messages %v", msgs)
				}
			}},
		{name: "off the schema twice is an error", req: llm.Request{Messages: user("x"), MaxTokens: 400, Schema: personSchema},
			replies: []func(*testing.T) llmtest.Reply{func(t *testing.T) llmtest.Reply { return llmtest.OK(t, "chat_json_object") },
				func(t *testing.T) llmtest.Reply { return llmtest.OK(t, "chat_basic") }},
			check: func(t *testing.T, res *llm.Result, err error, _ []map[string]any) {
				var ie *llm.InvalidError
				if !errors.As(err, &ie) || res.Usage.TotalTokens != 33+21 {
					t.Fatalf("err %v res %+v", err, res)
				}
			}},
		{name: "a structured answer cut at the limit", req: llm.Request{Messages: user("x"), MaxTokens: 5, Schema: greetingSchema},
			replies: []func(*testing.T) llmtest.Reply{func(t *testing.T) llmtest.Reply { return llmtest.OK(t, "chat_length") }},
			check: func(t *testing.T, _ *llm.Result, err error, _ []map[string]any) {
				if !errors.Is(err, llm.ErrTruncated) {
					t.Fatalf("err %v", err)
				}
			}},
		{name: "refusal", req: llm.Request{Messages: user("x"), MaxTokens: 50},
			replies: []func(*testing.T) llmtest.Reply{func(t *testing.T) llmtest.Reply { return llmtest.OK(t, "chat_refusal") }},
			check: func(t *testing.T, _ *llm.Result, err error, _ []map[string]any) {
				var re *llm.RefusalError
				if !errors.As(err, &re) || re.Text != "I'm sorry, I cannot assist with that request." {
					t.Fatalf("err %v", err)
				}
			}},
		{name: "tool call answer", req: llm.Request{Messages: user("What is the weather in London?"), MaxTokens: 50},
			replies: []func(*testing.T) llmtest.Reply{func(t *testing.T) llmtest.Reply { return llmtest.OK(t, "chat_tool_call") }},
			check: func(t *testing.T, res *llm.Result, err error, _ []map[string]any) {
				if err != nil || res.FinishReason != "tool_calls" || res.Text != "" {
					t.Fatalf("res %+v err %v", res, err)
				}
			}},
		{name: "429 is an upstream failure, not retried", req: llm.Request{Messages: user("x"), MaxTokens: 50},
			replies: []func(*testing.T) llmtest.Reply{func(t *testing.T) llmtest.Reply {
				return llmtest.Reply{Status: http.StatusTooManyRequests, Body: llmtest.Recorded(t, "error_429")}
			}},
			check: func(t *testing.T, _ *llm.Result, err error, bodies []map[string]any) {
				if upstream.StatusOf(err) != 429 || len(bodies) != 1 {
					t.Fatalf("err %v calls %d", err, len(bodies))
				}
				if ae := apierr.From(err); ae.Status() != 502 {
					t.Errorf("mapped to %d", ae.Status())
				}
			}},
		{name: "timeout (derived: the recorded answer held past the deadline)", req: llm.Request{Messages: user("x"), MaxTokens: 50},
			replies: []func(*testing.T) llmtest.Reply{func(t *testing.T) llmtest.Reply {
				return llmtest.Reply{Body: llmtest.Recorded(t, "chat_basic"), Delay: time.Second}
			}},
			check: func(t *testing.T, _ *llm.Result, err error, _ []map[string]any) {
				var ue *upstream.Error
				if !errors.As(err, &ue) || !ue.Timeout() {
					t.Fatalf("err %v", err)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := llmtest.Config()
			if tc.structured != "" {
				cfg.Structured = tc.structured
			}
			if tc.tokenField != "" {
				cfg.TokenField = tc.tokenField
			}
			srv := llmtest.New(t, cfg)
			for _, r := range tc.replies {
				srv.Push(r(t))
			}
			h, err := httpc.New(srv.Spec(t, 300*time.Millisecond), httpc.Options{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := llm.New(h, cfg).Complete(context.Background(), tc.req)
			tc.check(t, res, err, srv.Bodies())
			if n := srv.Left(); n != 0 {
				t.Errorf("%d scripted replies not asked for", n)
			}
		})
	}
}

func TestReady(t *testing.T) {
	spec, _ := upstream.Lookup(llm.Name)
	h, err := httpc.New(spec, httpc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := llm.New(h, llm.DefaultConfig()).Ready(); !errors.Is(err, upstream.ErrNotConfigured) {
		t.Errorf("no key: %v", err)
	}
	spec.Key = "k"
	h, _ = httpc.New(spec, httpc.Options{})
	if err := llm.New(h, llm.Config{Model: "m"}).Ready(); !errors.Is(err, upstream.ErrNotConfigured) {
		t.Errorf("no pro model: %v", err)
	}
	if err := llm.New(h, llm.DefaultConfig()).Ready(); err != nil {
		t.Errorf("configured: %v", err)
	}
}

func TestValidate(t *testing.T) {
	s := map[string]any{"type": "object", "additionalProperties": false, "required": []any{"l"},
		"properties": map[string]any{"l": map[string]any{"type": "array", "maxItems": 2.0, "items": map[string]any{"type": []any{"integer", "null"}, "minimum": 0.0}}}}
	for _, tc := range []struct {
		in string
		ok bool
	}{{`{"l":[1,null]}`, true}, {`{"l":[1.5]}`, false}, {`{"l":[-1]}`, false}, {`{"l":[1,2,3]}`, false}, {`{}`, false}, {`{"l":[],"x":1}`, false}, {"```json\n{\"l\":[]}\n```", true}} {
		v, err := llm.ParseJSON(tc.in)
		if err == nil {
			err = llm.Validate(s, v)
		}
		if (err == nil) != tc.ok {
			t.Errorf("%s: err %v, want ok=%v", tc.in, err, tc.ok)
		}
	}
}
