// Package mcp serves the catalog as MCP tools over Streamable HTTP (JSON responses, no server
// stream), in every revision a current client speaks: 2026-07-28 statelessly (server/discover,
// per-request _meta and the headers that mirror it) and 2025-11-25 back to 2024-11-05 after an
// initialize handshake (revision.go). A tools/call runs the very same sequence as an HTTP call
// (params → availability → x402 gate → handler); the payment rides in
// params._meta["x402/payment"] as the x402 MCP transport specifies, and an unpaid call is a
// tool result with isError and the PaymentRequired object, not a protocol error.
package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"strings"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/render"
)

// Invoker runs one call through the paid-call sequence (the server implements it).
type Invoker interface {
	Invoke(ctx context.Context, e *catalog.Entry, raw map[string]any, req *catalog.Request) (*catalog.Raw, map[string]string, error)
}

// Challenger renders an entry's 402 challenge (the server's memoised challenges).
type Challenger interface {
	ChallengeObject(e *catalog.Entry, payErr error) (map[string]any, error)
}

// Endpoint is the /mcp handler.
type Endpoint struct {
	r       *render.Renderer
	invoker Invoker
	chal    Challenger
	version string
	// tools maps every tool name to its entry: the listed name (render.ToolName) and, so that
	// clients written against the first tool list keep working, the route ID it replaced.
	tools map[string]*catalog.Entry
	// origins and anyOrigin are the browser origins allowed besides the box's own (origin.go).
	origins   map[string]bool
	anyOrigin bool
}

func New(cat *catalog.Catalog, r *render.Renderer, inv Invoker, chal Challenger, version string) *Endpoint {
	return &Endpoint{r: r, invoker: inv, chal: chal, version: version, tools: toolIndex(cat)}
}

// toolIndex indexes the listed names first, so that an old dotted ID never shadows one.
func toolIndex(cat *catalog.Catalog) map[string]*catalog.Entry {
	idx := map[string]*catalog.Entry{}
	for _, e := range cat.Entries() {
		if render.IsTool(e) {
			idx[render.ToolName(e)] = e
		}
	}
	for _, e := range cat.Entries() {
		if _, taken := idx[e.ID]; !taken && render.IsTool(e) {
			idx[e.ID] = e
		}
	}
	return idx
}

// Bind attaches the endpoint to the /mcp entry.
func (m *Endpoint) Bind(c *catalog.Catalog) error { return c.Bind("mcp", m.handle, nil) }

type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

const (
	errParse          = -32700
	errInvalidRequest = -32600
	errMethodNotFound = -32601
	errInvalidParams  = -32602
)

func (m *Endpoint) handle(ctx context.Context, req *catalog.Request) (any, error) {
	if !m.originAllowed(req) {
		return originRefused(req.Header.Get("Origin")), nil
	}
	if req.Method == http.MethodGet || req.Method == http.MethodHead {
		return m.get(req), nil
	}
	var rpc rpcRequest
	if err := json.Unmarshal(req.Body, &rpc); err != nil {
		return reply(rpcResponse{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{Code: errParse, Message: "the body must be one JSON-RPC 2.0 message"}}), nil
	}
	if rpc.JSONRPC != "2.0" || rpc.Method == "" {
		return reply(rpcResponse{JSONRPC: "2.0", ID: orNull(rpc.ID), Error: &rpcError{Code: errInvalidRequest, Message: "not a JSON-RPC 2.0 request"}}), nil
	}
	if len(rpc.ID) == 0 { // a notification (notifications/initialized, cancelled): accepted, no answer
		return &catalog.Raw{Status: http.StatusAccepted, ContentType: "application/json"}, nil
	}
	if revision, caps := modernMeta(rpc.Params); revision != "" {
		if perr := checkModern(req.Header, rpc, revision, caps); perr != nil {
			return refuse(rpc, perr), nil
		}
		return m.modern(ctx, req, rpc), nil
	}
	if perr := checkLegacyHeader(req.Header); perr != nil {
		return refuse(rpc, perr), nil
	}
	result, rerr := m.legacy(ctx, req, rpc)
	raw := reply(rpcResponse{JSONRPC: "2.0", ID: rpc.ID, Result: result, Error: rerr})
	if rpc.Method == "initialize" && rerr == nil {
		raw.Header = map[string]string{headerSessionID: sessionID(req)}
	}
	return raw, nil
}

