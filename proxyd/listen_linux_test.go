package proxyd

import (
	"context"
	"net"
	"syscall"
	"testing"
	"time"
)

// TestTunnelSocketsWithoutKeepAlive: both sockets of a tunnel, the accepted one and the
// dialled one, are left without TCP keep-alive (the idle timeout finds vanished peers).
func TestTunnelSocketsWithoutKeepAlive(t *testing.T) {
	ln, err := Listen(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	d := dialer(time.Second)
	dialled, err := d.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer dialled.Close()
	accepted, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer accepted.Close()
	for name, c := range map[string]net.Conn{"accepted": accepted, "dialled": dialled} {
		rc, err := c.(*net.TCPConn).SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var on int
		var serr error
		if err := rc.Control(func(fd uintptr) { on, serr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_KEEPALIVE) }); err != nil || serr != nil {
			t.Fatal(err, serr)
		}
		if on != 0 {
			t.Errorf("%s socket has SO_KEEPALIVE on", name)
		}
	}
}
