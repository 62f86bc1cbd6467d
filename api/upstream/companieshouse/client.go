// Package companieshouse is the connector of the Companies House Public Data API: company
// search, profile, officers, persons with significant control (PSC), PSC statements and
// exemptions. The key goes as the user name of HTTP Basic authentication (httpc, KeyBasic).
package companieshouse

import (
	"context"
	"net/url"
	"strconv"

	"github.com/peage/appliance/api/upstream/httpc"
)

// Name is the registry name.
const Name = "companies-house"

// Client calls the API through the process-wide httpc client, whose token bucket keeps every
// route of the appliance under the published 600 requests per 5 minutes.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

// Ready is nil once the key is configured.
func (c *Client) Ready() error { return c.h.Ready() }

// Address is a registered office or correspondence address.
type Address struct {
	CareOf       string `json:"care_of"`
	Premises     string `json:"premises"`
	AddressLine1 string `json:"address_line_1"`
	AddressLine2 string `json:"address_line_2"`
	Locality     string `json:"locality"`
	Region       string `json:"region"`
	PostalCode   string `json:"postal_code"`
	Country      string `json:"country"`
}

// SearchItem is one hit of /search/companies.
type SearchItem struct {
	CompanyNumber   string  `json:"company_number"`
	Title           string  `json:"title"`
	CompanyStatus   string  `json:"company_status"`
	CompanyType     string  `json:"company_type"`
	DateOfCreation  string  `json:"date_of_creation"`
	DateOfCessation string  `json:"date_of_cessation"`
	AddressSnippet  string  `json:"address_snippet"`
	Address         Address `json:"address"`
}

// Search is the envelope of /search/companies.
type Search struct {
	TotalResults int          `json:"total_results"`
	Items        []SearchItem `json:"items"`
}

// Profile is /company/{number}.
type Profile struct {
	CompanyNumber   string   `json:"company_number"`
	CompanyName     string   `json:"company_name"`
	CompanyStatus   string   `json:"company_status"`
	Type            string   `json:"type"`
	Jurisdiction    string   `json:"jurisdiction"`
	DateOfCreation  string   `json:"date_of_creation"`
	DateOfCessation string   `json:"date_of_cessation"`
	SICCodes        []string `json:"sic_codes"`
	Office          Address  `json:"registered_office_address"`
	Accounts        struct {
		NextDue      string `json:"next_due"`
		NextMadeUpTo string `json:"next_made_up_to"`
		Overdue      bool   `json:"overdue"`
		LastAccounts struct {
			MadeUpTo string `json:"made_up_to"`
			Type     string `json:"type"`
		} `json:"last_accounts"`
	} `json:"accounts"`
	ConfirmationStatement *struct {
		NextDue      string `json:"next_due"`
		LastMadeUpTo string `json:"last_made_up_to"`
		Overdue      bool   `json:"overdue"`
	} `json:"confirmation_statement"`
	HasInsolvencyHistory       bool `json:"has_insolvency_history"`
	HasBeenLiquidated          bool `json:"has_been_liquidated"`
	HasCharges                 bool `json:"has_charges"`
	OfficeInDispute            bool `json:"registered_office_is_in_dispute"`
	UndeliverableOfficeAddress bool `json:"undeliverable_registered_office_address"`
	PreviousNames              []struct {
		Name          string `json:"name"`
		EffectiveFrom string `json:"effective_from"`
		CeasedOn      string `json:"ceased_on"`
	} `json:"previous_company_names"`
	Links struct {
		Officers      string `json:"officers"`
		PSC           string `json:"persons_with_significant_control"`
		PSCStatements string `json:"persons_with_significant_control_statements"`
		Exemptions    string `json:"exemptions"`
	} `json:"links"`
}

// Officer is one item of /company/{number}/officers.
type Officer struct {
	Name        string `json:"name"`
	OfficerRole string `json:"officer_role"`
	AppointedOn string `json:"appointed_on"`
	ResignedOn  string `json:"resigned_on"`
	Nationality string `json:"nationality"`
	Occupation  string `json:"occupation"`
	Country     string `json:"country_of_residence"`
	DateOfBirth *struct {
		Month int `json:"month"`
		Year  int `json:"year"`
	} `json:"date_of_birth"`
}

