package proxyd

import (
	"runtime"
	"strings"
	"testing"
)

func TestCopyPathChoice(t *testing.T) {
	for _, want := range []string{copySplice, copyBuffered} {
		if got, why := chooseCopyPath(want); got != want || why != "configured" {
			t.Errorf("%s: chose %s (%s)", want, got, why)
		}
	}
	got, why := chooseCopyPath(copyAuto)
	if got != copySplice && got != copyBuffered {
		t.Fatalf("auto chose %q", got)
	}
	if runtime.GOOS == "linux" && !strings.HasPrefix(why, "measured at start") {
		t.Errorf("auto on Linux: %s", why)
	}
	t.Logf("auto: %s (%s)", got, why)

	c := testConfig()
	c.CopyPath = "zero-copy"
	if err := c.validate(); err == nil || !strings.Contains(err.Error(), "copy_path") {
		t.Errorf("unknown copy path accepted: %v", err)
	}
}

// A server whose copy path is buffered gives its meters no splice window, whatever the window
// setting says, and says which path it uses.
func TestBufferedCopyPathHasNoWindow(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.CopyPath = copyBuffered })
	if e.s.window != 0 {
		t.Fatalf("window %d on the buffered path", e.s.window)
	}
	if st := e.s.Stats(); st.CopyPath != copyBuffered {
		t.Fatalf("stats copy path %q", st.CopyPath)
	}
}
