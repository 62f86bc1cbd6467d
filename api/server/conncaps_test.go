package server_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/server"
	"github.com/peage/appliance/internal/netlimit"
)

// capsServer serves fr.tva (paid, bound to a handler that answers at once) through the
// recording gate, so a request carrying a payment header is served, with connection bounds
// set by mut.
func capsServer(t *testing.T, mut func(*server.Config)) *apitest.Harness {
	t.Helper()
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	ok := func(context.Context, *catalog.Request) (any, error) { return map[string]any{"ok": true}, nil }
	if err := cat.Bind("fr.tva", ok, nil); err != nil {
		t.Fatal(err)
	}
	return apitest.Start(t, cat, apitest.Options{Gate: &apitest.RecordingGate{}, Configure: mut})
}

func hostOf(h *apitest.Harness) string { return h.BaseURL[len("http://"):] }

// waitFor polls the server's connection counts until cond holds.
func waitFor(t *testing.T, h *apitest.Harness, cond func(netlimit.Stats) bool) {
	t.Helper()
	for i := 0; !cond(h.Server.Conns()); i++ {
		if i == 10_000 {
			t.Fatalf("connection counts never got there: %+v", h.Server.Conns())
		}
		time.Sleep(time.Millisecond)
	}
}

// send sends one request on c and returns its status and error code.
func send(t *testing.T, c net.Conn, head string) (int, string) {
	t.Helper()
	fmt.Fprintf(c, "%s\r\nHost: x\r\n\r\n", head)
	st, eb := readResp(t, c)
	return st, eb.Error.Code
}

const paidCall = "GET /v1/fr/tva?siren=542065479 HTTP/1.1\r\nPAYMENT-SIGNATURE: e30="

// TestIdleHoldersFromManyAddressesLockNobodyOut (issue 34, item 6): six addresses hold all
// the server's connections idle, each within its own bound (the attack needed 33 addresses at
// the default bounds); a buyer's paid call from another address is still served, and a
// free one too, each by closing the connection idle the longest. Before, both got 503.
func TestIdleHoldersFromManyAddressesLockNobodyOut(t *testing.T) {
	h := capsServer(t, func(c *server.Config) { c.MaxConns, c.MaxConnsPerClient, c.ConnsReservedForPaid = 48, 8, 8 })
	var held []net.Conn
	for i := range 6 {
		for range 8 {
			c := dialFrom(t, fmt.Sprintf("127.0.0.%d", 10+i), hostOf(h))
			// Counted once answered; then idle between requests, as a keep-alive client is.
			if st, _ := send(t, c, "GET /v1/nope HTTP/1.1"); st != 404 {
				t.Fatalf("holder: %d", st)
			}
			held = append(held, c)
			// The server waits for its next request before the next holder comes, so the
			// holders are idle in the order they came.
			waitFor(t, h, func(st netlimit.Stats) bool { return st.Idle == len(held) })
		}
	}
	if n := h.Server.Conns().Total; n != 48 {
		t.Fatalf("%d connections counted, want 48", n)
	}
	if st, code := send(t, dialFrom(t, "127.0.0.2", hostOf(h)), paidCall); st != 200 {
		t.Fatalf("a paid call while idle sockets hold every connection: %d %s, want 200", st, code)
	}
	if st, code := send(t, dialFrom(t, "127.0.0.3", hostOf(h)), "GET /v1/nope HTTP/1.1"); st != 404 {
		t.Fatalf("a free request meanwhile: %d %s, want 404", st, code)
	}
	// The room came from the two oldest idle connections, closed by the server.
	for i, c := range held[:2] {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if n, err := c.Read(make([]byte, 1)); err != io.EOF {
			t.Fatalf("holder %d: read %d %v, want EOF (closed to make room)", i, n, err)
		}
	}
	if st := h.Server.Conns(); st.Evicted != 2 {
		t.Fatalf("%d connections closed to make room, want 2", st.Evicted)
	}
	// The third oldest is still open and served.
	if st, _ := send(t, held[2], "GET /v1/nope HTTP/1.1"); st != 404 {
		t.Fatalf("the third oldest holder: %d", st)
	}
}

// reserveServer keeps 4 of its 16 connections for paid calls.
func reserveServer(t *testing.T) *apitest.Harness {
	return capsServer(t, func(c *server.Config) {
		c.MaxConns, c.MaxConnsPerClient, c.ConnsReservedForPaid = 16, 4, 4
		c.BodyReadTimeout = time.Minute
	})
}

// holdUnpaid has requests without a payment hold all the connections of reserveServer they
// may (12): each announces a body and never sends it whole.
func holdUnpaid(t *testing.T, h *apitest.Harness) {
	t.Helper()
	for i := range 3 {
		for range 4 {
			c := dialFrom(t, fmt.Sprintf("127.0.0.%d", 10+i), hostOf(h))
			// fasthttp reads the first 8 KiB of a body before the handler starts: until then a
			// connection has not sent a request, and is idle.
			fmt.Fprintf(c, "POST /v1/nope HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n%s",
				strings.Repeat(" ", 8<<10))
		}
	}
	waitFor(t, h, func(st netlimit.Stats) bool { return st.UnpaidBusy == 12 })
}

// TestUnpaidRequestsLeaveTheReserve: requests without a payment that stay in progress (a body
// announced and never sent whole) hold at most max_conns minus the reserve; the next one gets 503
// at once, while a paid call is served from the reserve. Before, the unpaid request was
// served and nothing was kept.
func TestUnpaidRequestsLeaveTheReserve(t *testing.T) {
	h := reserveServer(t)
	holdUnpaid(t, h)
	if st, code := send(t, dialFrom(t, "127.0.0.2", hostOf(h)), "GET /v1/nope HTTP/1.1"); st != 503 || code != "not_available" {
		t.Fatalf("an unpaid request past max_conns minus the reserve: %d %s, want 503", st, code)
	}
	if st, code := send(t, dialFrom(t, "127.0.0.3", hostOf(h)), paidCall); st != 200 {
		t.Fatalf("a paid call meanwhile: %d %s, want 200", st, code)
	}
}

// TestPaymentInTheBodyUsesTheReserve: MCP and A2A carry a payment in their JSON-RPC body, not
// in a header; such a call is served from the connections kept for paid calls once unpaid
// requests hold the rest, while the same endpoint's unpaid call is refused. Before, a paid MCP
// tools/call or A2A message was refused with the unpaid ones.
func TestPaymentInTheBodyUsesTheReserve(t *testing.T) {
	h := reserveServer(t)
	holdUnpaid(t, h)
	post := func(from, path, body string) string {
		c := dialFrom(t, from, hostOf(h))
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", path, len(body), body)
		_, eb := readResp(t, c)
		return eb.Error.Message
	}
	const refused = "keeps its remaining connections for paid calls"
	for i, c := range []struct {
		path, body string
		served     bool
	}{
		{"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fr_tva","arguments":{},"_meta":{"x402/payment":{"x402Version":2}}}}`, true},
		{"/a2a", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"metadata":{"x402.payment.payload":{"x402Version":2}}}}}`, true},
		{"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fr_tva","arguments":{}}}`, false},
		{"/v1/nope", `{"_meta":{"x402/payment":{}}}`, false},
	} {
		msg := post(fmt.Sprintf("127.0.0.%d", 2+i), c.path, c.body)
		if got := !strings.Contains(msg, refused); got != c.served {
			t.Errorf("%s %s: %q; want served %v", c.path, c.body, msg, c.served)
		}
	}
}
