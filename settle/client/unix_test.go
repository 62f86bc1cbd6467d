package client_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/internal/testenv"
	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/client"
	"github.com/peage/appliance/settle/settletest"
)

// daemon serves the dev facilitator's API on a socket of its own, through wrap (nil: as is),
// counting the connections it accepts; stop ends it as the daemon's shutdown does (idle
// connections closed), and start serves it again on the same socket.
type daemon struct {
	t        *testing.T
	sock     string
	h        http.Handler
	accepted atomic.Int64
	stop     func()
}

func newDaemon(t *testing.T, wrap func(http.Handler) http.Handler) *daemon {
	t.Helper()
	testenv.NeedsChain(t)
	dev, _ := settletest.StartDev(t)
	h := dev.Facilitator.Handler()
	if wrap != nil {
		h = wrap(h)
	}
	d := &daemon{t: t, sock: filepath.Join(t.TempDir(), "settle.sock"), h: h}
	d.start()
	t.Cleanup(func() { d.stop() })
	return d
}

func (d *daemon) start() {
	l, err := settle.ListenUnix(d.sock)
	if err != nil {
		d.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- settle.Serve(ctx, d.h, obs.Discard(), countingListener{l, &d.accepted}) }()
	d.stop = func() { cancel(); <-done }
}

type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

func (d *daemon) client() *client.Client {
	d.t.Helper()
	c, err := client.New("unix:" + d.sock)
	if err != nil {
		d.t.Fatal(err)
	}
	return c
}

// TestSocketClientKeepsItsConnection: calls one after another go over one connection.
func TestSocketClientKeepsItsConnection(t *testing.T) {
	d := newDaemon(t, nil)
	c := d.client()
	for range 20 {
		if _, err := c.Supported(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if n := d.accepted.Load(); n != 1 {
		t.Errorf("20 calls in turn dialed %d connections, want 1", n)
	}
}

// TestSocketClientAfterADaemonRestart: the daemon's restart closes the client's idle
// connection; the next call goes over a new one instead of failing on the closed one.
func TestSocketClientAfterADaemonRestart(t *testing.T) {
	d := newDaemon(t, nil)
	c := d.client()
	for i := range 3 {
		if _, err := c.Supported(context.Background()); err != nil {
			t.Fatalf("call after %d restarts: %v", i, err)
		}
		d.stop()
		d.start()
	}
	if n := d.accepted.Load(); n != 3 {
		t.Errorf("3 calls across restarts dialed %d connections, want 3", n)
	}
}

// TestSocketClientCallsOverlap: concurrent calls reach the daemon together, each on its own
// connection. The daemon holds every call until all of them are in it; calls carried one at a
// time would never all be there, and would end at their context's deadline.
func TestSocketClientCallsOverlap(t *testing.T) {
	const n = 8
	var (
		mu      sync.Mutex
		inside  int
		allHere = make(chan struct{})
	)
	d := newDaemon(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			if inside++; inside == n {
				close(allHere)
			}
			mu.Unlock()
			select {
			case <-allHere:
			case <-r.Context().Done():
			}
			h.ServeHTTP(w, r)
		})
	})
	c := d.client()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	errs := make(chan error, n)
	for range n {
		go func() { _, err := c.Supported(ctx); errs <- err }()
	}
	for range n {
		if err := <-errs; err != nil {
			mu.Lock()
			t.Fatalf("%v (%d of %d calls reached the daemon together)", err, inside, n)
		}
	}
	// Once all are answered, the connections are kept for the next calls.
	for range n {
		go func() { _, err := c.Supported(ctx); errs <- err }()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := d.accepted.Load(); got != n {
		t.Errorf("%d concurrent calls twice dialed %d connections, want %d", n, got, n)
	}
}

// TestSocketClientCallGivenUp: a call whose context ends while the daemon holds it returns the
// context's error, and its connection, whose answer may still come, is not used again.
func TestSocketClientCallGivenUp(t *testing.T) {
	held := make(chan struct{})
	release := make(chan struct{})
	var calls atomic.Int64
	d := newDaemon(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if calls.Add(1) == 1 {
				close(held)
				<-release
			}
			h.ServeHTTP(w, r)
		})
	})
	c := d.client()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := c.Supported(ctx); errc <- err }()
	<-held
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("call given up answered %v, want context.Canceled", err)
	}
	close(release)
	if _, err := c.Supported(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := d.accepted.Load(); n != 2 {
		t.Errorf("the call after one given up dialed %d connections in all, want 2 (a new one)", n)
	}
}

// BenchmarkSocketRoundTrip compares, in one run, a call to the daemon's socket (GET
// /supported) through this client's transport and through net/http's Transport as the client
// had it: ns/op is a round trip's time at one caller, and with 8 callers per core about the
// CPU one takes once the cores are busy.
func BenchmarkSocketRoundTrip(b *testing.B) {
	testenv.NeedsChain(b)
	dev, pooled := settletest.StartDev(b)
	baseline := client.NewOverNetHTTP(dev.Socket)
	viaTransport := func(ctx context.Context) error { _, err := baseline.Supported(ctx); return err }
	viaClient := func(ctx context.Context) error { _, err := pooled.Supported(ctx); return err }
	for _, c := range []struct {
		name string
		call func(context.Context) error
	}{{"net-http-transport", viaTransport}, {"pooled", viaClient}} {
		b.Run(c.name+"/one", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.call(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := c.call(context.Background()); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
