package apitest_test

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
)

// recordingT keeps the errors a harness reports instead of failing the test.
type recordingT struct {
	*testing.T
	mu   sync.Mutex
	errs []string
}

func (r *recordingT) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestShapeCheckReportsMissingFields: with CheckShapes, an answer lacking a field the spec
// names for its route, or giving it another type, is reported through the test; a complete
// one (null for the unknown, more fields) is not; without CheckShapes nothing is checked.
func TestShapeCheckReportsMissingFields(t *testing.T) {
	for _, tc := range []struct {
		name   string
		check  bool
		answer map[string]any
		want   string // in the error; "" for none
	}{
		{"complete", true, map[string]any{"email": "a@b.fr", "valid": true, "mx": nil, "extra": 1}, ""},
		{"a field missing", true, map[string]any{"email": "a@b.fr", "valid": true}, "mx"},
		{"another type", true, map[string]any{"email": "a@b.fr", "valid": "yes", "mx": nil}, "valid (not boolean)"},
		{"not checked", false, map[string]any{"email": "a@b.fr"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cat, err := catalog.Default(catalog.DefaultNames())
			if err != nil {
				t.Fatal(err)
			}
			if err := cat.Bind("email.validate", func(context.Context, *catalog.Request) (any, error) { return tc.answer, nil }, nil); err != nil {
				t.Fatal(err)
			}
			rec := &recordingT{T: t}
			h := apitest.Start(rec, cat, apitest.Options{Gate: &apitest.RecordingGate{}, CheckShapes: tc.check})
			resp, err := h.Client.Get(h.BaseURL + "/v1/email/validate?" + url.Values{"email": {"a@b.fr"}}.Encode())
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(b), `"email":"a@b.fr"`) {
				t.Fatalf("%d %s: the body must reach the test whole", resp.StatusCode, b)
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			switch {
			case tc.want == "" && len(rec.errs) > 0:
				t.Errorf("reported %q", rec.errs)
			case tc.want != "" && (len(rec.errs) != 1 || !strings.Contains(rec.errs[0], tc.want)):
				t.Errorf("reported %q, want one error naming %s", rec.errs, tc.want)
			}
		})
	}
}
