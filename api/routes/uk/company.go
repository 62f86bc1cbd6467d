package uk

import (
	"context"
	"fmt"
	"strings"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream/companieshouse"
)

// source names the register every answer comes from.
const source = "Companies House Public Data API"

// Office is the registered office address.
type Office struct {
	Text       string `json:"text"` // the address on one line
	Premises   string `json:"premises,omitempty"`
	Line1      string `json:"address_line_1,omitempty"`
	Line2      string `json:"address_line_2,omitempty"`
	Locality   string `json:"locality,omitempty"`
	Region     string `json:"region,omitempty"`
	PostalCode string `json:"postal_code,omitempty"`
	Country    string `json:"country,omitempty"`
}

func office(a companieshouse.Address) Office {
	var parts []string
	for _, p := range []string{a.CareOf, a.Premises, a.AddressLine1, a.AddressLine2, a.Locality, a.Region, a.PostalCode, a.Country} {
		if p = strings.TrimSpace(p); p != "" {
			parts = append(parts, p)
		}
	}
	return Office{Text: strings.Join(parts, ", "), Premises: a.Premises, Line1: a.AddressLine1, Line2: a.AddressLine2,
		Locality: a.Locality, Region: a.Region, PostalCode: a.PostalCode, Country: a.Country}
}

// Accounts are the filing dates of the annual accounts.
type Accounts struct {
	NextDue      string `json:"next_due"`
	NextMadeUpTo string `json:"next_made_up_to"`
	LastMadeUpTo string `json:"last_made_up_to"`
	LastType     string `json:"last_type"`
	Overdue      bool   `json:"overdue"`
}

// Confirmation is the confirmation statement's dates; null for companies that file none.
type Confirmation struct {
	NextDue      string `json:"next_due"`
	LastMadeUpTo string `json:"last_made_up_to"`
	Overdue      bool   `json:"overdue"`
}

// PreviousName is a name the company had before.
type PreviousName struct {
	Name string `json:"name"`
	From string `json:"from"`
	To   string `json:"to"`
}

// Company is the /v1/uk/company answer.
type Company struct {
	CompanyNumber        string         `json:"company_number"`
	Name                 string         `json:"name"`
	Status               string         `json:"status"`
	Type                 string         `json:"type"`
	Jurisdiction         string         `json:"jurisdiction"`
	Incorporation        string         `json:"incorporation"`
	Cessation            string         `json:"cessation,omitempty"`
	SICCodes             []string       `json:"sic_codes"`
	RegisteredOffice     Office         `json:"registered_office"`
	Accounts             Accounts       `json:"accounts"`
	Confirmation         *Confirmation  `json:"confirmation_statement"`
	HasInsolvencyHistory bool           `json:"has_insolvency_history"`
	HasBeenLiquidated    bool           `json:"has_been_liquidated"`
	HasCharges           bool           `json:"has_charges"`
	PreviousNames        []PreviousName `json:"previous_names"`
	Matches              []Match        `json:"matches,omitempty"` // other hits of a name search
	Source               string         `json:"source"`
}

func companyOf(p *companieshouse.Profile, matches []Match) Company {
	c := Company{
		CompanyNumber: p.CompanyNumber, Name: p.CompanyName, Status: p.CompanyStatus, Type: p.Type,
		Jurisdiction: p.Jurisdiction, Incorporation: p.DateOfCreation, Cessation: p.DateOfCessation,
		SICCodes: orEmpty(p.SICCodes), RegisteredOffice: office(p.Office),
		Accounts: Accounts{NextDue: p.Accounts.NextDue, NextMadeUpTo: p.Accounts.NextMadeUpTo, LastMadeUpTo: p.Accounts.LastAccounts.MadeUpTo,
			LastType: p.Accounts.LastAccounts.Type, Overdue: p.Accounts.Overdue},
		HasInsolvencyHistory: p.HasInsolvencyHistory, HasBeenLiquidated: p.HasBeenLiquidated, HasCharges: p.HasCharges,
		PreviousNames: []PreviousName{}, Matches: matches, Source: source,
	}
	if cs := p.ConfirmationStatement; cs != nil {
		c.Confirmation = &Confirmation{NextDue: cs.NextDue, LastMadeUpTo: cs.LastMadeUpTo, Overdue: cs.Overdue}
	}
	for _, n := range p.PreviousNames {
		c.PreviousNames = append(c.PreviousNames, PreviousName{Name: n.Name, From: n.EffectiveFrom, To: n.CeasedOn})
	}
	return c
}