// get answers a GET: a client asking for the standalone event stream of the session-based
// revisions learns that this server offers none (405, as 2025-11-25 and 2026-07-28 prescribe);
// anyone else reads the server's description, as at /.well-known/mcp.
func (m *Endpoint) get(req *catalog.Request) *catalog.Raw {
	if acceptsEventStream(req.Header) {
		b, _ := json.Marshal(apierr.BodyOf(&apierr.Error{Code: apierr.CodeMethod,
			Message: "this MCP server opens no server-sent event stream; POST JSON-RPC requests to /mcp"}))
		return &catalog.Raw{Status: http.StatusMethodNotAllowed, ContentType: "application/json",
			Header: map[string]string{"Allow": "GET, POST"}, Body: b}
	}
	b, _ := json.Marshal(m.r.MCPManifest())
	return &catalog.Raw{ContentType: "application/json", Body: b}
}

func acceptsEventStream(h http.Header) bool {
	for _, v := range h.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == "text/event-stream" {
				return true
			}
		}
	}
	return false
}

func reply(r rpcResponse) *catalog.Raw {
	b, _ := json.Marshal(r)
	return &catalog.Raw{ContentType: "application/json", Body: b}
}

func refuse(rpc rpcRequest, perr *protocolError) *catalog.Raw {
	raw := reply(rpcResponse{JSONRPC: "2.0", ID: orNull(rpc.ID), Error: perr.err})
	raw.Status = perr.status
	return raw
}

func orNull(id json.RawMessage) json.RawMessage {
	if len(id) == 0 {
		return json.RawMessage("null")
	}
	return id
}

// sessionID keeps a legacy client's session id, or names one. The endpoint is stateless: the
// id is only echoed, so any appliance process can answer any request.
func sessionID(req *catalog.Request) string {
	if s := req.Header.Get(headerSessionID); s != "" {
		return s
	}
	return "stateless"
}

const instructions = "Each tool is one paid route. An unpaid tools/call returns isError with the x402 PaymentRequired " +
	"object; sign it and repeat the call with params._meta[\"x402/payment\"] set to the PaymentPayload."

func (m *Endpoint) serverInfo() map[string]any {
	return map[string]any{"name": "peage", "title": "péage", "version": m.version, "icons": m.r.Icons()}
}

func capabilities() map[string]any {
	return map[string]any{"tools": map[string]any{"listChanged": false}}
}

// legacy serves a request of the initialize-based revisions.
func (m *Endpoint) legacy(ctx context.Context, req *catalog.Request, rpc rpcRequest) (any, *rpcError) {
	switch rpc.Method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(rpc.Params, &p)
		return map[string]any{
			"protocolVersion": negotiate(p.ProtocolVersion),
			"capabilities":    capabilities(),
			"serverInfo":      m.serverInfo(),
			"instructions":    instructions,
		}, nil
	case "ping":
		return map[string]any{}, nil
	case "tools/list":
		return map[string]any{"tools": m.r.Tools()}, nil
	case "tools/call":
		return m.call(ctx, req, rpc.Params)
	}
	return nil, &rpcError{Code: errMethodNotFound, Message: "method " + rpc.Method + " is not served; this endpoint offers tools"}
}

// modern serves a 2026-07-28 request: every result says it is complete, the list results say
// how long they may be cached, and an unknown method is a 404.
func (m *Endpoint) modern(ctx context.Context, req *catalog.Request, rpc rpcRequest) *catalog.Raw {
	var result map[string]any
	switch rpc.Method {
	case "server/discover":
		result = map[string]any{
			"supportedVersions": render.MCPProtocolVersions,
			"capabilities":      capabilities(),
			"instructions":      instructions,
			"_meta":             map[string]any{metaServerInfo: m.serverInfo()},
			"ttlMs":             discoverTTLMillis, "cacheScope": cacheScopePublic,
		}
	case "tools/list":
		result = map[string]any{"tools": m.r.Tools(), "ttlMs": toolsListTTLMillis, "cacheScope": cacheScopePublic}
	case "tools/call":
		res, rerr := m.call(ctx, req, rpc.Params)
		if rerr != nil {
			return reply(rpcResponse{JSONRPC: "2.0", ID: rpc.ID, Error: rerr})
		}
		result = res
	default:
		return refuse(rpc, &protocolError{http.StatusNotFound, &rpcError{Code: errMethodNotFound,
			Message: "method " + rpc.Method + " is not served; this endpoint offers server/discover, tools/list and tools/call"}})
	}
	result["resultType"] = "complete"
	return reply(rpcResponse{JSONRPC: "2.0", ID: rpc.ID, Result: result})
}

