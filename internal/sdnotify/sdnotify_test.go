package sdnotify

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peage/appliance/internal/obs"
)

// listen is a stand-in for systemd's notification socket.
func listen(t *testing.T) (*net.UnixConn, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "notify")
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: p, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, p
}

func next(t *testing.T, c *net.UnixConn) string {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	b := make([]byte, 4096)
	n, err := c.Read(b)
	if err != nil {
		t.Fatalf("no notification: %v", err)
	}
	return string(b[:n])
}

// TestRunPingsOnlyWhileLive: READY first, no WATCHDOG while the liveness check fails, WATCHDOG
// once it passes, STOPPING when the context ends.
func TestRunPingsOnlyWhileLive(t *testing.T) {
	c, p := listen(t)
	t.Setenv("NOTIFY_SOCKET", p)
	t.Setenv("WATCHDOG_USEC", "40000") // checks every 20 ms
	var checks, fail atomic.Int32
	fail.Store(1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, obs.Discard(), func(context.Context) error {
			checks.Add(1)
			if fail.Load() == 1 {
				return errors.New("wedged")
			}
			return nil
		})
	}()
	if got := next(t, c); got != "READY=1" {
		t.Fatalf("first notification %q, want READY=1", got)
	}
	for checks.Load() < 5 {
		time.Sleep(5 * time.Millisecond)
	}
	fail.Store(0)
	if got := next(t, c); got != "WATCHDOG=1" { // nothing was sent while the check failed
		t.Fatalf("after the failing checks: %q, want WATCHDOG=1 only once the check passes", got)
	}
	cancel()
	for {
		got := next(t, c)
		if got == "STOPPING=1" {
			break
		}
		if got != "WATCHDOG=1" {
			t.Fatalf("unexpected %q", got)
		}
	}
	<-done
}

// TestWithoutSystemd: no NOTIFY_SOCKET, no watchdog: nothing is sent and Watchdog returns.
func TestWithoutSystemd(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	t.Setenv("WATCHDOG_USEC", "")
	called := false
	Watchdog(context.Background(), obs.Discard(), func(context.Context) error { called = true; return nil })
	if called {
		t.Fatal("the liveness check ran without a watchdog")
	}
	Ready(obs.Discard())
}
