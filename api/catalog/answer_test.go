package catalog

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestMissingFieldsFollowsTheSpec: the fields a route's answer must carry are read from the
// spec's Response cell, nested objects, arrays of objects and the described result objects
// included; a named field is present (null allowed) with the spec's type, and more fields
// are fine.
func TestMissingFieldsFollowsTheSpec(t *testing.T) {
	c, err := Default(DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, answer string
		want               []string
	}{
		{"all there, one extra", "/v1/email/validate", `{"email":"a@b.fr","valid":true,"mx":null,"more":1}`, nil},
		{"a field absent", "/v1/email/validate", `{"email":"a@b.fr","valid":true}`, []string{"mx"}},
		{"null is present", "/v1/email/validate", `{"email":null,"valid":null,"mx":null}`, nil},
		{"a typed field of another type", "/v1/email/validate", `{"email":"a@b.fr","valid":"yes","mx":[]}`, []string{"valid (not boolean)"}},
		{"inside an object", "/v1/domain/health", `{"dns":{"a":[],"mx":[]},"tls":{"issuer":"R3","days_left":3},"http":{"final_status":200,"redirect_chain":[],"security_headers":{}}}`,
			[]string{"tls.expiry", "tls.authorized"}},
		{"inside the items of an array", "/v1/url/unwrap", `{"final_url":"u","hops":1,"domain_changed":false,"chain":[{"url":"u","status":301,"location":"v"},{"url":"v","status":200}]}`,
			[]string{"chain[].location"}},
		{"variants spelled out (SP95/98)", "/v1/fr/carburants", `{"cp":"80000","stations":[{"nom":"x","prix":{"gazole":1.7,"sp95":1.8,"SP98":null,"E85":null,"GPL":null}}]}`,
			[]string{"stations[].prix.SP95"}},
		{"a described result object", "/v1/agent/task", `{"capability":"c","workflow":"w","answer":"a","steps":[{"id":"s","statut":"COMPLETED"}],"verification":{"passe":true,"controles":[],"echecs":[]},"actual_cost":"0.01","latency_ms":1}`,
			[]string{"steps[].cout_reel_usd", "actual_cost (not number)"}},
		{"the verification block by its name", "/v1/understand", `{"answer":"a","sources":[],"evidence":[],"verification":{"passe":true},"providers_used":[],"cost":{},"latency_ms":1}`,
			[]string{"verification.controles", "verification.echecs"}},
		{"prose after plus is no field", "/v1/fr/entreprise", `{"query":"q","total":1,"results":[{"siren":"1","nom":"n"}]}`, nil},
		{"an acronym in a list is no key", "/v1/us/snapshot", `{"name":"n","revenue_growth_pct":1,"net_margin_pct":2,"revenue":3}`, nil},
		{"a described detail is no field", "/v1/social/thread", `{"post":{"source":"s","title":"t","score":1,"text":"x"},"comment_count":0,"comments":[]}`, nil},
		{"an English gloss of a French key", "/v1/fr/insee-commune", `{"insee":"1","nom":"n","population":1,"densite_hab_km2":1,"surface_km2":2,"departement":null,"region":null}`, nil},
		{"a field table outside the resources (the gas response)", "/v1/chain/gas", `{"chain":"base","chain_id":8453,"network":"eip155:8453","block_number":1,"gas_price_wei":"1","gas_price_gwei":0.1,"base_fee_gwei":0.1,"note":"","source":"","next":{},"this_route":"/v1/chain/gas"}`,
			[]string{"priority_fee_gwei"}},
		{"a binary answer has no fields", "/v1/screenshot", `{}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := c.ByPath(tc.path)
			var v any
			if err := json.Unmarshal([]byte(tc.answer), &v); err != nil {
				t.Fatal(err)
			}
			if got := e.MissingFields(v); !slices.Equal(got, tc.want) {
				t.Errorf("%s lacks %q, want %q", tc.path, got, tc.want)
			}
		})
	}
}

// TestOutputSchemaAdmitsNullWhereUnknown: the schema of every field the spec types admits
// null (a field is always present, null when unknown: verif-artisan's certifie_rge when ADEME
// does not answer), and keeps the spec's type otherwise; the answer itself is an object.
func TestOutputSchemaAdmitsNullWhereUnknown(t *testing.T) {
	c, err := Default(DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	s := c.ByPath("/v1/fr/verif-artisan").OutputSchema()
	if s["type"] != "object" {
		t.Fatalf("answer type %v", s["type"])
	}
	props := s["properties"].(map[string]any)
	for name, want := range map[string]string{"certifie_rge": "boolean", "procedures_collectives": "integer"} {
		if got := props[name].(map[string]any)["type"]; !slices.Equal(got.([]any), []any{want, "null"}) {
			t.Errorf("%s: type %v, want [%s null]", name, got, want)
		}
	}
	steps := c.ByPath("/v1/agent/task").OutputSchema()["properties"].(map[string]any)["steps"].(map[string]any)
	if !slices.Equal(steps["type"].([]any), []any{"array", "null"}) || steps["items"].(map[string]any)["type"] != "object" {
		t.Errorf("steps schema %v", steps)
	}
}
