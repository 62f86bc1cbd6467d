package render

import (
	"strconv"
	"strings"

	"github.com/peage/appliance/api/catalog"
)

// OpenAPI renders the OpenAPI 3.1.0 description of every listed route. Paid operations carry
// x-payment-info (the convention x402 indexers read) and the x402 security requirement.
func (r *Renderer) OpenAPI() map[string]any {
	paths := map[string]any{}
	for _, e := range r.cat.Entries() {
		ops, _ := paths[e.Path].(map[string]any)
		if ops == nil {
			ops = map[string]any{}
			paths[e.Path] = ops
		}
		methods := []string{e.Method}
		if e.AnyMethod {
			methods = []string{"GET", "POST"}
		}
		for i, m := range methods {
			op := r.operation(e)
			if i > 0 {
				op["operationId"] = e.ID + "." + strings.ToLower(m)
			}
			ops[strings.ToLower(m)] = op
		}
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       serviceName,
			"version":     apiVersion,
			"description": serviceDesc + " Every /v1 route accepts GET with query parameters and POST with a JSON body of the same names; the documented method is shown.",
		},
		"servers": []any{map[string]any{"url": r.info.BaseURL}},
		"tags":    r.tags(),
		"paths":   paths,
		"components": map[string]any{
			"securitySchemes": map[string]any{
				"x402": map[string]any{"type": "apiKey", "in": "header", "name": "PAYMENT-SIGNATURE",
					"description": "x402 v2 payment: base64 JSON PaymentPayload answering the PAYMENT-REQUIRED challenge of a 402 (X-PAYMENT carries v1)."},
			},
			"schemas": map[string]any{
				"Error": map[string]any{
					"type": "object", "required": []string{"error"},
					"properties": map[string]any{"error": map[string]any{
						"type": "object", "required": []string{"code", "message"},
						"properties": map[string]any{
							"code": map[string]any{"type": "string"}, "message": map[string]any{"type": "string"},
							"param": map[string]any{"type": "string"}, "upstream": map[string]any{"type": "string"},
						},
					}},
				},
				"PaymentRequiredV1": map[string]any{
					"type": "object", "required": []string{"x402Version", "accepts"},
					"properties": map[string]any{
						"x402Version":  map[string]any{"const": 1},
						"error":        map[string]any{"type": "string"},
						"accepts":      map[string]any{"type": "array", "items": map[string]any{"type": "object"}},
						"alternatives": map[string]any{"type": "array", "items": map[string]any{"type": "object"}},
					},
				},
			},
		},
	}
}

func (r *Renderer) tags() []any {
	var tags []any
	used := map[string]bool{}
	for _, e := range r.cat.Entries() {
		used[e.Family] = true
	}
	for _, f := range familyTitles {
		if used[f.id] {
			tags = append(tags, map[string]any{"name": f.id, "description": f.title})
		}
	}
	return tags
}

func errResp(desc string) map[string]any {
	return map[string]any{"description": desc, "content": map[string]any{"application/json": map[string]any{
		"schema": map[string]any{"$ref": "#/components/schemas/Error"}}}}
}

func (r *Renderer) operation(e *catalog.Entry) map[string]any {
	op := map[string]any{
		"operationId": e.ID,
		"summary":     e.Summary,
		"tags":        []string{e.Family},
	}
	var params []any
	if strings.Contains(e.Path, "{id}") {
		params = append(params, map[string]any{"name": "id", "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
	}
	if e.Method == "POST" && len(e.Params) > 0 {
		op["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": e.Schema()}}}
	} else {
		for _, p := range e.Params {
			s := e.Schema()["properties"].(map[string]any)[p.Name].(map[string]any)
			qp := map[string]any{"name": p.Name, "in": "query", "required": p.Required, "schema": s}
			if p.Doc != "" {
				qp["description"] = p.Doc
			}
			if p.Type == catalog.List {
				qp["style"], qp["explode"] = "form", false
			}
			params = append(params, qp)
		}
	}
	if len(params) > 0 {
		op["parameters"] = params
	}
	ok := map[string]any{"description": "the result"}
	if out := e.OutputSchema(); out != nil { // the answer's shape, as the Bazaar declaration and MCP give it
		ok["content"] = map[string]any{"application/json": map[string]any{"schema": out}}
	} else {
		ok["content"] = map[string]any{e.MediaType(): map[string]any{"schema": map[string]any{"type": "string"}}}
	}
	responses := map[string]any{"200": ok, "400": errResp("a parameter is missing or invalid (named in error.param); no payment is asked")}
	if e.Kind == catalog.Paid {
		responses["402"] = map[string]any{
			"description": "payment required: the x402 v2 challenge is in PAYMENT-REQUIRED; the body is the legacy v1 form",
			"headers": map[string]any{"PAYMENT-REQUIRED": map[string]any{
				"description": "base64 of the JSON PaymentRequired (x402 v2)", "schema": map[string]any{"type": "string"}}},
			"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/PaymentRequiredV1"}}},
		}
		responses["502"] = errResp("an upstream failed; nothing is charged")
		responses["504"] = errResp("the call did not finish within its deadline; nothing is charged")
		op["security"] = []any{map[string]any{"x402": []string{}}}
		op["x-payment-info"] = map[string]any{
			"protocols": []string{"x402"}, "schemes": r.schemes(), "pricingMode": "fixed", "price": USD(e.Price), "currency": "USD",
			"amount": strconv.FormatUint(e.Price, 10), "asset": r.info.Pay.Asset, "network": r.info.Pay.Network, "tier": e.Tier,
		}
	}
	responses["503"] = errResp("the route is not available on this appliance right now; nothing is charged")
	op["responses"] = responses
	if e.Status != "" {
		op["x-status"] = e.Status
	}
	if e.FreeFirstCall {
		op["x-free-first-call"] = "the first call of each UTC day per client is free"
	}
	return op
}
