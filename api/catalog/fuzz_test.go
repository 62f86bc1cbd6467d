package catalog

import (
	"encoding/json"
	"testing"

	"github.com/peage/appliance/api/apierr"
)

// FuzzDecode feeds arbitrary JSON bodies and query text to every entry's decoder: it must never
// panic, and every refusal must be a 400 that names a declared parameter.
func FuzzDecode(f *testing.F) {
	c, err := Default(DefaultNames())
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{`{"siren":"542065479"}`, `{"lat":"91","lon":2}`, `{"messages":["a"],"labels":["x","y"]}`,
		`{"jours":7.5}`, `{"tokens":"0x1,0x2"}`, `{"url":"javascript:alert(1)"}`, `{"fullPage":"maybe"}`, `{"stops":"1,2|3,4"}`} {
		f.Add(seed, "q")
	}
	entries := c.Entries()
	f.Fuzz(func(t *testing.T, body, text string) {
		var raw map[string]any
		if json.Unmarshal([]byte(body), &raw) != nil {
			raw = map[string]any{}
		}
		for _, e := range entries {
			in := map[string]any{}
			for k, v := range raw {
				in[k] = v
			}
			for _, p := range e.Params {
				if _, ok := in[p.Name]; !ok {
					in[p.Name] = text
				}
			}
			_, err := e.Decode(in)
			if err == nil {
				continue
			}
			ae, ok := err.(*apierr.Error)
			if !ok || ae.Code != apierr.CodeBadParam || ae.Status() != 400 {
				t.Fatalf("%s: refusal %v is not a 400 bad_param", e.ID, err)
			}
			found := false
			for _, p := range e.Params {
				found = found || p.Name == ae.Param
			}
			if !found {
				t.Fatalf("%s: refusal names %q, not a declared parameter", e.ID, ae.Param)
			}
		}
	})
}
