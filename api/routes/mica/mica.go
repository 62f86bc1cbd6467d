// Package mica serves /v1/eu/mica-check over ESMA's interim MiCA registers
// (api/upstream/esma): a firm by LEI (exact) or by name (tolerant of case, accents,
// punctuation and legal-form suffixes), with the registers it appears in and a verdict.
package mica

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream/esma"
	"github.com/peage/appliance/api/upstream/httpc"
)

// Parts are the family's collaborators.
type Parts struct {
	Pool *httpc.Pool
	// Dir is where the register files are cached between runs ("" keeps them in memory).
	Dir string
	// Now is the clock (nil is time.Now): the date of the download and of "in force".
	Now func() time.Time
}

// Routes holds the handler.
type Routes struct {
	esma *esma.Client
	now  func() time.Time
}

// With builds the route over the esma upstream of the pool.
func With(d Parts) (*Routes, error) {
	h, err := d.Pool.Client(esma.Name)
	if err != nil {
		return nil, err
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Routes{esma: esma.New(h, d.Dir, d.Now), now: d.Now}, nil
}

// Bind attaches the handler.
func (r *Routes) Bind(c *catalog.Catalog) error {
	return c.Bind("eu.mica-check", r.check, r.esma.Ready)
}

// Verdicts.
const (
	Authorised    = "AUTHORISED"     // an authorisation (CASP, EMT or ART issuer) is in force
	Warning       = "WARNING"        // listed by an authority as providing services without authorisation, none in force
	Withdrawn     = "WITHDRAWN"      // authorised once, the authorisation has ended
	NotAuthorised = "NOT_AUTHORISED" // only white papers notified: an offeror, not an authorised firm
)

// maxMatches bounds the entities listed for a broad name.
const maxMatches = 20

// Firm is one entity of one register in the answer.
type Firm struct {
	Register           string   `json:"register"`
	LegalName          string   `json:"legal_name"`
	LEI                string   `json:"lei,omitempty"`
	CommercialNames    []string `json:"commercial_names,omitempty"`
	HomeMemberState    string   `json:"home_member_state"`
	CompetentAuthority string   `json:"competent_authority"`
	AuthorisedOn       *string  `json:"authorised_on"` // the spec names it: null when the register gives no date
	AuthorisationEnd   string   `json:"authorisation_end,omitempty"`
	Active             bool     `json:"authorisation_in_force"`
	Services           []string `json:"services"`
	ServiceCodes       []string `json:"service_codes,omitempty"`
	Passport           []string `json:"passported_to,omitempty"`
	Websites           []string `json:"websites,omitempty"`
	WhitePapers        []string `json:"white_papers,omitempty"`
	Reason             string   `json:"reason,omitempty"`
	DecisionDate       string   `json:"decision_date,omitempty"`
	Comments           string   `json:"comments,omitempty"`
	LastUpdate         string   `json:"last_update,omitempty"`
	Match              string   `json:"match"`
}

// Answer is the route's result.
type Answer struct {
	Query      map[string]string `json:"query"`
	Authorised bool              `json:"authorised"`
	Verdict    string            `json:"verdict"`
	Matches    []Firm            `json:"matches"`
	Truncated  bool              `json:"truncated,omitempty"`
	AsOf       string            `json:"as_of"`
	// Stale is true when the copy answered from is older than a day: ESMA could not be
	// reached for the daily refresh.
	Stale  bool   `json:"stale"`
	Source string `json:"source"`
	Method string `json:"method"`
	Note   string `json:"note"`
}

const (
	source = "ESMA interim MiCA register (www.esma.europa.eu: CASPS, EMTWP, ARTZZ, OTHER, NCASP files)"
	method = "By lei: the entities whose LEI is exactly it. By name: the entities whose legal or commercial name equals the name " +
		"once both are folded (accents, case, punctuation and legal-form suffixes such as Ltd, GmbH, S.A., SAS, B.V., AG removed), " +
		"else those whose folded name contains the folded query as whole words. Verdict: AUTHORISED when a CASP, EMT or ART " +
		"authorisation of a match is in force; else WARNING when a match is on the non-compliant entities register; else WITHDRAWN " +
		"when an authorisation ended; else NOT_AUTHORISED (white papers notified only)."
	note = "ESMA's interim register is compiled from national authorities' notifications and published as files about weekly; " +
		"it is not the legal source of record, and absence from it is not a finding of illegality."
)

func (r *Routes) check(ctx context.Context, req *catalog.Request) (any, error) {
	snap, err := r.esma.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	lei := strings.ToUpper(strings.TrimSpace(req.Args.Str("lei")))
	name := strings.TrimSpace(req.Args.Str("name"))
	query := map[string]string{}
	type hit struct {
		e     *esma.Entry
		grade Match
	}
	var hits []hit
	if lei != "" {
		query["lei"] = lei
		for i := range snap.Entries {
			if e := &snap.Entries[i]; e.LEI == lei {
				hits = append(hits, hit{e, Exact})
			}
		}
	} else {
		query["name"] = name
		q := Normalize(name)
		if q == "" {
			return nil, apierr.BadParam("name", "has no letter or digit once legal-form words are removed")
		}
		for i := range snap.Entries {
			e := &snap.Entries[i]
			best := Grade(q, Normalize(e.LegalName))
			for _, c := range e.CommercialNames {
				best = max(best, Grade(q, Normalize(c)))
			}
			if best != NoMatch {
				hits = append(hits, hit{e, best})
			}
		}
		// Exact matches hide the partial ones: "Bitpanda" is Bitpanda GmbH, not every firm
		// whose name contains the word.
		if slices.ContainsFunc(hits, func(h hit) bool { return h.grade == Exact }) {
			hits = slices.DeleteFunc(hits, func(h hit) bool { return h.grade != Exact })
		}
	}
	asOf := snap.AsOf.UTC().Format(time.RFC3339)
	today := r.now().UTC()
	if len(hits) == 0 {
		what := name
		if lei != "" {
			what = "LEI " + lei
		}
		return nil, apierr.NotFound("%s is in none of ESMA's interim MiCA registers as of %s (absence is not a finding of illegality)", what, asOf)
	}
	ans := &Answer{Query: query, AsOf: asOf, Stale: today.Sub(snap.AsOf) > esma.TTL, Source: source, Method: method, Note: note, Matches: []Firm{}}
	var active, warned, ended bool
	for _, h := range hits {
		e := h.e
		switch {
		case e.Active(today):
			active = true
		case e.Register == esma.NonCompliant:
			warned = true
		case e.AuthorisedOn != "" && e.Register != esma.WhitePaper:
			ended = true
		}
	}
	// Authorisations in force first, then warnings, then the rest, each by name.
	rank := func(e *esma.Entry) int {
		switch {
		case e.Active(today):
			return 0
		case e.Register == esma.NonCompliant:
			return 1
		}
		return 2
	}
	slices.SortStableFunc(hits, func(a, b hit) int {
		if d := rank(a.e) - rank(b.e); d != 0 {
			return d
		}
		return strings.Compare(a.e.LegalName, b.e.LegalName)
	})
	if len(hits) > maxMatches {
		hits, ans.Truncated = hits[:maxMatches], true
	}
	for _, h := range hits {
		ans.Matches = append(ans.Matches, firm(h.e, h.grade, today))
	}
	switch {
	case active:
		ans.Verdict, ans.Authorised = Authorised, true
	case warned:
		ans.Verdict = Warning
	case ended:
		ans.Verdict = Withdrawn
	default:
		ans.Verdict = NotAuthorised
	}
	return ans, nil
}

func firm(e *esma.Entry, g Match, today time.Time) Firm {
	f := Firm{Register: string(e.Register), LegalName: e.LegalName, LEI: e.LEI, CommercialNames: e.CommercialNames,
		HomeMemberState: e.HomeMemberState, CompetentAuthority: e.Authority, AuthorisedOn: nonEmpty(e.AuthorisedOn),
		AuthorisationEnd: e.AuthorisationEnd, Active: e.Active(today), Services: e.Services, ServiceCodes: e.ServiceCodes,
		Passport: e.Passport, Websites: e.Websites, WhitePapers: e.WhitePapers, Reason: e.Reason, DecisionDate: e.DecisionDate,
		Comments: e.Comments, LastUpdate: e.LastUpdate, Match: "exact"}
	if f.Services == nil {
		f.Services = []string{}
	}
	if g == Contains {
		f.Match = "contains"
	}
	return f
}

// nonEmpty is s, or null when the register leaves it blank.
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
