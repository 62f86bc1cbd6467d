package browserfarm_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/browserfarm"
	"github.com/peage/appliance/browserfarm/farmerr"
	"github.com/peage/appliance/browserfarm/farmtest"
)

// TestSlowFirstStart: on a machine where Chromium takes longer to start than the launch
// budget (a box at boot, an emulated guest), the pool still starts: it answers "starting"
// until a browser is up, lengthens the budget after each failed start, then serves.
func TestSlowFirstStart(t *testing.T) {
	slow := filepath.Join(t.TempDir(), "slow-chromium")
	script := "#!/bin/sh\nsleep 1.5\nexec " + browserfarm.DefaultConfig().Chromium + " \"$@\"\n"
	if err := os.WriteFile(slow, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	slowEnv, err := farmtest.StartTuned(1, 4, func(c *browserfarm.Config) {
		c.Chromium = slow
		c.LaunchTimeout = time.Second // 1 s: too short; then 2, 4, 8, 16 s
	})
	if err != nil {
		t.Fatalf("a pool whose browser is only slow to start must not fail to start: %v", err)
	}
	defer slowEnv.Close()
	if err := slowEnv.Farm.Ready(); code(err) != farmerr.Unavailable || !strings.Contains(err.Error(), "starting") {
		t.Fatalf("before any browser is up the pool must answer 503 starting, got %v", err)
	}
	deadline := time.Now().Add(120 * time.Second)
	for slowEnv.Farm.Ready() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("the pool never started; stats %+v", slowEnv.Farm.Stats())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if fails := slowEnv.Farm.Stats().LaunchFails; fails < 1 {
		t.Errorf("the 1 s budget should have failed, launch_fails=%d", fails)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := slowEnv.Farm.Do(ctx, browserfarm.Task{URL: slowEnv.URL("/short")})
	if err != nil {
		t.Fatalf("a job on the late browser: %v", err)
	}
	if res.Status != 200 {
		t.Errorf("status %d", res.Status)
	}
}

// TestMissingChromium: a pool without its browser binary fails at start, naming it, instead
// of retrying for ever.
func TestMissingChromium(t *testing.T) {
	_, err := farmtest.StartTuned(1, 4, func(c *browserfarm.Config) {
		c.Chromium = filepath.Join(t.TempDir(), "no-chromium")
	})
	if err == nil || !strings.Contains(err.Error(), "no-chromium") {
		t.Fatalf("want a start error naming the missing binary, got %v", err)
	}
}
