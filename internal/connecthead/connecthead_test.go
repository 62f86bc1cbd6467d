package connecthead

import (
	"net"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, head     string
		method, target string
		auth           string
		malformed      bool
	}{
		{name: "connect", head: "CONNECT a.example:443 HTTP/1.1\r\nHost: a.example:443\r\nProxy-Authorization: Basic eDp5\r\n\r\n",
			method: "CONNECT", target: "a.example:443", auth: "Basic eDp5"},
		{name: "field name in any case, value trimmed", head: "CONNECT a:443 HTTP/1.0\r\nproxy-authorization:   Basic eDp5  \r\n\r\n",
			method: "CONNECT", target: "a:443", auth: "Basic eDp5"},
		{name: "first of two", head: "CONNECT a:443 HTTP/1.1\r\nProxy-Authorization: Basic A\r\nProxy-Authorization: Basic B\r\n\r\n",
			method: "CONNECT", target: "a:443", auth: "Basic A"},
		{name: "bare LF lines", head: "CONNECT a:443 HTTP/1.1\nHost: a\n\n", method: "CONNECT", target: "a:443"},
		{name: "blank lines before the request line", head: "\r\n\r\nCONNECT a:443 HTTP/1.1\r\n\r\n", method: "CONNECT", target: "a:443"},
		{name: "other method", head: "GET http://a/ HTTP/1.1\r\nHost: a\r\n\r\n", method: "GET", target: "http://a/"},
		{name: "HTTP/2 version", head: "CONNECT a:443 HTTP/2.0\r\n\r\n", malformed: true},
		{name: "no version", head: "CONNECT a:443\r\n\r\n", malformed: true},
		{name: "empty target", head: "CONNECT  HTTP/1.1\r\n\r\n", malformed: true},
		{name: "control character in the target", head: "CONNECT a\x01b:443 HTTP/1.1\r\n\r\n", malformed: true},
		{name: "tab in the target", head: "CONNECT a:443\tb HTTP/1.1\r\n\r\n", malformed: true},
		{name: "method not a token", head: "CON(NECT a:443 HTTP/1.1\r\n\r\n", malformed: true},
		{name: "folded field line", head: "CONNECT a:443 HTTP/1.1\r\nHost: a\r\n continued\r\n\r\n", malformed: true},
		{name: "space before the colon", head: "CONNECT a:443 HTTP/1.1\r\nProxy-Authorization : Basic x\r\n\r\n", malformed: true},
		{name: "field without colon", head: "CONNECT a:443 HTTP/1.1\r\nHost\r\n\r\n", malformed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := []byte(tc.head + "tail")
			end := headEnd(b, 0)
			if end != len(tc.head) {
				t.Fatalf("headEnd %d, want %d", end, len(tc.head))
			}
			h, err := parse(b[:end])
			if tc.malformed {
				if err == nil {
					t.Fatalf("parsed %+v, want malformed", h)
				}
				return
			}
			if err != nil || h.Method != tc.method || h.Target != tc.target || h.Auth != tc.auth {
				t.Fatalf("got %+v %v, want %s %s auth %q", h, err, tc.method, tc.target, tc.auth)
			}
		})
	}
	for _, partial := range []string{"", "CONNECT a:443 HTTP/1.1\r\n", "CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r", "\r\n\r\n"} {
		if end := headEnd([]byte(partial), 0); end != -1 {
			t.Errorf("headEnd(%q) = %d, want -1 (incomplete)", partial, end)
		}
	}
}

// TestReadByteByByte: a head that arrives a byte at a time, after blank lines, is read whole
// with the bytes behind it; blank lines alone still count against the head's size.
func TestReadByteByByte(t *testing.T) {
	send := func(s string) net.Conn {
		c, p := net.Pipe()
		go func() {
			defer p.Close()
			for i := 0; i < len(s); i++ {
				if _, err := p.Write([]byte{s[i]}); err != nil {
					return
				}
			}
		}()
		t.Cleanup(func() { c.Close() })
		return c
	}
	head := "\r\n\nCONNECT a:443 HTTP/1.1\r\nHost: a\r\nProxy-Authorization: Basic eDp5\r\n\r\n"
	h, read, err := Read(send(head+"early"), make([]byte, MaxBytes))
	if err != nil || h.Method != "CONNECT" || h.Target != "a:443" || h.Auth != "Basic eDp5" {
		t.Fatalf("got %+v %v", h, err)
	}
	if got, want := string(read[:h.Len]), strings.TrimLeft(head, "\r\n"); got != want {
		t.Fatalf("head bytes %q, want %q", got, want)
	}
	rest := read[h.Len:]
	if len(rest) > len("early") || !strings.HasPrefix("early", string(rest)) {
		t.Fatalf("bytes behind the head %q, want a prefix of %q", rest, "early")
	}
	if _, _, err := Read(send(strings.Repeat("\r\n", MaxBytes)), make([]byte, MaxBytes)); err != ErrTooLarge {
		t.Fatalf("16 KiB of blank lines: %v, want %v", err, ErrTooLarge)
	}
}

func FuzzKey(f *testing.F) {
	for _, s := range []string{"Basic YnV5ZXI6cGsxMjM=", "basic YnV5ZXI6cGsxMjM=", "Basic", "Bearer x", "Basic !!!", "Basic YnV5ZXI6", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		key, ok := Key(h)
		if ok && key == "" {
			t.Fatalf("%q: ok with an empty key", h)
		}
	})
}
