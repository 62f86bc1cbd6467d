package mcp_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/mcp"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/render"
)

// TestOriginIsChecked: the Streamable HTTP transport's rule against DNS rebinding: a request
// whose Origin is present and not allowed gets 403 with a JSON-RPC error, on POST and GET; no
// Origin (not a browser), the box's own origin, a loopback page and an origin the operator
// allows are served.
func TestOriginIsChecked(t *testing.T) {
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	h := apitest.Start(t, cat, apitest.Options{})
	pay := paywall.DefaultConfig()
	pay.PayTo = apitest.TestPayTo
	r := render.New(cat, render.Info{BaseURL: h.BaseURL, Pay: pay, Version: "test"})
	if err := mcp.New(cat, r, h.Server, h.Server, "test").AllowOrigins([]string{"https://App.Example:443"}).Bind(cat); err != nil {
		t.Fatal(err)
	}
	const list = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	for _, c := range []struct {
		method, origin string
		want           int
	}{
		{"POST", "", 200},
		{"POST", h.BaseURL, 200},
		{"POST", "http://localhost:6274", 200},
		{"POST", "http://127.0.0.1:6274", 200},
		{"POST", "https://app.example", 200},
		{"POST", "https://evil.example", 403},
		{"POST", "http://app.example", 403},
		{"POST", "null", 403},
		{"GET", "https://evil.example", 403},
		{"GET", "https://app.example", 200},
	} {
		var body io.Reader
		if c.method == "POST" {
			body = strings.NewReader(list)
		}
		req, _ := http.NewRequest(c.method, h.BaseURL+"/mcp", body)
		req.Header.Set("Content-Type", "application/json")
		if c.method == "POST" {
			req.Header.Set("Accept", "application/json, text/event-stream")
		}
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/list")
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		resp, err := h.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s with Origin %q: %d %s, want %d", c.method, c.origin, resp.StatusCode, b, c.want)
			continue
		}
		var rpc struct {
			Error *struct{ Code int } `json:"error"`
		}
		if c.want == 403 && (json.Unmarshal(b, &rpc) != nil || rpc.Error == nil) {
			t.Errorf("%s with Origin %q: 403 without a JSON-RPC error: %s", c.method, c.origin, b)
		}
	}
}
