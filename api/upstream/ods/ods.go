// Package ods reads Opendatasoft Explore API v2.1 portals (BODACC, BOAMP,
// data.economie.gouv.fr, data.education.gouv.fr): one query shape, one envelope.
// It is a helper of those connectors, not an upstream of its own.
package ods

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"net/url"

	"github.com/peage/appliance/api/upstream/httpc"
)

// MaxLimit is the largest page the records endpoint serves.
const MaxLimit = 100

// Query is an ODSQL records query.
type Query struct {
	Where   string
	OrderBy string
	Select  string
	Limit   int
	Offset  int
}

// Page is the records envelope: {"total_count": N, "results": [...]}.
type Page[T any] struct {
	TotalCount int `json:"total_count"`
	Results    []T `json:"results"`
}

// Records runs q on dataset.
func Records[T any](ctx context.Context, c *httpc.Client, dataset string, q Query) (*Page[T], error) {
	v := url.Values{}
	if q.Where != "" {
		v.Set("where", q.Where)
	}
	if q.OrderBy != "" {
		v.Set("order_by", q.OrderBy)
	}
	if q.Select != "" {
		v.Set("select", q.Select)
	}
	limit := q.Limit
	if limit <= 0 || limit > MaxLimit {
		limit = MaxLimit
	}
	v.Set("limit", strconv.Itoa(limit))
	if q.Offset > 0 {
		v.Set("offset", strconv.Itoa(q.Offset))
	}
	var p Page[T]
	if err := c.GetJSON(ctx, "/api/explore/v2.1/catalog/datasets/"+dataset+"/records", v, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// Quote makes s an ODSQL string literal.
func Quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// JSONString is a field that Opendatasoft serves as JSON text inside a string (BODACC's
// jugement, depot, listepersonnes…), or null. Some exports serve the same field as the JSON
// object itself; both are kept as JSON text.
type JSONString string

func (s *JSONString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*s = ""
	case len(b) > 0 && b[0] == '"':
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = JSONString(v)
	default:
		*s = JSONString(b)
	}
	return nil
}

// Decode parses the embedded JSON into v; it reports false for null or empty fields.
func (s JSONString) Decode(v any) bool {
	if strings.TrimSpace(string(s)) == "" {
		return false
	}
	return json.Unmarshal([]byte(s), v) == nil
}

// Values is a multivalued field: a JSON list in Explore v2.1, one comma-separated string in
// the records API v1 and in some exports ("880878145,880 878 145").
type Values []string

func (v *Values) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*v = nil
		return nil
	case len(b) > 0 && b[0] == '[':
		var l []string
		if err := json.Unmarshal(b, &l); err != nil {
			return err
		}
		*v = l
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*v = nil
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*v = append(*v, p)
		}
	}
	return nil
}
