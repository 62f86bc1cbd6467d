package browserfarm_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/peage/appliance/browserfarm"
	"github.com/peage/appliance/browserfarm/farmerr"
	"github.com/peage/appliance/browserfarm/farmtest"
)

func errorsAs(err error, e **farmerr.Error) bool { return errors.As(err, e) }

func TestPageOutcomes(t *testing.T) {
	cases := []struct {
		name   string
		path   string
		code   farmerr.Kind // 0 = success
		status int
		ctype  string
		text   string
	}{
		{name: "slow_page_succeeds", path: "/slow", status: 200, ctype: "text/html", text: "Worth the wait."},
		{name: "target_404_is_reported", path: "/status/404", status: 404, ctype: "text/html", text: "Error 404"},
		{name: "target_500_is_reported", path: "/status/500", status: 500, ctype: "text/html", text: "Error 500"},
		{name: "target_cannot_fake_a_refusal", path: "/spoof-refusal", status: 200, ctype: "text/html", text: "Genuine page."},
		{name: "json_is_not_html", path: "/data.json", status: 200, ctype: "application/json", text: "inserted"},
		{name: "renderer_crash", path: "/crash", code: farmerr.PageFailed},
		{name: "enormous_page", path: "/huge", code: farmerr.TooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := do(t, browserfarm.Task{URL: env.URL(c.path)})
			if c.code != 0 {
				if code(err) != c.code {
					t.Fatalf("want kind %d, got %v", c.code, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != c.status || res.ContentType != c.ctype || !strings.Contains(res.Text, c.text) {
				t.Errorf("got status %d type %q text %q", res.Status, res.ContentType, res.Text)
			}
		})
	}
	// The crash took one tab down, not the farm.
	if _, err := do(t, browserfarm.Task{URL: env.URL("/short")}); err != nil {
		t.Fatalf("farm does not serve after a renderer crash: %v", err)
	}
}

// TestLoadNeverCompletes: a complete document whose load event never fires (a sub-resource
// hangs) is read once the load wait is spent, and says it was not complete.
func TestLoadNeverCompletes(t *testing.T) {
	res, err := do(t, browserfarm.Task{URL: env.URL("/stalled-load")})
	if err != nil {
		t.Fatal(err)
	}
	if res.LoadComplete || res.Status != 200 || !strings.Contains(res.Text, "Text before an image") {
		t.Errorf("load complete %v, status %d, text %q", res.LoadComplete, res.Status, res.Text)
	}
}

// TestNeverFinishes: a document that never ends and shows nothing fails with 504 at the
// call's deadline instead of hanging, and the browser serves the next job.
func TestNeverFinishes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	_, err := env.Farm.Do(ctx, browserfarm.Task{URL: env.URL("/hang")})
	var e *farmerr.Error
	if !errorsAs(err, &e) || e.Kind != farmerr.Timeout {
		t.Fatalf("want 504 timeout, got %v", err)
	}
	if !strings.Contains(e.Message, "stage") {
		t.Errorf("message does not name the stage: %q", e.Message)
	}
	if _, err := do(t, browserfarm.Task{URL: env.URL("/short")}); err != nil {
		t.Fatalf("next job failed: %v", err)
	}
}

func TestScreenshotAndPDF(t *testing.T) {
	res, err := do(t, browserfarm.Task{URL: env.URL("/tall"), Screenshot: &browserfarm.Screenshot{FullPage: true}, PDF: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(res.PNG), "\x89PNG\r\n\x1a\n") {
		t.Error("screenshot is not a PNG")
	}
	if res.PageHeight != 30000 || res.ShotHeight != browserfarm.DefaultConfig().ScreenshotMaxHeight {
		t.Errorf("page height %d, shot height %d", res.PageHeight, res.ShotHeight)
	}
	if !strings.HasPrefix(string(res.PDF), "%PDF-") {
		t.Error("pdf is not a PDF")
	}
}

// TestKilledBrowser: killing the browsers mid-job fails that job with 503, and the farm
// replaces them and serves the next jobs, leaving no zombie processes.
func TestKilledBrowser(t *testing.T) {
	restarts := env.Farm.Stats().Restarts
	errc := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, err := env.Farm.Do(ctx, browserfarm.Task{URL: env.URL("/wait")})
		errc <- err
	}()
	select {
	case <-env.Hooks.Waiting:
	case <-time.After(15 * time.Second):
		t.Fatal("the job never reached the page")
	}
	for _, pid := range env.Farm.BrowserPIDs() {
		if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	err := <-errc
	if code(err) != farmerr.Unavailable {
		t.Fatalf("the killed job should fail with 503, got %v", err)
	}
	for i := range 3 {
		if _, err := do(t, browserfarm.Task{URL: env.URL("/short")}); err != nil {
			t.Fatalf("job %d after the kill: %v", i, err)
		}
	}
	if env.Farm.Stats().Restarts <= restarts {
		t.Error("no restart was counted")
	}
	// The killed main processes are reaped by the launcher; poll briefly because the reap
	// runs on its own goroutine.
	deadline := time.Now().Add(10 * time.Second)
	for {
		z := zombies(t)
		if len(z) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("zombie children: %v", z)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func zombies(t *testing.T) []int {
	t.Helper()
	me := os.Getpid()
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[0] == "Z" && f[1] == strconv.Itoa(me) {
			out = append(out, pid)
		}
	}
	return out
}

// TestQueueFull: with one browser busy and one call waiting, the next call gets 429 with a
// Retry-After at once.
func TestQueueFull(t *testing.T) {
	small, err := farmtest.Start(1, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _, _ = small.Farm.Do(ctx, browserfarm.Task{URL: small.URL("/wait")}) }()
	<-small.Hooks.Waiting
	go func() { _, _ = small.Farm.Do(ctx, browserfarm.Task{URL: small.URL("/short")}) }()
	for small.Farm.Stats().QueueDepth != 1 {
		time.Sleep(10 * time.Millisecond)
	}
	_, err = small.Farm.Do(ctx, browserfarm.Task{URL: small.URL("/short")})
	var e *farmerr.Error
	if !errorsAs(err, &e) || e.Kind != farmerr.Busy || e.RetryAfter < time.Second {
		t.Fatalf("want 429 busy with Retry-After, got %v", err)
	}
	if g := small.Farm.Gauges(); g["rejected"] != 1 || g["queue_depth"] != 1 || g["jobs_running"] != 1 || g["browsers_up"] != 1 {
		t.Errorf("gauges: %v", g)
	}
}

// TestRecycle: a browser is retired after RecycleJobs jobs and replaced by a new process.
func TestRecycle(t *testing.T) {
	small, err := farmtest.StartTuned(1, 4, func(c *browserfarm.Config) { c.RecycleJobs = 2 })
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	first := small.Farm.BrowserPIDs()
	for i := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		_, err := small.Farm.Do(ctx, browserfarm.Task{URL: small.URL("/short")})
		cancel()
		if err != nil {
			t.Fatalf("job %d: %v", i, err)
		}
	}
	st := small.Farm.Stats()
	if st.Recycled != 1 || st.Restarts != 0 {
		t.Errorf("stats %+v", st)
	}
	if now := small.Farm.BrowserPIDs(); len(now) != 1 || now[0] == first[0] {
		t.Errorf("browser not replaced: %v then %v", first, now)
	}
}

// TestReadAtDeadline: a document that never ends but has rendered its text is read at the
// job's deadline, and says so, instead of failing.
func TestReadAtDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	res, err := env.Farm.Do(ctx, browserfarm.Task{URL: env.URL("/hang-partial"), ServerHTML: true})
	if err != nil {
		t.Fatalf("a page that rendered its article and never ended: %v", err)
	}
	if !res.ReadAtDeadline || res.LoadComplete || !strings.Contains(res.Text, "the ferries will berth at the south quay") {
		t.Errorf("read at deadline %v, load complete %v, text %q", res.ReadAtDeadline, res.LoadComplete, res.Text)
	}
	if res.ServerHTML != "" {
		t.Errorf("server HTML of a document still streaming: %q", res.ServerHTML)
	}
}
