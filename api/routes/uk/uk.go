// Package uk serves the UK company routes over the Companies House Public Data API:
// /v1/uk/company, /v1/uk/officers, /v1/uk/psc and /v1/uk/company-check. Every route takes a
// company number or a name; a name is searched and the best hit (an exact name match, else
// the registrar's first hit) is the company answered for, the other hits listed in matches.
// The routes are unavailable (503 before any 402) until a Companies House key is configured.
package uk

import (
	"context"
	"errors"
	"strings"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/companieshouse"
	"github.com/peage/appliance/api/upstream/httpc"
)

// Parts are the family's collaborators.
type Parts struct {
	// Pool is the process-wide client pool: every caller of Companies House shares one token
	// bucket, so the appliance as a whole stays under the published limit.
	Pool *httpc.Pool
}

// Routes holds the handlers.
type Routes struct{ ch *companieshouse.Client }

// With builds the family; the pool must know the companies-house upstream.
func With(d Parts) (*Routes, error) {
	h, err := d.Pool.Client(companieshouse.Name)
	if err != nil {
		return nil, err
	}
	return &Routes{ch: companieshouse.New(h)}, nil
}

// Bind attaches the four handlers; each is ready once the key is configured.
func (r *Routes) Bind(c *catalog.Catalog) error {
	var errs []error
	for id, h := range map[string]catalog.Handler{
		"uk.company": r.company, "uk.officers": r.officers, "uk.psc": r.psc, "uk.company-check": r.check,
	} {
		errs = append(errs, c.Bind(id, h, r.ch.Ready))
	}
	return errors.Join(errs...)
}

// Match is a search hit offered beside the company answered for.
type Match struct {
	CompanyNumber string `json:"company_number"`
	Name          string `json:"name"`
	Status        string `json:"status"`
	Incorporation string `json:"incorporation,omitempty"`
	Address       string `json:"address,omitempty"`
}

// searchSize is how many hits a name search asks for: enough to offer alternatives.
const searchSize = 5

// resolve returns the company number the request is about, and the hits of a name search.
func (r *Routes) resolve(ctx context.Context, req *catalog.Request) (string, []Match, error) {
	if n := req.Args.Str("number"); n != "" {
		return strings.ToUpper(n), nil, nil
	}
	q := strings.TrimSpace(req.Args.Str("q"))
	res, err := r.ch.SearchCompanies(ctx, q, searchSize)
	if err != nil {
		return "", nil, err
	}
	if len(res.Items) == 0 {
		return "", nil, apierr.NotFound("no UK company matches %q at Companies House", q)
	}
	best := 0
	for i, it := range res.Items {
		if strings.EqualFold(strings.TrimSpace(it.Title), q) {
			best = i
			break
		}
	}
	matches := make([]Match, 0, len(res.Items))
	for _, it := range res.Items {
		matches = append(matches, Match{CompanyNumber: it.CompanyNumber, Name: it.Title, Status: it.CompanyStatus,
			Incorporation: it.DateOfCreation, Address: it.AddressSnippet})
	}
	return res.Items[best].CompanyNumber, matches, nil
}

// notFound turns the registrar's 404 on a company resource into ours, naming the number.
func notFound(err error, number, what string) error {
	if upstream.IsNotFound(err) {
		return apierr.NotFound("Companies House has no %s for company number %s", what, number)
	}
	return err
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
