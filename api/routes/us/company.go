package us

import (
	"context"
	"fmt"
	"strings"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream/secedgar"
)

// Filing is one filing with the address of its main document.
type Filing struct {
	Form        string `json:"form"`
	Filed       string `json:"filed"`
	ReportDate  string `json:"report_date,omitempty"`
	Accession   string `json:"accession"`
	Description string `json:"description,omitempty"`
	DocumentURL string `json:"document_url"`
	IndexURL    string `json:"index_url"`
}

// archive is where EDGAR serves filing documents: the CIK without padding, the accession
// without dashes.
const archive = "https://www.sec.gov/Archives/edgar/data/"

// recentFilings zips the column-oriented recent filings into rows, newest first as EDGAR
// lists them; keep decides which rows are kept.
func recentFilings(cik int64, s *secedgar.Submissions, keep func(form string) bool) []Filing {
	rc := s.Filings.Recent
	var out []Filing
	for i, form := range rc.Form {
		if i >= len(rc.AccessionNumber) || i >= len(rc.FilingDate) || !keep(form) {
			continue
		}
		acc := rc.AccessionNumber[i]
		dir := fmt.Sprintf("%s%d/%s/", archive, cik, strings.ReplaceAll(acc, "-", ""))
		f := Filing{Form: form, Filed: rc.FilingDate[i], Accession: acc, IndexURL: dir + acc + "-index.htm", DocumentURL: dir + acc + "-index.htm"}
		if i < len(rc.ReportDate) {
			f.ReportDate = rc.ReportDate[i]
		}
		if i < len(rc.PrimaryDocDescription) {
			f.Description = rc.PrimaryDocDescription[i]
		}
		if i < len(rc.PrimaryDocument) && rc.PrimaryDocument[i] != "" {
			f.DocumentURL = dir + rc.PrimaryDocument[i]
		}
		out = append(out, f)
	}
	return out
}

// Address is a business or mailing address.
type Address struct {
	Street1        string `json:"street1"`
	Street2        string `json:"street2,omitempty"`
	City           string `json:"city"`
	StateOrCountry string `json:"state_or_country"`
	ZipCode        string `json:"zip_code"`
}

// Company is the /v1/us/company answer.
type Company struct {
	CIK                  string             `json:"cik"`
	Name                 string             `json:"name"`
	EntityType           string             `json:"entity_type"`
	Tickers              []string           `json:"tickers"`
	Exchanges            []string           `json:"exchanges"`
	SIC                  string             `json:"sic"`
	SICDescription       string             `json:"sic_description"`
	StateOfIncorporation string             `json:"state_of_incorporation"`
	State                *string            `json:"state"`           // the spec's name: the state of incorporation, null when EDGAR gives none
	FiscalYearEnd        string             `json:"fiscal_year_end"` // MMDD, as EDGAR gives it
	EIN                  string             `json:"ein,omitempty"`
	Category             string             `json:"category,omitempty"`
	Phone                string             `json:"phone,omitempty"`
	Addresses            map[string]Address `json:"addresses"`
	FormerNames          []FormerName       `json:"former_names"`
	LatestFiling         *Filing            `json:"latest_filing"`
	LatestAnnualReport   *Filing            `json:"latest_annual_report"` // the newest 10-K or 10-K/A
	Source               string             `json:"source"`
}

// FormerName is a name the registrant had before.
type FormerName struct {
	Name string `json:"name"`
	From string `json:"from"`
	To   string `json:"to"`
}

func (r *Routes) company(ctx context.Context, req *catalog.Request) (any, error) {
	c, err := r.resolve(ctx, req)
	if err != nil {
		return nil, err
	}
	s, err := r.sec.Submissions(ctx, c.cik)
	if err != nil {
		return nil, notFound(err, c.cik, "company")
	}
	out := Company{CIK: secedgar.CIK10(c.cik), Name: s.Name, EntityType: s.EntityType, Tickers: orEmpty(s.Tickers),
		Exchanges: orEmpty(s.Exchanges), SIC: s.SIC, SICDescription: s.SICDescription, StateOfIncorporation: s.StateOfIncorporation, State: nonBlank(s.StateOfIncorporation),
		FiscalYearEnd: s.FiscalYearEnd, EIN: s.EIN, Category: s.Category, Phone: s.Phone,
		Addresses: map[string]Address{}, FormerNames: []FormerName{}, Source: source}
	for kind, a := range s.Addresses {
		out.Addresses[kind] = Address{Street1: a.Street1, Street2: a.Street2, City: a.City, StateOrCountry: a.StateOrCountry, ZipCode: a.ZipCode}
	}
	for _, n := range s.FormerNames {
		out.FormerNames = append(out.FormerNames, FormerName(n))
	}
	if all := recentFilings(c.cik, s, func(string) bool { return true }); len(all) > 0 {
		out.LatestFiling = &all[0]
	}
	if annual := recentFilings(c.cik, s, isAnnualForm); len(annual) > 0 {
		out.LatestAnnualReport = &annual[0]
	}
	return out, nil
}

func isAnnualForm(form string) bool { return form == "10-K" || form == "10-K/A" }

// maxFilings bounds the list; EDGAR's recent window holds up to 1,000 filings.
const maxFilings = 100

// Filings is the /v1/us/filings answer.
type Filings struct {
	CIK       string   `json:"cik"`
	Name      string   `json:"name"`
	Form      string   `json:"form,omitempty"` // the type asked for
	Total     int      `json:"total"`          // matching filings in EDGAR's recent window
	Truncated bool     `json:"truncated"`      // more than maxFilings matched; the newest are listed
	Filings   []Filing `json:"filings"`
	Window    string   `json:"window"`
	Source    string   `json:"source"`
}

func (r *Routes) filings(ctx context.Context, req *catalog.Request) (any, error) {
	c, err := r.resolve(ctx, req)
	if err != nil {
		return nil, err
	}
	s, err := r.sec.Submissions(ctx, c.cik)
	if err != nil {
		return nil, notFound(err, c.cik, "company")
	}
	form := strings.ToUpper(strings.TrimSpace(req.Args.Str("type")))
	// A type matches its amendments too: asking for 10-K also lists 10-K/A.
	keep := func(f string) bool { return form == "" || f == form || f == form+"/A" }
	all := recentFilings(c.cik, s, keep)
	out := Filings{CIK: secedgar.CIK10(c.cik), Name: s.Name, Form: form, Total: len(all), Filings: orEmpty(all),
		Window: "EDGAR's recent filings (the last 1,000 or the last year, whichever is more); older ones are not searched", Source: source}
	if len(all) > maxFilings {
		out.Filings, out.Truncated = all[:maxFilings], true
	}
	return out, nil
}

// nonBlank is s, or null when EDGAR leaves it blank.
func nonBlank(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
