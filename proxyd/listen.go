package proxyd

import (
	"context"
	"net"
	"time"
)

// A tunnel's two sockets carry no TCP keep-alive: a tunnel in which no byte moved for
// IdleTimeout is closed anyway, which is what finds a vanished peer, while the keep-alive
// options cost four system calls on each socket of every tunnel set up (squid leaves them
// off by default too).
const tunnelKeepAlive = -1

// Listen opens the proxy's listening socket; the connections it accepts carry no keep-alive.
func Listen(ctx context.Context, addr string) (net.Listener, error) {
	lc := net.ListenConfig{KeepAlive: tunnelKeepAlive}
	return lc.Listen(ctx, "tcp", addr)
}

// dialer dials a tunnel's target.
func dialer(timeout time.Duration) net.Dialer {
	return net.Dialer{Timeout: timeout, KeepAlive: tunnelKeepAlive}
}