// Officers is the officer list envelope; the counts cover every officer, not only this page.
type Officers struct {
	TotalResults  int       `json:"total_results"`
	ActiveCount   int       `json:"active_count"`
	ResignedCount int       `json:"resigned_count"`
	InactiveCount int       `json:"inactive_count"`
	Items         []Officer `json:"items"`
}

// PSC is one person with significant control.
type PSC struct {
	Kind             string   `json:"kind"`
	Name             string   `json:"name"`
	NaturesOfControl []string `json:"natures_of_control"`
	NotifiedOn       string   `json:"notified_on"`
	CeasedOn         string   `json:"ceased_on"`
	Nationality      string   `json:"nationality"`
	Country          string   `json:"country_of_residence"`
}

// PSCList is /company/{number}/persons-with-significant-control.
type PSCList struct {
	TotalResults int   `json:"total_results"`
	ActiveCount  int   `json:"active_count"`
	CeasedCount  int   `json:"ceased_count"`
	Items        []PSC `json:"items"`
}

// Statements is /company/{number}/persons-with-significant-control-statements.
type Statements struct {
	ActiveCount int `json:"active_count"`
	Items       []struct {
		Statement string `json:"statement"`
		CeasedOn  string `json:"ceased_on"`
	} `json:"items"`
}

// Exemptions is /company/{number}/exemptions: each exemption by its type.
type Exemptions struct {
	Exemptions map[string]struct {
		ExemptionType string            `json:"exemption_type"`
		Items         []ExemptionPeriod `json:"items"`
	} `json:"exemptions"`
}

// ExemptionPeriod is when an exemption applied; ExemptTo is empty while it still does.
type ExemptionPeriod struct {
	ExemptFrom string `json:"exempt_from"`
	ExemptTo   string `json:"exempt_to"`
}

// SearchCompanies asks for the first n hits of q.
func (c *Client) SearchCompanies(ctx context.Context, q string, n int) (*Search, error) {
	var out Search
	err := c.h.GetJSON(ctx, "/search/companies", url.Values{"q": {q}, "items_per_page": {strconv.Itoa(n)}, "start_index": {"0"}}, &out)
	return &out, err
}

// Profile reads a company's profile; an unknown number is an *upstream.Error with Status 404.
func (c *Client) Profile(ctx context.Context, number string) (*Profile, error) {
	var out Profile
	err := c.h.GetJSON(ctx, "/company/"+url.PathEscape(number), nil, &out)
	return &out, err
}

// Officers reads the first page of up to 100 officers (current and resigned).
func (c *Client) Officers(ctx context.Context, number string) (*Officers, error) {
	var out Officers
	err := c.h.GetJSON(ctx, "/company/"+url.PathEscape(number)+"/officers", url.Values{"items_per_page": {"100"}, "start_index": {"0"}}, &out)
	return &out, err
}

// PSCs reads the first page of up to 100 persons with significant control.
func (c *Client) PSCs(ctx context.Context, number string) (*PSCList, error) {
	var out PSCList
	err := c.h.GetJSON(ctx, "/company/"+url.PathEscape(number)+"/persons-with-significant-control", url.Values{"items_per_page": {"100"}, "start_index": {"0"}}, &out)
	return &out, err
}

// Statements reads the PSC statements a company made instead of naming a PSC.
func (c *Client) Statements(ctx context.Context, number string) (*Statements, error) {
	var out Statements
	err := c.h.GetJSON(ctx, "/company/"+url.PathEscape(number)+"/persons-with-significant-control-statements", nil, &out)
	return &out, err
}

// Exemptions reads the exemptions of a company (e.g. from the PSC register when its shares
// trade on a regulated market).
func (c *Client) Exemptions(ctx context.Context, number string) (*Exemptions, error) {
	var out Exemptions
	err := c.h.GetJSON(ctx, "/company/"+url.PathEscape(number)+"/exemptions", nil, &out)
	return &out, err
}
