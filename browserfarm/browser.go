package browserfarm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/launcher"
	"github.com/go-rod/rod/lib/proto"
)

// instance is one running Chromium: its process group, profile and CDP connection.
type instance struct {
	browser *rod.Browser
	pid     int
	dir     string
	started time.Time
	jobs    int
	// exited is closed once the process has exited and its profile is removed, or the CDP
	// connection dropped; either way the instance is unusable.
	exited    chan struct{}
	gone      chan struct{} // closed once the process has exited and its profile is removed
	exitOnce  sync.Once
	cancel    context.CancelFunc
	connected atomic.Bool
	// spare is the next job's tab, opened while the worker was idle; only the slot's worker
	// touches it, as it does ua and uaMajor (the fingerprint derived once per browser).
	spare       *tab
	ua, uaMajor string
}

func (in *instance) markDead() { in.exitOnce.Do(func() { close(in.exited) }) }

// waitGone waits for the process to be reaped and its profile removed, at most d.
func (in *instance) waitGone(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-in.gone:
	case <-t.C:
	}
}

func (in *instance) dead() bool {
	select {
	case <-in.exited:
		return true
	default:
		return false
	}
}

// kill ends the whole process group (renderers, zygote, crashpad included). The launch's
// own goroutine waits on the main process, so it is reaped; the children die with the group.
func (in *instance) kill() {
	if in.pid > 0 {
		_ = syscall.Kill(-in.pid, syscall.SIGKILL)
	}
	if in.cancel != nil {
		in.cancel()
	}
}

// startTied starts cmd in a process group of its own (so kill ends its renderers, zygote and
// crashpad too) that the kernel kills when the farm's process dies, whatever way it dies
// (panic, kill -9): in dev as under systemd, no browser outlives the process that drove it.
func startTied(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	done := make(chan error, 1)
	forker() <- forkRequest{cmd: cmd, done: done}
	return <-done
}

type forkRequest struct {
	cmd  *exec.Cmd
	done chan error
}

// forker is the one OS thread that starts browsers. The parent-death signal fires when the
// thread that forked the child ends, not the process, and Go ends a thread whose goroutine
// exits locked to it: a browser started from an ordinary goroutine could be killed under a
// living farm. This goroutine locks its thread and never returns, so the thread lives
// exactly as long as the process.
var forker = sync.OnceValue(func() chan forkRequest {
	reqs := make(chan forkRequest)
	go func() {
		runtime.LockOSThread()
		for r := range reqs {
			r.done <- r.cmd.Start()
		}
	}()
	return reqs
})

// errSlowStart marks a start that ran out of its budget: the installation works, the machine
// is only slow, so the farm keeps trying with a longer budget instead of giving up.
var errSlowStart = errors.New("chromium did not start within its budget")

