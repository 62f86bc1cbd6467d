package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
)

// TestGetListsCarryItemsWithCommas: a list parameter in a query is comma-separated text, JSON
// array text, or the key repeated, so items holding commas reach the route whole; a parameter
// that is not a list, repeated, and JSON array text that is not an array of strings are a 400
// naming the parameter, before any 402.
func TestGetListsCarryItemsWithCommas(t *testing.T) {
	cat, _ := catalog.Default(catalog.DefaultNames())
	if err := cat.Bind("extract-structured", func(_ context.Context, r *catalog.Request) (any, error) {
		return map[string]any{"fields": r.Args.List("fields")}, nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	h := apitest.Start(t, cat, apitest.Options{}) // the challenge-only gate: a 400 must come before its 402
	free := apitest.Start(t, cat, apitest.Options{Gate: &apitest.RecordingGate{}})
	page := "url=https%3A%2F%2Fexample.com%2F"
	for _, tc := range []struct {
		name, query string
		status      int
		want        []string // the items the route received
		param       string   // the parameter a 400 names
	}{
		{"comma-separated text", "&fields=price,rating", 200, []string{"price", "rating"}, ""},
		{"JSON array text", `&fields=` + `%5B%22price%2C%20incl.%20VAT%22%2C%22rating%22%5D`, 200, []string{"price, incl. VAT", "rating"}, ""},
		{"repeated keys", "&fields=price%2C%20incl.%20VAT&fields=rating&fields=stock", 200, []string{"price, incl. VAT", "rating", "stock"}, ""},
		{"JSON array text of numbers", "&fields=%5B1%2C2%5D", 400, nil, "fields"},
		{"a parameter that is not a list, repeated", "&fields=price&url=https%3A%2F%2Fexample.org%2F", 400, nil, "url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, srv := range []*apitest.Harness{free, h} {
				resp, err := srv.Client.Get(srv.BaseURL + "/v1/extract-structured?" + page + tc.query)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				var body struct {
					Fields []string `json:"fields"`
					Error  struct {
						Param string `json:"param"`
					} `json:"error"`
				}
				_ = json.Unmarshal(b, &body)
				switch {
				case tc.status == 200 && srv == h:
					if resp.StatusCode != http.StatusPaymentRequired {
						t.Errorf("unpaid: %d %s, want 402", resp.StatusCode, b)
					}
				case resp.StatusCode != tc.status:
					t.Errorf("%d %s, want %d", resp.StatusCode, b, tc.status)
				case tc.status == 200 && !equal(body.Fields, tc.want):
					t.Errorf("the route received %q, want %q", body.Fields, tc.want)
				case tc.status == 400 && body.Error.Param != tc.param:
					t.Errorf("the 400 names %q, want %q: %s", body.Error.Param, tc.param, b)
				}
			}
		})
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
