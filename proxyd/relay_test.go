package proxyd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"
)

// A target that sends its last bytes and its FIN together (a close-delimited answer) must end
// the tunnel on the buffered relay: a read that takes both raises no further wakeup, so the
// relay may only park when the kernel says nothing, not even a FIN, is left. Every byte of
// every answer is metered, exactly.
func TestRelayEndsWithTheTargetAndMetersExactly(t *testing.T) {
	leakCheck(t)
	e := newEnv(t, func(c *Config) { c.CopyPath = copyBuffered })
	key := e.issue(1 << 30)
	var want int64
	for i, n := range []int64{1, 7, 1000, 16 << 10, 32 << 10, 32<<10 + 1, 100 << 10, 1, 3} {
		for j := 0; j < 8; j++ {
			code, _, c := e.connect(key, e.src.addr)
			if code != 200 {
				t.Fatalf("CONNECT: %d", code)
			}
			// A hang here (the relay parked after the FIN) fails the test instead of stalling it.
			_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
			req := fmt.Sprintf("down %d\n", n)
			if _, err := io.WriteString(c, req); err != nil {
				t.Fatal(err)
			}
			got, err := io.Copy(io.Discard, c)
			_ = c.Close()
			if got != n || err != nil {
				t.Fatalf("answer %d.%d: got %d of %d bytes, then %v (want the end)", i, j, got, n, err)
			}
			want += int64(len(req)) + got
		}
	}
	e.src.waitConns(t, e.src.accepted.Load())
	deadline := time.Now().Add(10 * time.Second)
	for {
		u, err := e.s.Usage(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		if u.Used == want && u.Tunnels == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("meter %d with %d tunnels open, want %d bytes and none open", u.Used, u.Tunnels, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The copy off sockets (copyChunk: a net.Conn that is not a *net.TCPConn, or a system without
// relay) meters through the same forward as relay: every byte both ways counted, and the
// tunnel cut at the quota's exact byte.
func TestCopyChunkMetersExactlyAndCutsAtTheQuota(t *testing.T) {
	leakCheck(t)
	const quota = 150
	m := newMeter(Package{ID: "pipe", Bytes: quota, ExpiresAt: time.Now().Add(time.Hour)}, 1<<20, 0, nil)
	cProxy, cUser := net.Pipe()
	tProxy, tTarget := net.Pipe()
	defer cUser.Close()
	defer tTarget.Close()
	tun := &tunnel{m: m, client: cProxy, target: tProxy}
	if err := m.addTunnel(tun, time.Now(), 4); err != nil {
		t.Fatal(err)
	}
	done := make(chan [2]int64, 1)
	go func() { up, down := tun.run(nil); m.removeTunnel(tun); done <- [2]int64{up, down} }()

	up := bytes.Repeat([]byte("u"), 100)
	go func() { _, _ = cUser.Write(up) }()
	got := make([]byte, len(up))
	if _, err := io.ReadFull(tTarget, got); err != nil || !bytes.Equal(got, up) {
		t.Fatalf("up: %q %v", got, err)
	}
	go func() { _, _ = tTarget.Write(bytes.Repeat([]byte("d"), 100)) }()
	_ = cUser.SetReadDeadline(time.Now().Add(10 * time.Second))
	down, err := io.ReadAll(cUser)
	if len(down) != quota-len(up) || (err != nil && !errors.Is(err, io.ErrClosedPipe)) {
		t.Fatalf("down: %d bytes then %v, want %d then the end", len(down), err, quota-len(up))
	}
	moved := <-done
	if moved != [2]int64{100, quota - 100} {
		t.Fatalf("pumps moved %v", moved)
	}
	if used, state, _ := m.snapshot(time.Now()); used != quota || state != "exhausted" {
		t.Fatalf("meter %d %s, want %d exhausted", used, state, quota)
	}
}
