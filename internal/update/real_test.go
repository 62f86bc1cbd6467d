package update

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/peage/appliance/internal/freeport"
	"github.com/peage/appliance/internal/testenv"
)

// TestRealAppliance runs the update path with the appliance itself as the unit (`appliance
// dev`, its whole state in one directory): version N, then N+1 linked with another version
// string, then a release that is not an appliance at all (a build mistake: it exits at
// once), which is rolled back to N+1; every version opens the state the others left.
func TestRealAppliance(t *testing.T) {
	testenv.Needs(t, testenv.Builds) // the appliance twice, about a minute
	bins := t.TempDir()
	for _, v := range []string{"e2e-1", "e2e-2"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(bins, "appliance_"+v), "-ldflags",
			"-X github.com/peage/appliance/internal/version.Version="+v, "../../appliance/cmd/appliance")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building %s: %v\n%s", v, err, out)
		}
		binaries[v] = filepath.Join(bins, "appliance_"+v)
	}
	binaries["e2e-3-wrong-binary"] = binaries["9-exits"]
	t.Cleanup(func() {
		delete(binaries, "e2e-1")
		delete(binaries, "e2e-2")
		delete(binaries, "e2e-3-wrong-binary")
	})

	b := newBox(t)
	b.sup.args = []string{"dev", "--api-addr", freeport.Addr(t), "--admin-addr", b.addr,
		"--proxy-addr", freeport.Addr(t), "--state-dir", b.state}
	b.sup.env = []string{"PEAGE_LOG_LEVEL=warn"}
	gate := b.gate()
	gate.Bound, gate.Hold = 90*time.Second, 3*time.Second
	u := b.updater(nil)
	u.Gate = gate

	rel, err := Verify(b.release("e2e-1"), "", b.keys)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := u.Apply(context.Background(), rel); err != nil || out.Result != ResultInstalled {
		t.Fatalf("installing e2e-1 on an empty root: %+v, %v", out, err)
	}
	stateFiles := func() map[string]bool {
		m := map[string]bool{}
		entries, _ := os.ReadDir(b.state)
		for _, e := range entries {
			m[e.Name()] = true
		}
		return m
	}
	before := stateFiles()
	if len(before) == 0 {
		t.Fatal("appliance dev left no state")
	}
	for _, step := range []struct {
		v       string
		result  Result
		runsNow string
	}{
		{"e2e-2", ResultInstalled, "e2e-2"},
		{"e2e-3-wrong-binary", ResultRolledBack, "e2e-2"},
	} {
		rel, err := Verify(b.release(step.v), "", b.keys)
		if err != nil {
			t.Fatal(err)
		}
		out, err := u.Apply(context.Background(), rel)
		var rb *RolledBackError
		if out.Result != step.result || (err != nil && !errors.As(err, &rb)) {
			t.Fatalf("apply %s: %+v, %v", step.v, out, err)
		}
		r, err := HTTPHealth{URL: "http://" + b.addr + "/healthz"}.Check(context.Background())
		if err != nil || r.Status != "ok" || !r.Runs(step.runsNow) {
			t.Fatalf("after %s: %+v, %v; want %s healthy", step.v, r, err, step.runsNow)
		}
		for name := range before {
			if !stateFiles()[name] {
				t.Errorf("after %s: state file %s is gone", step.v, name)
			}
		}
	}
}
