package mcp

import (
	"encoding/json"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/peage/appliance/api/catalog"
)

// The Streamable HTTP transport's security rule: a server MUST validate the Origin header of
// every request and answer 403 when it is present and invalid, against DNS rebinding (a page
// whose name is made to point at the box scripts it from the visitor's browser, with a Host
// that agrees with its Origin: so Host proves nothing). A request without Origin comes from no
// browser and passes. Valid: the box's own origin (base_url), a loopback origin (a page on the
// caller's own machine, such as the MCP Inspector), and the origins the operator allows
// (api.mcp_allowed_origins; "*" allows every one).

// AllowOrigins sets the browser origins allowed besides the box's own and loopback ones.
func (m *Endpoint) AllowOrigins(origins []string) *Endpoint {
	m.origins = map[string]bool{}
	for _, o := range origins {
		if o == "*" {
			m.anyOrigin = true
			continue
		}
		m.origins[normalOrigin(o)] = true
	}
	return m
}

func (m *Endpoint) originAllowed(req *catalog.Request) bool {
	origin := req.Header.Get("Origin")
	if origin == "" || m.anyOrigin {
		return true
	}
	o := normalOrigin(origin)
	if o == normalOrigin(req.BaseURL) || m.origins[o] {
		return true
	}
	u, err := url.Parse(o)
	if err != nil {
		return false
	}
	if strings.EqualFold(u.Hostname(), "localhost") {
		return true
	}
	a, err := netip.ParseAddr(u.Hostname())
	return err == nil && a.IsLoopback()
}

// normalOrigin is scheme://host[:port] in lower case, the scheme's default port left out.
func normalOrigin(s string) string {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Scheme == "" || u.Host == "" {
		return strings.ToLower(strings.TrimSpace(s))
	}
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	if port != "" {
		return scheme + "://" + net.JoinHostPort(host, port)
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return scheme + "://" + host
}

func originRefused(origin string) *catalog.Raw {
	b, _ := json.Marshal(rpcResponse{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{Code: errInvalidRequest,
		Message: "Origin " + origin + " is not allowed to use this MCP server (api.mcp_allowed_origins)"}})
	return &catalog.Raw{Status: http.StatusForbidden, ContentType: "application/json", Body: b}
}
