package paywall

import (
	"net/netip"
	"net/url"
	"strings"

	"github.com/peage/appliance/api/catalog"
)

// The x402 Bazaar declaration (coinbase/x402 specs/extensions/bazaar.md): the 402 of every
// paid route carries extensions.bazaar, an info object (how to call the route, with the
// catalog's valid example, and an example answer) and the JSON Schema that validates it. A
// Bazaar facilitator catalogues the route from it when a payment for it settles. Everything
// here is derived from the catalog entry: input schema from its typed params, output schema
// and example from its documented answer.

// ExtBazaar is the extension's key in PaymentRequired.extensions.
const ExtBazaar = "bazaar"

// ServiceName is the service's name in the Bazaar: printable ASCII of at most 32 characters,
// which the product's accented name is not.
const ServiceName = "peage"

// IconPath is where the box serves the icon the Bazaar shows beside its routes.
const IconPath = "/icon.svg"

// publicHost reports whether baseURL's host is one the Bazaar keeps an iconUrl on
// (specs/extensions/bazaar.md, "Service Metadata"): not an IP literal, a loopback name, an
// all-digit or a hex host. Elsewhere the icon's URL would only be bytes that every
// facilitator drops.
func publicHost(baseURL string) bool {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil {
		return false
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	_, ipErr := netip.ParseAddr(host)
	allDigits := strings.Trim(host, "0123456789") == ""
	hex := strings.HasPrefix(host, "0x") && strings.Trim(host[2:], "0123456789abcdef") == ""
	return ipErr != nil && !loopbackNames[host] && !allDigits && !hex
}

var loopbackNames = map[string]bool{"localhost": true, "localhost.localdomain": true, "ip6-localhost": true, "ip6-loopback": true}

// maxTags is the Bazaar's limit on a resource's tags.
const maxTags = 5

// Tags are the topical tags of e: its family and the words of its ID ("fr.score-entreprise"
// → fr, score-entreprise), without the variant suffixes.
func Tags(e *catalog.Entry) []string {
	var tags []string
	seen := map[string]bool{}
	for _, t := range append([]string{e.Family}, strings.Split(e.ID, ".")...) {
		if t == "" || t == "partial" || seen[t] || len(t) > 32 || len(tags) == maxTags {
			continue
		}
		seen[t] = true
		tags = append(tags, t)
	}
	return tags
}

const jsonSchema2020 = "https://json-schema.org/draft/2020-12/schema"

// bazaarDetail says how much of the schemas the declaration carries. The 402 of every paid
// call carries it, so by default it is terse: the input schema without the parameters'
// descriptions (OpenAPI, llms.txt and the MCP tools carry that prose). When that still makes the
// header too large for the crawlers, bare also leaves out defaults, long enums (the server names
// the valid values in its 400) and the output schema and example below the top-level fields.
// The input example and the input's types and constraints always stay.
type bazaarDetail uint8

const (
	bazaarTerse bazaarDetail = iota
	bazaarBare
)

func bazaarHTTP(e *catalog.Entry, d bazaarDetail) map[string]any {
	example := typedExample(e)
	in := inputSchema(e, d)
	input := map[string]any{"type": "http", "method": e.Method}
	inputProps := map[string]any{
		"type":   map[string]any{"type": "string", "const": "http"},
		"method": map[string]any{"type": "string", "enum": []string{e.Method}},
	}
	required := []string{"type", "method"}
	if e.Method == "POST" {
		input["bodyType"], input["body"] = "json", example
		inputProps["bodyType"] = map[string]any{"type": "string", "enum": []string{"json"}}
		inputProps["body"] = in
		required = append(required, "bodyType", "body")
	} else {
		input["queryParams"] = example
		inputProps["queryParams"] = in
	}
	return declaration(e, input, map[string]any{"type": "object", "properties": inputProps, "required": required, "additionalProperties": false}, d)
}

// typedExample is the catalog's example with each value as its parameter's type ("2024" for
// a text year, ["bitcoin", "ethereum"] for a list), so that it validates against the input
// schema; the server reads the query text form of the same values alike.
func typedExample(e *catalog.Entry) map[string]any {
	out := make(map[string]any, len(e.Example))
	args, err := e.Decode(e.Example)
	for k, v := range e.Example {
		if typed, ok := args[k]; ok && err == nil {
			v = typed
		}
		out[k] = v
	}
	return out
}

// BazaarMCP is the declaration of e called as an MCP tool (transport streamable-http). The
// tool is named both "toolName" (what @x402/extensions 2.27 reads) and "tool" (the spec's
// field name).
func BazaarMCP(e *catalog.Entry) map[string]any {
	example := typedExample(e)
	name := e.ToolName()
	input := map[string]any{"type": "mcp", "toolName": name, "tool": name, "transport": "streamable-http",
		"inputSchema": e.Schema(), "example": example}
	str := map[string]any{"type": "string"}
	props := map[string]any{
		"type": map[string]any{"type": "string", "const": "mcp"}, "toolName": str, "tool": str,
		"transport":   map[string]any{"type": "string", "enum": []string{"streamable-http"}},
		"inputSchema": map[string]any{"type": "object"}, "example": map[string]any{"type": "object"},
	}
	return declaration(e, input, map[string]any{"type": "object", "properties": props,
		"required": []string{"type", "toolName", "inputSchema"}, "additionalProperties": false}, bazaarTerse)
}

func declaration(e *catalog.Entry, input, inputSchema map[string]any, d bazaarDetail) map[string]any {
	info := map[string]any{"input": input}
	props := map[string]any{"input": inputSchema}
	if out := e.OutputSchema(); out != nil {
		example := e.OutputExample()
		out = withoutEmptyProperties(withoutDescription(out))
		if d == bazaarBare {
			example, out = topLevel(example), map[string]any{"type": "object"}
		}
		info["output"] = map[string]any{"type": "json", "example": example}
		props["output"] = map[string]any{"type": "object", "required": []string{"type"},
			"properties": map[string]any{"type": map[string]any{"type": "string"}, "example": out}}
	} else {
		info["output"] = map[string]any{"type": "binary", "format": e.MediaType()}
		props["output"] = map[string]any{"type": "object", "required": []string{"type"},
			"properties": map[string]any{"type": map[string]any{"type": "string"}, "format": map[string]any{"type": "string"}}}
	}
	return map[string]any{"info": info, "schema": map[string]any{
		"$schema": jsonSchema2020, "type": "object", "properties": props, "required": []string{"input"},
	}}
}

// inputSchema is the entry's parameter schema, its descriptions left out when terse.
func inputSchema(e *catalog.Entry, d bazaarDetail) map[string]any {
	s := e.Schema()
	props := map[string]any{}
	for name, p := range s["properties"].(map[string]any) {
		props[name] = pare(p.(map[string]any), d)
	}
	s["properties"] = props
	if s["additionalProperties"] == true {
		delete(s, "additionalProperties") // JSON Schema's default
	}
	return s
}

// longEnum is the size from which a bare declaration leaves an enum out.
const longEnum = 12

// pare is a parameter's schema without its description, and when bare also without its
// default and a long enum of its own or of its items.
func pare(s map[string]any, d bazaarDetail) map[string]any {
	out := withoutDescription(s)
	if d < bazaarBare {
		return out
	}
	delete(out, "default")
	if enum, ok := out["enum"].([]string); ok && len(enum) > longEnum {
		delete(out, "enum")
	}
	if items, ok := out["items"].(map[string]any); ok {
		out["items"] = pare(items, d)
	}
	return out
}

// topLevel is an example answer with nested objects and arrays left empty.
func topLevel(example map[string]any) map[string]any {
	out := make(map[string]any, len(example))
	for k, v := range example {
		switch v.(type) {
		case map[string]any:
			v = map[string]any{}
		case []any:
			v = []any{}
		}
		out[k] = v
	}
	return out
}

// withoutDescription is a schema without its top-level prose (the output schema's spec
// text is for OpenAPI readers; the 402 header has no room for it).
func withoutDescription(s map[string]any) map[string]any {
	out := make(map[string]any, len(s))
	for k, v := range s {
		if k != "description" {
			out[k] = v
		}
	}
	return out
}

// withoutEmptyProperties is an object schema without what constrains nothing, at every depth:
// properties of schema {} (the spec's untyped answer fields; the example answer beside it
// names them) and additionalProperties true. Every byte of the 402 is sent on each unpaid call.
func withoutEmptyProperties(s map[string]any) map[string]any {
	out := make(map[string]any, len(s))
	for k, v := range s {
		out[k] = v
	}
	if out["additionalProperties"] == true {
		delete(out, "additionalProperties") // JSON Schema's default
	}
	if items, ok := out["items"].(map[string]any); ok {
		out["items"] = withoutEmptyProperties(items)
	}
	props, ok := out["properties"].(map[string]any)
	if !ok {
		return out
	}
	kept := make(map[string]any, len(props))
	for name, p := range props {
		m, ok := p.(map[string]any)
		switch {
		case !ok:
			kept[name] = p
		case len(m) > 0:
			kept[name] = withoutEmptyProperties(m)
		}
	}
	if len(kept) == 0 {
		delete(out, "properties")
	} else {
		out["properties"] = kept
	}
	return out
}
