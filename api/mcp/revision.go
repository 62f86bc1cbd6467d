package mcp

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/peage/appliance/api/render"
)

// The MCP revisions fall in two eras (2026-07-28 basic/versioning.mdx). A legacy client
// (2025-11-25 and earlier) opens with initialize and then names its revision in the
// MCP-Protocol-Version header. A modern one (2026-07-28) has no handshake: every request
// carries its revision, identity and capabilities in params._meta, mirrored into headers
// that the server must check against the body. The endpoint serves both on the same /mcp,
// telling them apart request by request from the _meta revision.

const (
	revisionModern       = "2026-07-28"
	revisionLatestLegacy = "2025-11-25"

	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"

	headerProtocolVersion = "Mcp-Protocol-Version"
	headerMethod          = "Mcp-Method"
	headerName            = "Mcp-Name"
	headerSessionID       = "Mcp-Session-Id"

	// The errors 2026-07-28 adds, answered with HTTP 400 (streamable-http.mdx).
	errHeaderMismatch             = -32020
	errUnsupportedProtocolVersion = -32022

	base64Prefix = "=?base64?"
	base64Suffix = "?="

	// The caching hints 2026-07-28 requires on server/discover and tools/list: what they say
	// is the same for every caller, and changes only with the build (discover) or with a
	// route's availability (the tools' _meta.available).
	cacheScopePublic   = "public"
	discoverTTLMillis  = 3_600_000
	toolsListTTLMillis = 60_000
)

// legacyRevisions are the revisions an initialize can settle on, newest first.
var legacyRevisions = slices.DeleteFunc(slices.Clone(render.MCPProtocolVersions), func(v string) bool { return v >= revisionModern })

// negotiate answers an initialize: the client's revision when it is a legacy one served
// here, else the newest legacy one (an initialize cannot open the stateless era; a client
// asking for a newer revision there gets one it may accept, as the spec's negotiation asks).
func negotiate(requested string) string {
	if slices.Contains(legacyRevisions, requested) {
		return requested
	}
	return revisionLatestLegacy
}

// modernMeta is the revision a request's params._meta names when it is of the modern era
// (2026-07-28 or later, served or not), "" for a legacy request, and whether its _meta
// declares the client's capabilities (required in the modern era). A legacy revision in
// _meta selects nothing: those revisions define no such key (go-sdk reads it alike).
func modernMeta(params json.RawMessage) (revision string, hasCapabilities bool) {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil || p.Meta == nil {
		return "", false
	}
	if json.Unmarshal(p.Meta[metaProtocolVersion], &revision) != nil || revision < revisionModern {
		return "", false
	}
	caps := p.Meta[metaClientCapabilities]
	return revision, len(caps) > 0 && caps[0] == '{'
}

// protocolError is a JSON-RPC error answered with its own HTTP status, as the modern
// streamable HTTP binding requires for version, header and unknown-method errors.
type protocolError struct {
	status int
	err    *rpcError
}

// checkModern applies 2026-07-28's server validation to a request naming revision in its
// _meta: a revision served here, headers that match the body (decoding the base64 sentinel
// form of Mcp-Name), the client's capabilities declared.
func checkModern(h http.Header, rpc rpcRequest, revision string, hasCapabilities bool) *protocolError {
	if revision != revisionModern {
		return unsupportedRevision(revision)
	}
	if got := h.Get(headerProtocolVersion); got != revision {
		return mismatch("the MCP-Protocol-Version header (" + quote(got) + ") must name the revision of params._meta (" + revision + ")")
	}
	if got := h.Get(headerMethod); got != rpc.Method {
		return mismatch("the Mcp-Method header (" + quote(got) + ") must name the request's method (" + rpc.Method + ")")
	}
	if rpc.Method == "tools/call" {
		var p struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(rpc.Params, &p)
		got, ok := decodeHeaderValue(h.Get(headerName))
		if !ok || got != p.Name {
			return mismatch("the Mcp-Name header (" + quote(h.Get(headerName)) + ") must name the tool of params.name (" + quote(p.Name) + ")")
		}
	}
	if !hasCapabilities {
		return &protocolError{http.StatusBadRequest, &rpcError{Code: errInvalidParams,
			Message: "params._meta[\"" + metaClientCapabilities + "\"] must be an object (an empty one declares no capability)"}}
	}
	return nil
}

// checkLegacyHeader refuses a legacy request whose MCP-Protocol-Version header names a
// revision not served here (2025-06-18 basic/transports: 400). A request without the header
// is taken for 2025-03-26, as the spec allows.
func checkLegacyHeader(h http.Header) *protocolError {
	v := h.Get(headerProtocolVersion)
	switch {
	case v == "" || slices.Contains(legacyRevisions, v):
		return nil
	case slices.Contains(render.MCPProtocolVersions, v):
		return &protocolError{http.StatusBadRequest, &rpcError{Code: errInvalidParams,
			Message: "revision " + v + " carries params._meta[\"" + metaProtocolVersion + "\"] on every request"}}
	}
	return unsupportedRevision(v)
}

func unsupportedRevision(requested string) *protocolError {
	data, _ := json.Marshal(map[string]any{"supported": render.MCPProtocolVersions, "requested": requested})
	return &protocolError{http.StatusBadRequest, &rpcError{Code: errUnsupportedProtocolVersion,
		Message: "unsupported protocol version " + quote(requested) + "; this server speaks " + strings.Join(render.MCPProtocolVersions, ", "), Data: data}}
}

func mismatch(msg string) *protocolError {
	return &protocolError{http.StatusBadRequest, &rpcError{Code: errHeaderMismatch, Message: "header mismatch: " + msg}}
}

// decodeHeaderValue undoes the base64 sentinel encoding a client uses for a value that is not
// plain ASCII (=?base64?...?=).
func decodeHeaderValue(v string) (string, bool) {
	if !strings.HasPrefix(v, base64Prefix) || !strings.HasSuffix(v, base64Suffix) || len(v) < len(base64Prefix)+len(base64Suffix) {
		return v, v != ""
	}
	b, err := base64.StdEncoding.DecodeString(v[len(base64Prefix) : len(v)-len(base64Suffix)])
	if err != nil || !utf8.Valid(b) {
		return "", false
	}
	return string(b), true
}

func quote(s string) string {
	if s == "" {
		return "absent"
	}
	return `"` + s + `"`
}
