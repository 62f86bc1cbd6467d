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
