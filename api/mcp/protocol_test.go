package mcp_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"testing"

	"github.com/peage/appliance/api/apitest"
)

// modernMeta is the _meta a 2026-07-28 request carries (schema/2026-07-28 RequestMetaObject).
func modernMeta(revision string) map[string]any {
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion":    revision,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
}

func rpc(method string, params map[string]any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
}

// modernHeaders are the headers a 2026-07-28 client mirrors from the body.
func modernHeaders(method, name string) map[string]string {
	h := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return h
}

type exchange struct {
	status int
	header http.Header
	body   map[string]any
}

func do(t *testing.T, method, url string, headers map[string]string, body any) exchange {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if len(b) > 0 {
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, b)
		}
	}
	return exchange{resp.StatusCode, resp.Header, m}
}

func (x exchange) result() map[string]any { r, _ := x.body["result"].(map[string]any); return r }

func (x exchange) errorCode() float64 {
	e, _ := x.body["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

// TestRevisionsOnOneEndpoint: the same /mcp serves the stateless revision (its headers checked
// against the body, its errors with their HTTP statuses, its caching hints) and the
// initialize-based ones (negotiated down to one served here), and answers GET as MCP says.
func TestRevisionsOnOneEndpoint(t *testing.T) {
	h, _ := start(t, &apitest.RecordingGate{})
	url := h.BaseURL + "/mcp"
	callTva := func(meta map[string]any) map[string]any {
		return rpc("tools/call", map[string]any{"name": "fr_tva", "arguments": map[string]any{"siren": "542065479"}, "_meta": meta})
	}
	noCaps := modernMeta("2026-07-28")
	delete(noCaps, "io.modelcontextprotocol/clientCapabilities")
	cases := []struct {
		name    string
		method  string
		headers map[string]string
		body    any
		status  int
		code    float64 // the JSON-RPC error code, 0 for a result
		check   func(t *testing.T, x exchange)
	}{
		{name: "GET for an event stream", method: "GET", headers: map[string]string{"Accept": "text/event-stream"}, status: 405},
		{name: "GET describes the server", method: "GET", headers: map[string]string{"Accept": "application/json"}, status: 200,
			check: func(t *testing.T, x exchange) {
				if x.body["endpoint"] != url || !slices.Contains(x.body["protocolVersions"].([]any), any("2026-07-28")) {
					t.Fatalf("description %v", x.body)
				}
			}},
		{name: "DELETE", method: "DELETE", status: 405},
		{name: "server/discover", method: "POST", headers: modernHeaders("server/discover", ""), body: rpc("server/discover", map[string]any{"_meta": modernMeta("2026-07-28")}), status: 200,
			check: func(t *testing.T, x exchange) {
				r := x.result()
				info, _ := r["_meta"].(map[string]any)["io.modelcontextprotocol/serverInfo"].(map[string]any)
				if r["resultType"] != "complete" || r["ttlMs"].(float64) <= 0 || r["cacheScope"] != "public" || info["name"] != "peage" ||
					!slices.Equal(r["supportedVersions"].([]any), []any{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}) {
					t.Fatalf("discover result %v", r)
				}
				if x.header.Get("Mcp-Session-Id") != "" {
					t.Fatal("a stateless revision got a session id")
				}
			}},
		{name: "tools/list carries caching hints", method: "POST", headers: modernHeaders("tools/list", ""), body: rpc("tools/list", map[string]any{"_meta": modernMeta("2026-07-28")}), status: 200,
			check: func(t *testing.T, x exchange) {
				if r := x.result(); r["resultType"] != "complete" || r["ttlMs"].(float64) <= 0 || r["cacheScope"] != "public" || len(r["tools"].([]any)) < 140 {
					t.Fatalf("tools/list result without its hints: %v", r["ttlMs"])
				}
			}},
		{name: "tools/call", method: "POST", headers: modernHeaders("tools/call", "fr_tva"), body: callTva(modernMeta("2026-07-28")), status: 200,
			check: func(t *testing.T, x exchange) {
				if r := x.result(); r["resultType"] != "complete" || r["isError"] != false {
					t.Fatalf("tools/call result %v", r)
				}
			}},
		{name: "Mcp-Name in the base64 sentinel form", method: "POST", headers: modernHeaders("tools/call", "=?base64?ZnJfdHZh?="), body: callTva(modernMeta("2026-07-28")), status: 200},
		{name: "Mcp-Name naming another tool", method: "POST", headers: modernHeaders("tools/call", "fr_iban"), body: callTva(modernMeta("2026-07-28")), status: 400, code: -32020},
		{name: "Mcp-Name missing", method: "POST", headers: modernHeaders("tools/call", ""), body: callTva(modernMeta("2026-07-28")), status: 400, code: -32020},
		{name: "Mcp-Method missing", method: "POST", headers: map[string]string{"Mcp-Protocol-Version": "2026-07-28"}, body: rpc("tools/list", map[string]any{"_meta": modernMeta("2026-07-28")}), status: 400, code: -32020},
		{name: "Mcp-Method naming another method", method: "POST", headers: modernHeaders("tools/list", ""), body: rpc("server/discover", map[string]any{"_meta": modernMeta("2026-07-28")}), status: 400, code: -32020},
		{name: "MCP-Protocol-Version header unlike _meta", method: "POST", headers: map[string]string{"Mcp-Protocol-Version": "2025-11-25", "Mcp-Method": "tools/list"}, body: rpc("tools/list", map[string]any{"_meta": modernMeta("2026-07-28")}), status: 400, code: -32020},
		{name: "clientCapabilities missing", method: "POST", headers: modernHeaders("tools/list", ""), body: rpc("tools/list", map[string]any{"_meta": noCaps}), status: 400, code: -32602},
		{name: "a revision not served", method: "POST", headers: map[string]string{"Mcp-Protocol-Version": "2099-01-01", "Mcp-Method": "tools/list"}, body: rpc("tools/list", map[string]any{"_meta": modernMeta("2099-01-01")}), status: 400, code: -32022,
			check: func(t *testing.T, x exchange) {
				data, _ := x.body["error"].(map[string]any)["data"].(map[string]any)
				if data["requested"] != "2099-01-01" || !slices.Contains(data["supported"].([]any), any("2026-07-28")) {
					t.Fatalf("error data %v", data)
				}
			}},
		{name: "an unknown method", method: "POST", headers: modernHeaders("resources/list", ""), body: rpc("resources/list", map[string]any{"_meta": modernMeta("2026-07-28")}), status: 404, code: -32601},
		{name: "initialize asking for 2026-07-28", method: "POST", body: rpc("initialize", map[string]any{"protocolVersion": "2026-07-28", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"}}), status: 200,
			check: func(t *testing.T, x exchange) {
				if r := x.result(); r["protocolVersion"] != "2025-11-25" || x.header.Get("Mcp-Session-Id") == "" {
					t.Fatalf("initialize result %v", r)
				}
				if icons, _ := x.result()["serverInfo"].(map[string]any)["icons"].([]any); len(icons) != 1 {
					t.Fatalf("serverInfo without its icon: %v", x.result()["serverInfo"])
				}
			}},
		{name: "initialize at 2025-06-18", method: "POST", body: rpc("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"}}), status: 200,
			check: func(t *testing.T, x exchange) {
				if r := x.result(); r["protocolVersion"] != "2025-06-18" {
					t.Fatalf("initialize result %v", r)
				}
			}},
		{name: "legacy tools/list", method: "POST", headers: map[string]string{"Mcp-Protocol-Version": "2025-11-25"}, body: rpc("tools/list", nil), status: 200,
			check: func(t *testing.T, x exchange) {
				if r := x.result(); r["ttlMs"] != nil || r["resultType"] != nil || len(r["tools"].([]any)) < 140 {
					t.Fatalf("legacy tools/list result carries the stateless fields: %v %v", r["ttlMs"], r["resultType"])
				}
			}},
		{name: "a legacy revision in _meta is a legacy request", method: "POST", headers: map[string]string{"Mcp-Protocol-Version": "2025-11-25"}, body: rpc("tools/list", map[string]any{"_meta": modernMeta("2025-11-25")}), status: 200,
			check: func(t *testing.T, x exchange) {
				if r := x.result(); r["resultType"] != nil || len(r["tools"].([]any)) < 140 {
					t.Fatalf("tools/list result %v", r["resultType"])
				}
			}},
		{name: "2026-07-28 header without its _meta", method: "POST", headers: modernHeaders("tools/list", ""), body: rpc("tools/list", nil), status: 400, code: -32602},
		{name: "legacy header naming a revision not served", method: "POST", headers: map[string]string{"Mcp-Protocol-Version": "2099-01-01"}, body: rpc("tools/list", nil), status: 400, code: -32022},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := do(t, c.method, url, c.headers, c.body)
			if x.status != c.status || x.errorCode() != c.code {
				t.Fatalf("%d %v, want %d with code %v", x.status, x.body, c.status, c.code)
			}
			if c.check != nil {
				c.check(t, x)
			}
		})
	}
}
