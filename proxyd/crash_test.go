package proxyd

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/peage/appliance/proxyd/client"
)

// TestMain doubles as the crash test's child: with PROXYD_CHILD_DIR set, the test binary runs
// a proxyd on a journal in that directory until it is killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv("PROXYD_CHILD_DIR"); dir != "" {
		if err := runChild(dir); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const crashSlack = 4 << 20

func runChild(dir string) error {
	ctx := context.Background()
	st, err := OpenStateStore(dir, nil)
	if err != nil {
		return err
	}
	cfg := testConfig()
	target := os.Getenv("PROXYD_CHILD_TARGET")
	_, p, _ := net.SplitHostPort(target)
	port, _ := strconv.Atoi(p)
	cfg.Ports = []int{port}
	cfg.AllowEgress = []string{target}
	cfg.MeterSlackBytes = crashSlack
	cfg.AdminSocket = filepath.Join(dir, "admin.sock")
	s, err := New(ctx, cfg, Options{Store: st})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	aln, err := ListenAdmin(cfg.AdminSocket)
	if err != nil {
		return err
	}
	go func() { _ = s.ServeAdmin(ctx, aln) }()
	line := ln.Addr().String()
	if os.Getenv("PROXYD_CHILD_ISSUE") != "" {
		for i := 0; i < 2; i++ {
			key, _, err := s.Issue(ctx, 1)
			if err != nil {
				return err
			}
			line += " " + key
		}
	}
	fmt.Println(line)
	return s.Serve(ctx, ln)
}

type child struct {
	cmd  *exec.Cmd
	addr string
	keys []string
}

func startChild(t *testing.T, dir, target string, issue bool) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PROXYD_CHILD_DIR="+dir, "PROXYD_CHILD_TARGET="+target)
	if issue {
		cmd.Env = append(cmd.Env, "PROXYD_CHILD_ISSUE=1")
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	f := strings.Fields(line)
	return &child{cmd: cmd, addr: f[0], keys: f[1:]}
}

func (c *child) kill9(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = c.cmd.Wait()
}

// TestKill9KeepsPackagesAndMeters sells two packages, moves bytes through one, kills the
// process with SIGKILL and restarts it on the same journal: both packages are there, and the
// meter is never above what really passed and never more than the slack below it.
func TestKill9KeepsPackagesAndMeters(t *testing.T) {
	dir := t.TempDir()
	src := newByteServer(t)
	c := startChild(t, dir, src.addr, true)
	if len(c.keys) != 2 {
		t.Fatalf("child issued %v", c.keys)
	}
	e := &env{t: t, addr: c.addr}
	var truth int64
	for _, n := range []int64{7 << 20, 5<<20 + 3, 9 << 20, 1234567} {
		code, _, conn := e.connect(c.keys[0], src.addr)
		if code != 200 {
			t.Fatalf("CONNECT: %d", code)
		}
		sent, got := down(t, conn, n)
		if got != n {
			t.Fatalf("got %d of %d", got, n)
		}
		truth += sent + got
	}
	// Let the last tunnel's settle land before the kill (the client saw EOF first).
	adm := client.New(filepath.Join(dir, "admin.sock"))
	defer adm.Close()
	for i := 0; ; i++ {
		u, err := adm.Usage(context.Background(), c.keys[0])
		if err != nil {
			t.Fatal(err)
		}
		if u.Used == truth {
			break
		}
		if i > 500 {
			t.Fatalf("live meter %d, truth %d", u.Used, truth)
		}
		time.Sleep(5 * time.Millisecond)
	}
	c.kill9(t)

	c2 := startChild(t, dir, src.addr, false)
	adm2 := client.New(filepath.Join(dir, "admin.sock"))
	defer adm2.Close()
	u, err := adm2.Usage(context.Background(), c.keys[0])
	if err != nil {
		t.Fatalf("package lost: %v", err)
	}
	t.Logf("truth %d bytes, recovered meter %d (lag %d, bound %d)", truth, u.Used, truth-u.Used, crashSlack)
	if u.Used > truth || truth-u.Used > crashSlack {
		t.Fatalf("after kill -9 the meter says %d, truth %d (slack %d)", u.Used, truth, crashSlack)
	}
	if u2, err := adm2.Usage(context.Background(), c.keys[1]); err != nil || u2.Used != 0 || u2.State != "valid" {
		t.Fatalf("second package after kill -9: %+v %v", u2, err)
	}
	// The restarted proxy carries on from the recovered meter.
	e2 := &env{t: t, addr: c2.addr}
	code, _, conn := e2.connect(c.keys[0], src.addr)
	if code != 200 {
		t.Fatalf("CONNECT after restart: %d", code)
	}
	sent, got := down(t, conn, 1<<20)
	if got != 1<<20 {
		t.Fatalf("after restart got %d", got)
	}
	for i := 0; ; i++ {
		u2, _ := adm2.Usage(context.Background(), c.keys[0])
		if u2.Used == u.Used+sent+got {
			break
		}
		if i > 500 {
			t.Fatalf("meter after restart %d, want %d", u2.Used, u.Used+sent+got)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestKill9MidTransfer kills the proxy while four tunnels are moving bytes. Whatever was in
// flight, the recovered meter lies between what provably passed (what the clients received
// plus what the target read, less the slack) and what could at most have passed (what the
// target wrote plus what the clients sent).
func TestKill9MidTransfer(t *testing.T) {
	dir := t.TempDir()
	src := newByteServer(t)
	c := startChild(t, dir, src.addr, true)
	e := &env{t: t, addr: c.addr}
	const tunnels = 4
	var sent atomic.Int64
	var got atomic.Int64
	var started sync.WaitGroup
	var wg sync.WaitGroup
	for i := 0; i < tunnels; i++ {
		code, _, conn := e.connect(c.keys[0], src.addr)
		if code != 200 {
			t.Fatalf("CONNECT: %d", code)
		}
		started.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := "down 1000000000\n"
			if _, err := io.WriteString(conn, req); err == nil {
				sent.Add(int64(len(req)))
			}
			buf := make([]byte, 64<<10)
			var mine int64
			signalled := false
			for {
				n, err := conn.Read(buf)
				mine += int64(n)
				got.Add(int64(n))
				if !signalled && mine >= 3<<20 {
					started.Done()
					signalled = true
				}
				if err != nil {
					break
				}
			}
			if !signalled {
				started.Done()
			}
			_ = conn.Close()
		}()
	}
	started.Wait() // every tunnel has moved at least 3 MiB and is still moving
	c.kill9(t)
	wg.Wait()
	src.waitConns(t, tunnels)

	c2 := startChild(t, dir, src.addr, false)
	_ = c2
	adm := client.New(filepath.Join(dir, "admin.sock"))
	defer adm.Close()
	u, err := adm.Usage(context.Background(), c.keys[0])
	if err != nil {
		t.Fatalf("package lost: %v", err)
	}
	lo := got.Load() + src.in.Load() - crashSlack
	hi := src.out.Load() + sent.Load()
	t.Logf("recovered %d; provably passed %d, at most %d", u.Used, got.Load()+src.in.Load(), hi)
	if u.Used < lo || u.Used > hi {
		t.Fatalf("recovered meter %d outside [%d, %d]", u.Used, lo, hi)
	}
}