func (m *Endpoint) call(ctx context.Context, outer *catalog.Request, params json.RawMessage) (map[string]any, *rpcError) {
	var p struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
		Meta      map[string]any `json:"_meta"`
	}
	dec := json.NewDecoder(strings.NewReader(string(params)))
	dec.UseNumber()
	if err := dec.Decode(&p); err != nil || p.Name == "" {
		return nil, &rpcError{Code: errInvalidParams, Message: "tools/call needs a tool name and arguments"}
	}
	e := m.tools[p.Name]
	if e == nil {
		return nil, &rpcError{Code: errInvalidParams, Message: "unknown tool " + p.Name}
	}
	header := http.Header{}
	if err := paywall.MCPPaymentHeader(p.Meta, header); err != nil {
		return m.errorResult(e, err, nil), nil
	}
	req := &catalog.Request{Method: e.Method, Path: e.Path, Header: header, ClientIP: outer.ClientIP, BaseURL: outer.BaseURL}
	if p.Arguments == nil {
		p.Arguments = map[string]any{}
	}
	// /mcp's deadline outlasts every tool and its settlement (catalog table), so the call's
	// context bounds it: a client gone or the server shutting down stops the work.
	out, hdr, err := m.invoker.Invoke(ctx, e, p.Arguments, req)
	meta := map[string]any{}
	if receipt := paywall.MCPPaymentResponse(hdr); receipt != nil {
		meta[paywall.MCPMetaPaymentResponse] = receipt
	}
	if err != nil {
		return m.errorResult(e, err, meta), nil
	}
	res := map[string]any{"content": content(e, out), "isError": false}
	var structured map[string]any
	if out.ContentType == "application/json" && json.Unmarshal(out.Body, &structured) == nil {
		res["structuredContent"] = structured
	}
	if len(meta) > 0 {
		res["_meta"] = meta
	}
	return res, nil
}

func content(e *catalog.Entry, out *catalog.Raw) []any {
	switch {
	case strings.HasPrefix(out.ContentType, "image/"):
		return []any{map[string]any{"type": "image", "mimeType": out.ContentType, "data": base64.StdEncoding.EncodeToString(out.Body)}}
	case strings.HasPrefix(out.ContentType, "application/pdf"):
		return []any{map[string]any{"type": "resource", "resource": map[string]any{
			"uri": "peage://" + e.ID, "mimeType": out.ContentType, "blob": base64.StdEncoding.EncodeToString(out.Body)}}}
	}
	return []any{map[string]any{"type": "text", "text": string(out.Body)}}
}

// errorResult renders a failed call as a tool result. A payment error carries the
// PaymentRequired object both as structuredContent and as text, as the x402 MCP transport asks.
func (m *Endpoint) errorResult(e *catalog.Entry, err error, meta map[string]any) map[string]any {
	ae := apierr.From(err)
	res := map[string]any{"isError": true}
	if len(meta) > 0 {
		res["_meta"] = meta
	}
	if ae.Code == apierr.CodePayment {
		obj, cerr := m.chal.ChallengeObject(e, err)
		if cerr == nil {
			b, _ := json.Marshal(obj)
			res["structuredContent"] = obj
			res["content"] = []any{map[string]any{"type": "text", "text": string(b)}}
			return res
		}
		ae = apierr.From(cerr)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		ae = apierr.From(context.DeadlineExceeded)
	}
	body := apierr.BodyOf(ae)
	b, _ := json.Marshal(body)
	res["structuredContent"] = body
	res["content"] = []any{map[string]any{"type": "text", "text": string(b)}}
	return res
}
