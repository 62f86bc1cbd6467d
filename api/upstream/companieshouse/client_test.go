package companieshouse

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

// TestRequestsAndAnswers checks the path, the query and the Basic authentication of each
// call, and decodes the recorded answers.
func TestRequestsAndAnswers(t *testing.T) {
	s := upstreamtest.New(t)
	c := New(s.Client(t, Name))
	ctx := context.Background()
	tests := []struct {
		name, fixture, path, query string
		call                       func() error
	}{
		{"search", "search_FC040879.json", "/search/companies", "items_per_page=5&q=absa+uk&start_index=0", func() error {
			r, err := c.SearchCompanies(ctx, "absa uk", 5)
			if err == nil && (r.TotalResults != 1 || r.Items[0].CompanyNumber != "FC040879") {
				err = errors.New("bad search answer")
			}
			return err
		}},
		{"profile", "profile_00445790.json", "/company/00445790", "", func() error {
			p, err := c.Profile(ctx, "00445790")
			if err == nil && (p.CompanyName != "TESCO PLC" || p.ConfirmationStatement == nil || p.Links.Exemptions == "" || p.Links.PSC != "") {
				err = errors.New("bad profile")
			}
			return err
		}},
		{"officers", "officers_00445790.json", "/company/00445790/officers", "items_per_page=100&start_index=0", func() error {
			o, err := c.Officers(ctx, "00445790")
			if err == nil && (o.ActiveCount != 11 || o.Items[1].Nationality != "British" || o.Items[1].DateOfBirth == nil) {
				err = errors.New("bad officers")
			}
			return err
		}},
		{"psc", "psc_03977902.json", "/company/03977902/persons-with-significant-control", "items_per_page=100&start_index=0", func() error {
			p, err := c.PSCs(ctx, "03977902")
			if err == nil && (p.ActiveCount != 1 || len(p.Items[0].NaturesOfControl) != 3) {
				err = errors.New("bad psc")
			}
			return err
		}},
		{"exemptions", "exemptions_00445790.json", "/company/00445790/exemptions", "", func() error {
			e, err := c.Exemptions(ctx, "00445790")
			if err == nil && e.Exemptions["psc_exempt_as_trading_on_uk_regulated_market"].ExemptionType == "" {
				err = errors.New("bad exemptions")
			}
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.Handle(upstreamtest.File(t, "testdata/"+tt.fixture))
			if err := tt.call(); err != nil {
				t.Fatal(err)
			}
			r := s.Last()
			if r.URL.Path != tt.path || r.URL.RawQuery != tt.query {
				t.Errorf("request = %s?%s, want %s?%s", r.URL.Path, r.URL.RawQuery, tt.path, tt.query)
			}
			if user, pass, ok := r.BasicAuth(); !ok || user != "test-key" || pass != "" {
				t.Errorf("basic auth = %q %q %v, want the key as user and no password", user, pass, ok)
			}
		})
	}
}

// TestUnknownNumberIs404 needs only the status: no recorded 404 body is kept (PROVENANCE).
func TestUnknownNumberIs404(t *testing.T) {
	s := upstreamtest.New(t)
	s.Handle(http.NotFoundHandler())
	_, err := New(s.Client(t, Name)).Profile(context.Background(), "99999999")
	if !upstream.IsNotFound(err) {
		t.Fatalf("err = %v, want a 404 upstream error", err)
	}
}

// TestNoKeyNotReady: without a key the connector says it is not configured.
func TestNoKeyNotReady(t *testing.T) {
	spec, _ := upstream.Lookup(Name)
	if err := spec.Ready(); !errors.Is(err, upstream.ErrNotConfigured) {
		t.Fatalf("Ready() = %v, want ErrNotConfigured", err)
	}
}
