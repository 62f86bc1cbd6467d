package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/internal/fanout"
)

// TestPanickingSourceIsAFailedSource: a handler's source that panics in its own goroutine
// (which the edge's recover cannot see) is reported as a failed source in the answer, the
// call is served from the others, and the server keeps serving.
func TestPanickingSourceIsAFailedSource(t *testing.T) {
	type answer struct {
		SourcesAnswered []string        `json:"sources_answered"`
		SourcesFailed   []fanout.Source `json:"sources_failed"`
	}
	cat, err := catalog.New([]catalog.Entry{{Method: "GET", Path: "/v1/test/fan", Summary: "fan-out", Kind: catalog.Paid,
		Price: 1_000, Timeout: 10 * time.Second,
		Handler: func(ctx context.Context, _ *catalog.Request) (any, error) {
			outcomes, _ := (&fanout.Runner{}).Run(ctx,
				fanout.Call{Source: "steady", Run: func(context.Context) error { return nil }},
				fanout.Call{Source: "buggy", Run: func(context.Context) error { panic("a connector's bug") }})
			return answer{SourcesAnswered: fanout.AnsweredOf(outcomes), SourcesFailed: fanout.FailedOf(outcomes)}, nil
		}}})
	if err != nil {
		t.Fatal(err)
	}
	h := apitest.Start(t, cat, apitest.Options{Gate: &apitest.RecordingGate{}})
	for range 2 { // the second call shows the process survived the first's panic
		resp, b := call(t, h, "GET", "/v1/test/fan", map[string]any{"x": "1"})
		var a answer
		if err := json.Unmarshal(b, &a); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("= %d %s", resp.StatusCode, b)
		}
		if len(a.SourcesAnswered) != 1 || len(a.SourcesFailed) != 1 || a.SourcesFailed[0].Source != "buggy" ||
			a.SourcesFailed[0].Status != fanout.Failed || a.SourcesFailed[0].Error == nil {
			t.Errorf("answer %s: want steady answered, buggy failed with a reason", b)
		}
	}
}
