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

// groupAlive lists the processes of process group pgid that still run (zombies aside).
func groupAlive(pgid int) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
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
		// After the command come: state ppid pgrp ...
		if len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestNoOrphanOnCrash: a farm process killed with -9 (a crash, an OOM kill) takes its
// Chromium, renderers and zygote included, with it; the profile it could not remove is
// removed by the next farm to start.
func TestNoOrphanOnCrash(t *testing.T) {
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
	if n := len(groupAlive(pid)); n < 2 {
		t.Fatalf("the browser's group holds %d processes; a browser with renderers was expected", n)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	// SIGKILL is delivered at once, but the exits are the kernel's to finish.
	for deadline := time.Now().Add(10 * time.Second); len(groupAlive(pid)) > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			left := groupAlive(pid)
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			t.Fatalf("processes %v of the browser outlived the farm killed with -9", left)
		}
	}
	profiles := filepath.Join(os.TempDir(), fmt.Sprintf("peage-chromium-%d-*", cmd.Process.Pid))
	if left, _ := filepath.Glob(profiles); len(left) == 0 {
		t.Fatal("the killed farm left no profile; nothing to sweep")
	}
	next, err := farmtest.Start(1, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	if left, _ := filepath.Glob(profiles); len(left) != 0 {
		t.Errorf("orphan profiles left: %v", left)
	}
}
