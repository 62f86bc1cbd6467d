package netlimit

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"
)

// TestLingerUnread: a server that answers a request it did not read whole and closes (a head
// over its limit) must not reset the connection under the client's feet: the client reads
// the whole answer and then EOF, and the connection counts against the client until it is
// really gone.
func TestLingerUnread(t *testing.T) {
	for _, linger := range []bool{true, false} {
		inner, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lim := New(Config{Max: 10, PerClient: 10})
		ln := &Listener{Listener: inner, Limiter: lim}
		answer := []byte("HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
		go func() {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Read(make([]byte, 4096)) // the start of the head only
			_, _ = c.Write(answer)
			if linger {
				c.(interface{ LingerUnread() }).LingerUnread()
			}
			_ = c.Close()
		}()
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write(append([]byte("GET / HTTP/1.1\r\nX-Big: "), bytes.Repeat([]byte("b"), 64<<10)...))
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		time.Sleep(100 * time.Millisecond) // the server has answered and closed by now
		got, err := io.ReadAll(c)
		_ = c.Close()
		_ = inner.Close()
		if linger {
			if err != nil || !bytes.Equal(got, answer) {
				t.Fatalf("with LingerUnread the client must read the answer then EOF; got %q, %v", got, err)
			}
			client := Client(c.LocalAddr())
			deadline := time.Now().Add(5 * time.Second)
			for lim.Count(client) != 0 {
				if time.Now().After(deadline) {
					t.Fatal("the lingering connection was never released")
				}
				time.Sleep(10 * time.Millisecond)
			}
		} else if err == nil {
			// Without it the kernel resets a socket closed with unread input: this checks that
			// the test reproduces what LingerUnread is for.
			t.Fatalf("closing with unread input did not reset the connection (got %q): the test proves nothing", got)
		}
	}
}
