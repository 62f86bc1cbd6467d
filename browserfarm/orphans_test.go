package browserfarm_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/peage/appliance/browserfarm/farmtest"
)

const helperEnv = "PEAGE_FARM_HELPER"

// helperFarmProcess is the test binary re-run as a farm owner that will be killed with -9.
func helperFarmProcess() int {
	e, err := farmtest.Start(1, 1)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println("up", e.Farm.BrowserPIDs()[0])
	time.Sleep(time.Minute)
	return 0
}

// running reports whether pid exists and is not a zombie.
func running(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

// TestOrphanSweep: a farm process killed with -9 leaves its Chromium running; the next farm
// to start kills it and removes its profile.
func TestOrphanSweep(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Sscanf(line, "up %d", &pid); err != nil {
		t.Fatalf("helper said %q", line)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if !running(pid) {
		t.Fatal("the orphan browser did not survive its owner; nothing to sweep")
	}
	next, err := farmtest.Start(1, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	// SIGKILL is delivered at once, but the exit is the kernel's to finish.
	for deadline := time.Now().Add(5 * time.Second); running(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			t.Fatal("the orphan browser is still running after the next farm started")
		}
	}
	left, _ := filepath.Glob(filepath.Join(os.TempDir(), fmt.Sprintf("peage-chromium-%d-*", cmd.Process.Pid)))
	if len(left) != 0 {
		t.Errorf("orphan profiles left: %v", left)
	}
}
