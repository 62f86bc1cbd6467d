package server_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
)

// TestWorkKeepsItsOwnCopyOfTheRequest: the server leaves an unpaid call's headers, query and
// body in fasthttp's request until the work begins (the 402 path copies none of them), and
// fasthttp reuses that request for the connection's next one. A handler that keeps its
// request past its answer (a captured hook, a relayed call) still reads its own call's
// headers, query and body after the same connection has carried other requests.
func TestWorkKeepsItsOwnCopyOfTheRequest(t *testing.T) {
	kept := make(chan *catalog.Request, 3)
	cat, err := catalog.New([]catalog.Entry{{Method: "POST", Path: "/v1/test/keep", Summary: "keeps its request", Kind: catalog.Paid,
		Price: 1_000, Timeout: 10 * time.Second, Params: []catalog.Param{catalog.S("n", "a label")},
		Handler: func(_ context.Context, req *catalog.Request) (any, error) {
			kept <- req
			return map[string]any{"ok": true}, nil
		}}})
	if err != nil {
		t.Fatal(err)
	}
	h := apitest.Start(t, cat, apitest.Options{Gate: &apitest.RecordingGate{}})
	conn, err := net.Dial("tcp", strings.TrimPrefix(h.BaseURL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	names := []string{"first", "second", "third-and-longer"}
	for _, n := range names {
		body := `{"n":"` + n + `"}`
		fmt.Fprintf(conn, "POST /v1/test/keep?q=%s HTTP/1.1\r\nHost: box\r\nX-Probe: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
			n, n, len(body), body)
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", n, resp.StatusCode)
		}
	}
	for _, n := range names {
		req := <-kept
		if got := req.Header.Get("X-Probe"); got != n {
			t.Errorf("%s: header X-Probe %q", n, got)
		}
		if got := req.HeaderValue("X-Probe"); got != n {
			t.Errorf("%s: HeaderValue(X-Probe) %q", n, got)
		}
		if !slices.Equal(req.Query, [][2]string{{"q", n}}) {
			t.Errorf("%s: query %q", n, req.Query)
		}
		if got, want := string(req.Body), `{"n":"`+n+`"}`; got != want {
			t.Errorf("%s: body %q, want %q", n, got, want)
		}
		if req.Args.Str("n") != n {
			t.Errorf("%s: args %v", n, req.Args)
		}
	}
}