// launch starts one Chromium behind the given proxy with a fresh profile directory, within
// the given budget.
func launch(ctx context.Context, cfg Config, proxyAddr string, budget time.Duration) (_ *instance, err error) {
	if _, err := os.Stat(cfg.Chromium); err != nil {
		return nil, fmt.Errorf("chromium not found at %s (run ops/setup.sh): %w", cfg.Chromium, err)
	}
	dir, err := os.MkdirTemp(cfg.TempDir, profilePrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, err
	}
	lctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	defer func() {
		if err != nil && ctx.Err() == nil && lctx.Err() != nil {
			err = fmt.Errorf("%w (%s): %w", errSlowStart, budget, err)
		}
	}()
	l := launcher.New().
		Leakless(false). // never extract a helper binary: Pdeathsig and process groups do its job
		UserDataDir(dir).
		HeadlessNew(true).
		NoSandbox(os.Geteuid() == 0).
		Delete("enable-automation").
		Set("disable-gpu").
		Set("disable-component-update").
		Set("disable-quic").
		Set("dns-prefetch-disable").
		Set("disable-domain-reliability").
		Set("no-default-browser-check").
		Set("mute-audio").
		Set("hide-scrollbars").
		Set("window-size", "1280,800").
		Set("lang", "fr-FR").
		Set("disable-blink-features", "AutomationControlled").
		Set("proxy-server", "http://"+proxyAddr).
		// Without this, Chromium sends localhost and link-local (169.254/16, the metadata
		// service) around the proxy.
		Set("proxy-bypass-list", "<-loopback>").
		Set("force-webrtc-ip-handling-policy", "disable_non_proxied_udp").
		Set("webrtc-ip-handling-policy", "disable_non_proxied_udp").
		Set("js-flags", "--max-old-space-size="+strconv.Itoa(cfg.JSHeapMB))
	// rod's launcher only lends its flags: it starts the process without a way to set its
	// parent-death signal, so the farm starts it itself.
	cmd := exec.Command(cfg.Chromium, l.FormatArgs()...)
	cmd.Env = chromiumEnv(os.Environ(), cfg.Fontconfig)
	parser := launcher.NewURLParser().Context(lctx)
	cmd.Stdout, cmd.Stderr = parser, parser
	if err := startTied(cmd); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("launch chromium: %w", err)
	}
	in := &instance{pid: cmd.Process.Pid, dir: dir, started: time.Now(), exited: make(chan struct{}), gone: make(chan struct{})}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait() // reaps the process
		close(exited)
		_ = os.RemoveAll(dir)
		in.markDead()
		close(in.gone)
	}()
	var u string
	select {
	case u = <-parser.URL:
		u, err = launcher.ResolveURL(u)
	case <-exited:
		err = parser.Err()
	case <-lctx.Done():
		err = lctx.Err()
	}
	if err != nil {
		in.kill()
		return nil, fmt.Errorf("launch chromium: %w", err)
	}
	// The connection lives as long as the instance: rod ties its websocket and event stream
	// to the browser's context, so it must not be the launch's short one. A stuck connect is
	// ended by killing the process when the launch budget runs out.
	ictx, icancel := context.WithCancel(context.Background())
	in.cancel = icancel
	stop := context.AfterFunc(lctx, func() {
		if !in.connected.Load() {
			in.kill()
		}
	})
	defer stop()
	b := rod.New().ControlURL(u).NoDefaultDevice().Context(ictx)
	if err := b.Connect(); err != nil {
		in.kill()
		return nil, fmt.Errorf("connect to chromium: %w", err)
	}
	in.connected.Store(true)
	in.browser = b
	go func() {
		// The event stream ends when the CDP connection drops, which is how a crashed or
		// killed browser first shows.
		for range b.Event() {
		}
		in.markDead()
	}()
	if _, err := (proto.BrowserGetVersion{}).Call(b.Context(lctx)); err != nil {
		in.kill()
		return nil, fmt.Errorf("chromium does not answer: %w", err)
	}
	return in, nil
}

// groupMemoryMB sums the proportional set size (PSS) of every process in the browser's
// process group: shared libraries count once across the group instead of once per process,
// which is what RSS would do.
func groupMemoryMB(pgid int) int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	totalKB := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		// After the command come: state ppid pgrp ...
		f := strings.Fields(s[i+1:])
		if len(f) < 3 {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g != pgid {
			continue
		}
		roll, err := os.ReadFile(filepath.Join("/proc", e.Name(), "smaps_rollup"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(roll), "\n") {
			if rest, ok := strings.CutPrefix(line, "Pss:"); ok {
				kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
				totalKB += kb
				break
			}
		}
	}
	return totalKB >> 10
}

// profilePrefix starts every profile directory's name, followed by the owning process's PID,
// so a later farm can tell a live sibling's browsers from orphans of a dead one.
const profilePrefix = "peage-chromium-"

// sweepOrphans removes the profiles that a farm process left behind when it died without
// closing its browsers (kill -9, a panic), and kills any browser still running of such a
// farm (one started by a build without the parent-death signal, or whose death signal
// could not be delivered): their profile directory names an owner PID that no longer runs.
// Browsers of live farms (tests in parallel) are left alone.
func sweepOrphans(tempDir string) (killed int) {
	prefix := filepath.Join(tempDir, profilePrefix)
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		for _, arg := range strings.Split(string(cmd), "\x00") {
			rest, ok := strings.CutPrefix(arg, "--user-data-dir="+prefix)
			if !ok {
				continue
			}
			owner, _ := strconv.Atoi(strings.SplitN(rest, "-", 2)[0])
			if owner > 0 && !alive(owner) {
				if pgid, err := syscall.Getpgid(pid); err == nil && pgid > 1 {
					_ = syscall.Kill(-pgid, syscall.SIGKILL)
				}
				_ = syscall.Kill(pid, syscall.SIGKILL)
				killed++
			}
			break
		}
	}
	dirs, _ := filepath.Glob(prefix + "*")
	for _, d := range dirs {
		owner, _ := strconv.Atoi(strings.SplitN(strings.TrimPrefix(d, prefix), "-", 2)[0])
		if owner > 0 && !alive(owner) {
			_ = os.RemoveAll(d)
		}
	}
	return killed
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
