package web_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/routes/web"
	"github.com/peage/appliance/browserfarm"
)

// taskRecorder is a farm that records the tasks it is given and runs none.
type taskRecorder struct {
	mu    sync.Mutex
	tasks []browserfarm.Task
}

func (f *taskRecorder) Do(_ context.Context, t browserfarm.Task) (*browserfarm.Result, error) {
	f.mu.Lock()
	f.tasks = append(f.tasks, t)
	f.mu.Unlock()
	return nil, apierr.Unavailable("recorded, not run")
}

func (f *taskRecorder) Ready() error { return nil }

// TestFreeCallsAskForFreeBrowserJobs: the job of a call nobody pays for is marked free, so
// the farm holds it to the free share; a paid call's job is not.
func TestFreeCallsAskForFreeBrowserJobs(t *testing.T) {
	cases := []struct {
		path string
		free bool
	}{
		{"/free/extract", true},
		{"/v1/extract", false},
		{"/v1/screenshot", false},
	}
	farm := &taskRecorder{}
	c, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	if err := web.With(farm, nil).Bind(c); err != nil {
		t.Fatal(err)
	}
	// The recording gate runs paid routes' work without a payment, as a paid call would.
	h := apitest.Start(t, c, apitest.Options{CheckShapes: true, Gate: &apitest.RecordingGate{}})
	for i, tc := range cases {
		resp, err := h.Client.Post(h.BaseURL+tc.path, "application/json", strings.NewReader(`{"url":"https://example.com/"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("%s: status %d, want the recorder's 503", tc.path, resp.StatusCode)
		}
		farm.mu.Lock()
		got := farm.tasks[i]
		farm.mu.Unlock()
		if got.Free != tc.free {
			t.Errorf("%s: task free=%v, want %v", tc.path, got.Free, tc.free)
		}
	}
}
