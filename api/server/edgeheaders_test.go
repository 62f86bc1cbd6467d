package server_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/internal/receipt"
)

// TestEdgeHeadersAsSent: the headers the edge reads itself (request id, Origin, the offers'
// format, the payments) are found in one pass over the request's, whatever the case a client
// writes their names in, each with its first value as a lookup finds it.
func TestEdgeHeadersAsSent(t *testing.T) {
	cat, err := catalog.New([]catalog.Entry{{Method: "GET", Path: "/v1/test/edge", Summary: "edge", Kind: catalog.Paid,
		Price: 1_000, Timeout: time.Second, Params: []catalog.Param{catalog.S("q", "a query")},
		Handler: func(context.Context, *catalog.Request) (any, error) { return map[string]any{"ok": true}, nil }}})
	if err != nil {
		t.Fatal(err)
	}
	keys := apitest.ReceiptKeys(t, publicBase)
	h := apitest.Start(t, cat, apitest.Options{Receipts: keys}) // the challenge-only gate
	cases := []struct {
		name    string
		headers []string
		status  int    // 402 without a payment; 503 once the gate sees one it cannot verify
		id      string // "" for an id the server names
		cors    bool
		offers  string
	}{
		{"none", nil, 402, "", false, receipt.FormatEIP712},
		{"request id kept", []string{"X-Request-Id: call-1"}, 402, "call-1", false, receipt.FormatEIP712},
		{"request id refused", []string{"X-Request-Id: not a token"}, 402, "", false, receipt.FormatEIP712},
		{"first of two ids", []string{"X-Request-Id: first-1", "X-Request-Id: second-2"}, 402, "first-1", false, receipt.FormatEIP712},
		{"lower case", []string{"x-request-id: low-1", "origin: https://agent.example", "x-offer-receipt-format: jws"}, 402, "low-1", true, receipt.FormatJWS},
		{"upper case", []string{"X-OFFER-RECEIPT-FORMAT: jws", "ORIGIN: https://agent.example"}, 402, "", true, receipt.FormatJWS},
		{"v2 payment in lower case", []string{"payment-signature: e30="}, 503, "", false, ""},
		{"v1 payment", []string{"X-PAYMENT: e30="}, 503, "", false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", strings.TrimPrefix(h.BaseURL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "GET /v1/test/edge?q=x HTTP/1.1\r\nHost: box\r\n%s\r\n", strings.Join(append(c.headers, ""), "\r\n"))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, c.status)
			}
			id := resp.Header.Get("X-Request-Id")
			if c.id != "" && id != c.id || c.id == "" && (id == "" || strings.Contains(strings.Join(c.headers, " "), id)) {
				t.Errorf("X-Request-Id %q, want %q", id, c.id)
			}
			if got := resp.Header.Get("Access-Control-Allow-Origin") == "*"; got != c.cors {
				t.Errorf("CORS headers %v, want %v", got, c.cors)
			}
			if c.offers == "" {
				return
			}
			raw, err := base64.StdEncoding.DecodeString(resp.Header.Get("Payment-Required"))
			var v map[string]any
			if err != nil || json.Unmarshal(raw, &v) != nil {
				t.Fatalf("PAYMENT-REQUIRED %q", resp.Header.Get("Payment-Required"))
			}
			if got := apitest.At(v, "extensions", "offer-receipt", "info", "offers", 0, "format"); got != c.offers {
				t.Errorf("offers signed as %v, want %s", got, c.offers)
			}
		})
	}
}