func (r *Routes) company(ctx context.Context, req *catalog.Request) (any, error) {
	number, matches, err := r.resolve(ctx, req)
	if err != nil {
		return nil, err
	}
	p, err := r.ch.Profile(ctx, number)
	if err != nil {
		return nil, notFound(err, number, "company")
	}
	return companyOf(p, matches), nil
}

// Officer is one officer, current or resigned.
type Officer struct {
	Name        string  `json:"name"`
	Role        string  `json:"role"`
	Appointment string  `json:"appointment"`
	Resignation *string `json:"resignation"` // null while appointed
	Active      bool    `json:"active"`
	Nationality *string `json:"nationality"` // null for corporate officers
	Occupation  string  `json:"occupation,omitempty"`
	Residence   string  `json:"country_of_residence,omitempty"`
	Birth       string  `json:"birth,omitempty"` // YYYY-MM: only month and year are public
}

// Officers is the /v1/uk/officers answer. The counts are the registrar's for every
// officer; officers lists the first page of up to 100 of them (listed says how many).
type Officers struct {
	CompanyNumber string    `json:"company_number"`
	Total         int       `json:"total"`
	ActiveCount   int       `json:"active_count"`
	ResignedCount int       `json:"resigned_count"`
	Listed        int       `json:"listed"`
	Officers      []Officer `json:"officers"`
	Matches       []Match   `json:"matches,omitempty"`
	Source        string    `json:"source"`
}

func (r *Routes) officers(ctx context.Context, req *catalog.Request) (any, error) {
	number, matches, err := r.resolve(ctx, req)
	if err != nil {
		return nil, err
	}
	o, err := r.ch.Officers(ctx, number)
	if err != nil {
		return nil, notFound(err, number, "officer list")
	}
	out := Officers{CompanyNumber: number, Total: o.TotalResults, ActiveCount: o.ActiveCount, ResignedCount: o.ResignedCount,
		Listed: len(o.Items), Officers: []Officer{}, Matches: matches, Source: source}
	for _, it := range o.Items {
		of := Officer{Name: it.Name, Role: it.OfficerRole, Appointment: it.AppointedOn, Resignation: strPtr(it.ResignedOn),
			Active: it.ResignedOn == "", Nationality: strPtr(it.Nationality), Occupation: it.Occupation, Residence: it.Country}
		if b := it.DateOfBirth; b != nil && b.Year > 0 {
			of.Birth = fmt.Sprintf("%04d-%02d", b.Year, b.Month)
		}
		out.Officers = append(out.Officers, of)
	}
	return out, nil
}

// Controller is one person with significant control.
type Controller struct {
	Name            string   `json:"name"`
	Kind            string   `json:"kind"`
	NatureOfControl []string `json:"nature_of_control"`
	NotifiedOn      string   `json:"notified_on"`
	CeasedOn        string   `json:"ceased_on,omitempty"`
	Active          bool     `json:"active"`
	Nationality     string   `json:"nationality,omitempty"`
	Residence       string   `json:"country_of_residence,omitempty"`
}

// PSC is the /v1/uk/psc answer.
type PSC struct {
	CompanyNumber string       `json:"company_number"`
	Total         int          `json:"total"`
	ActiveCount   int          `json:"active_count"`
	CeasedCount   int          `json:"ceased_count"`
	Controllers   []Controller `json:"controllers"`
	Matches       []Match      `json:"matches,omitempty"`
	Source        string       `json:"source"`
}

func (r *Routes) psc(ctx context.Context, req *catalog.Request) (any, error) {
	number, matches, err := r.resolve(ctx, req)
	if err != nil {
		return nil, err
	}
	l, err := r.ch.PSCs(ctx, number)
	if err != nil {
		return nil, notFound(err, number, "register of persons with significant control")
	}
	out := PSC{CompanyNumber: number, Total: l.TotalResults, ActiveCount: l.ActiveCount, CeasedCount: l.CeasedCount,
		Controllers: []Controller{}, Matches: matches, Source: source}
	for _, it := range l.Items {
		out.Controllers = append(out.Controllers, Controller{Name: it.Name, Kind: it.Kind, NatureOfControl: orEmpty(it.NaturesOfControl),
			NotifiedOn: it.NotifiedOn, CeasedOn: it.CeasedOn, Active: it.CeasedOn == "", Nationality: it.Nationality, Residence: it.Country})
	}
	return out, nil
}

// strPtr is nil for "", so an absent value reads null rather than "".
func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
