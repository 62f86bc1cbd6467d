package a2a

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/render"
)

// ExtensionX402 is the a2a-x402 extension's URI (spec/v0.2, section 2), declared in the card
// and accepted in the A2A-Extensions header.
const ExtensionX402 = "https://github.com/google-agentic-commerce/a2a-x402/blob/main/spec/v0.2"

// ProtocolVersion is the A2A version of the endpoint's first interface (the A2A-Version header's
// value); ProtocolVersion03 is served beside it.
const ProtocolVersion = "1.0"

// callShape is what every skill's description says a message must carry.
const callShape = `a data part {"route": "<route id or path>", "params": {...}}`

// Card is the A2A v1.0 agent card: the JSON-RPC interfaces this endpoint serves at
// baseURL+path (v1.0 first, then v0.3), one skill per route family with its routes and price
// range, and the a2a-x402 v0.2 extension, required since every skill but the free routes is
// paid. The same document is a valid v0.3 card: v0.3 clients find the endpoint in its
// top-level url, preferredTransport and protocolVersion, as the official SDKs' servers write
// them beside supportedInterfaces (a2a-python's agent_card_to_dict, a2a-js's
// toCompatAgentCard with embedV1Interfaces); every other field has the same name and shape in
// both versions.
func Card(cat *catalog.Catalog, baseURL, path string) map[string]any {
	byFamily := map[string][]*catalog.Entry{}
	for _, e := range cat.Entries() {
		if render.IsTool(e) {
			byFamily[e.Family] = append(byFamily[e.Family], e)
		}
	}
	var skills []map[string]any
	outputs := map[string]bool{}
	for _, f := range render.Families() {
		entries := byFamily[f.ID]
		if len(entries) == 0 {
			continue
		}
		modes := outputModes(entries)
		for _, m := range modes {
			outputs[m] = true
		}
		skills = append(skills, map[string]any{
			"id": f.ID, "name": f.Title,
			"description": skillDescription(f.Title, entries),
			"tags":        []string{f.ID, "x402", "pay-per-call"},
			"examples":    examples(entries),
			"inputModes":  []string{"application/json"},
			"outputModes": modes,
		})
	}
	defaultOutputs := make([]string, 0, len(outputs))
	for m := range outputs {
		defaultOutputs = append(defaultOutputs, m)
	}
	slices.Sort(defaultOutputs)
	return map[string]any{
		"name":        render.Service.Name,
		"description": render.Service.Description + " Over A2A, send a message with " + callShape + "; a paid route answers with a task in input-required carrying the x402 payment requirements (a2a-x402 v0.2), and the message carrying the signed payment completes it with the answer as an artifact.",
		"supportedInterfaces": []map[string]any{
			{"url": baseURL + path, "protocolBinding": "JSONRPC", "protocolVersion": ProtocolVersion},
			{"url": baseURL + path, "protocolBinding": "JSONRPC", "protocolVersion": ProtocolVersion03},
		},
		// v0.3's interface fields, for its clients, which read no supportedInterfaces; v1.0
		// clients ignore them (a card with supportedInterfaces is never read as v0.3).
		"url":                baseURL + path,
		"preferredTransport": "JSONRPC",
		"protocolVersion":    "0.3.0",
		"version":            render.Service.Version,
		"documentationUrl":   baseURL + "/openapi.json",
		"iconUrl":            baseURL + "/icon.svg",
		"capabilities": map[string]any{
			"streaming": false, "pushNotifications": false, "extendedAgentCard": false,
			"extensions": []map[string]any{{
				"uri": ExtensionX402, "required": true,
				"description": "Every paid route is settled per call in USDC over x402: the task's status message carries x402.payment.required, the paying message x402.payment.payload, the completed task x402.payment.receipts.",
			}},
		},
		"defaultInputModes":  []string{"application/json"},
		"defaultOutputModes": defaultOutputs,
		"skills":             skills,
	}
}

// skillDescription names the family's routes with their prices, the price range and how to
// call one: a skill has no field for them, and a client needs the route ids to call at all.
func skillDescription(title string, entries []*catalog.Entry) string {
	var low, high uint64
	var routes []string
	for i, e := range entries {
		if i == 0 || e.Price < low {
			low = e.Price
		}
		high = max(high, e.Price)
		price := "free"
		if e.Price > 0 {
			price = render.USD(e.Price) + " USDC"
		}
		routes = append(routes, fmt.Sprintf("%s (%s %s, %s): %s", e.ID, e.Method, e.Path, price, e.Summary))
	}
	span := render.USD(low) + " to " + render.USD(high) + " USDC a call"
	if low == high {
		span = render.USD(low) + " USDC a call"
	}
	return fmt.Sprintf("%s: %d routes, %s, paid over x402. Send a message with %s; the params are those of the route's HTTP call (its query or body fields, see /openapi.json). Routes: %s",
		title, len(entries), span, callShape, strings.Join(routes, " "))
}

// examples are ready-to-send data parts for the family's first routes that have an example.
func examples(entries []*catalog.Entry) []string {
	var out []string
	for _, e := range entries {
		if len(out) == 3 {
			break
		}
		if e.Example == nil {
			continue
		}
		b, err := json.Marshal(map[string]any{"route": e.ID, "params": e.Example})
		if err == nil {
			out = append(out, string(b))
		}
	}
	return out
}

func outputModes(entries []*catalog.Entry) []string {
	var modes []string
	for _, e := range entries {
		m := e.Produces
		if m == "" {
			m = "application/json"
		}
		if !slices.Contains(modes, m) {
			modes = append(modes, m)
		}
	}
	slices.Sort(modes)
	return modes
}
