// Package llmtest is a chat-completions fixture server for the tests of the model routes:
// every call must be POST /v1/chat/completions with the configured model and a bearer key,
// and is answered by the next scripted reply, built from the recorded answers of
// api/upstream/llm/testdata (see its PROVENANCE). A call with no reply left fails the test.
package llmtest

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/llm"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

// Reply is one scripted answer.
type Reply struct {
	Status int           // 0 means 200
	Body   []byte        // the answer's body
	Delay  time.Duration // held this long first (a timeout case)
}

// Server serves scripted replies and keeps the request bodies it received.
type Server struct {
	*upstreamtest.Server
	t       testing.TB
	mu      sync.Mutex
	replies []Reply
	bodies  []map[string]any
}

// New starts a server whose calls are checked against cfg's models.
func New(t testing.TB, cfg llm.Config) *Server {
	s := &Server{Server: upstreamtest.New(t), t: t}
	s.Expect("/v1/chat/completions", nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if r.Method != http.MethodPost {
			t.Errorf("llmtest: %s, want POST", r.Method)
		}
		if got := r.Header.Get("Authorization"); got != "Bearer test-key" {
			t.Errorf("llmtest: Authorization %q, want the bearer key", got)
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("llmtest: request body: %v", err)
		}
		if m, _ := body["model"].(string); m != cfg.Model && m != cfg.ModelPro {
			t.Errorf("llmtest: model %q is not a configured one", m)
		}
		if msgs, _ := body["messages"].([]any); len(msgs) == 0 {
			t.Errorf("llmtest: no messages")
		}
		s.mu.Lock()
		s.bodies = append(s.bodies, body)
		var rep Reply
		ok := len(s.replies) > 0
		if ok {
			rep, s.replies = s.replies[0], s.replies[1:]
		}
		s.mu.Unlock()
		if !ok {
			t.Errorf("llmtest: unexpected model call %d", len(s.Bodies()))
			http.Error(w, "no scripted reply", http.StatusTeapot)
			return
		}
		if rep.Delay > 0 {
			select {
			case <-time.After(rep.Delay):
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		if rep.Status != 0 {
			w.WriteHeader(rep.Status)
		}
		_, _ = w.Write(rep.Body)
	}))
	return s
}

// Push scripts the next replies.
func (s *Server) Push(r ...Reply) {
	s.mu.Lock()
	s.replies = append(s.replies, r...)
	s.mu.Unlock()
}

// Left is how many scripted replies were not asked for.
func (s *Server) Left() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.replies)
}

// Bodies are the request bodies received, in order.
func (s *Server) Bodies() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.bodies...)
}

// Spec is the llm upstream pointed at this server with a test key.
func (s *Server) Spec(t testing.TB, timeout time.Duration) upstream.Spec {
	spec := s.Server.Spec(t, llm.Name)
	if timeout > 0 {
		spec.Timeout = timeout
	}
	return spec
}

// Client is a model client of this server.
func (s *Server) Client(t testing.TB, cfg llm.Config) *llm.Client {
	h, err := httpc.New(s.Spec(t, 0), httpc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return llm.New(h, cfg)
}

// Recorded is a recorded answer of testdata/ by name ("chat_basic").
func Recorded(t testing.TB, name string) []byte {
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// OK answers with a recorded file.
func OK(t testing.TB, name string) Reply { return Reply{Body: Recorded(t, name)} }

// Content answers with the recorded chat_json_schema envelope (id, model, usage, finish
// reason as recorded) whose message content is replaced: derived from a recorded answer,
// for the route tests whose prompts no recording could have answered.
func Content(t testing.TB, content string) Reply {
	var env map[string]any
	if err := json.Unmarshal(Recorded(t, "chat_json_schema"), &env); err != nil {
		t.Fatal(err)
	}
	env["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"] = content
	b, _ := json.Marshal(env)
	return Reply{Body: b}
}

// JSON is Content with v marshalled.
func JSON(t testing.TB, v any) Reply {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return Content(t, string(b))
}

// Config is the configuration the tests use.
func Config() llm.Config {
	c := llm.DefaultConfig()
	c.Model, c.ModelPro = "gpt-4o-mini", "gpt-4o"
	return c
}
