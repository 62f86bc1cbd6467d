package esma

import (
	"slices"
	"strings"
	"time"
)

// Register names one of ESMA's interim MiCA registers.
type Register string

// The five registers, with the file each is published as (research: upstreams-geo.md §20).
const (
	CASP         Register = "casp"          // authorised crypto-asset service providers
	EMT          Register = "emt"           // e-money token issuers and their white papers
	ART          Register = "art"           // asset-referenced token issuers
	WhitePaper   Register = "white_paper"   // white papers of other crypto-assets
	NonCompliant Register = "non_compliant" // entities providing services without authorisation
)

// Files maps each register to its file name in ESMA's folder, in the order they are fetched.
var Files = []struct {
	Register Register
	File     string
}{{CASP, "CASPS.csv"}, {EMT, "EMTWP.csv"}, {ART, "ARTZZ.csv"}, {WhitePaper, "OTHER.csv"}, {NonCompliant, "NCASP.csv"}}

// Entry is one entity of one register; the rows ESMA repeats per service or per white paper
// are merged into it.
type Entry struct {
	Register          Register
	LegalName         string
	LEI               string
	CommercialNames   []string
	HomeMemberState   string
	Authority         string
	Address           string
	Websites          []string
	AuthorisedOn      string // ISO date; the notification date of the authorisation
	AuthorisationEnd  string // ISO date; set once the authorisation ended
	Services          []string
	ServiceCodes      []string
	Passport          []string // host member states the services are offered in
	WhitePapers       []string
	Infringement      string // non-compliant register: "Yes"/"No" as published
	Reason            string
	DecisionDate      string // ISO date
	Comments          string
	LastUpdate        string // ISO date of the most recent row
	CreditInstitution string // ART register: whether the issuer is a credit institution
}

// Active reports whether an authorisation is in force on day (its end date, if any, is later).
func (e *Entry) Active(day time.Time) bool {
	if e.Register != CASP && e.Register != EMT && e.Register != ART {
		return false
	}
	return e.AuthorisationEnd == "" || e.AuthorisationEnd > day.Format(time.DateOnly)
}

// entries turns the rows of one register into entities: rows with the same LEI (or, without
// one, the same legal name) from the same authority are one entity; on the non-compliant
// register, one per decision.
func entries(reg Register, t *Table) []Entry {
	var out []Entry
	index := map[string]int{}
	for _, row := range t.Rows {
		name := row["ae_lei_name"]
		lei := strings.ToUpper(row["ae_lei"])
		if name == "" && lei == "" {
			continue
		}
		key := lei
		if key == "" {
			key = strings.ToLower(name)
		}
		key += "|" + row["ae_competentAuthority"]
		if reg == NonCompliant {
			key += "|" + row["ae_decision_date"] // each decision of an authority is its own warning
		}
		i, seen := index[key]
		if !seen {
			out = append(out, Entry{Register: reg, LegalName: name, LEI: lei, HomeMemberState: row["ae_homeMemberState"],
				Authority: row["ae_competentAuthority"], Address: row["ae_address"],
				AuthorisedOn: isoDate(row["ac_authorisationNotificationDate"]), AuthorisationEnd: isoDate(row["ac_authorisationEndDate"]),
				Infringement: row["ae_infrigment"], Reason: none(row["ae_reason"]), DecisionDate: isoDate(row["ae_decision_date"]),
				CreditInstitution: row["ae_credit_institution"]})
			i = len(out) - 1
			index[key] = i
		}
		e := &out[i]
		// A later row may extend the authorisation (EUWAX AG: new services months later):
		// the entity is authorised since the earliest date.
		if d := isoDate(row["ac_authorisationNotificationDate"]); d != "" && (e.AuthorisedOn == "" || d < e.AuthorisedOn) {
			e.AuthorisedOn = d
		}
		for _, n := range pipe(row["ae_commercial_name"]) {
			e.CommercialNames = addUnique(e.CommercialNames, n)
		}
		for _, w := range pipe(row["ae_website"]) {
			e.Websites = addUnique(e.Websites, w)
		}
		for _, s := range pipe(row["ac_serviceCode"]) {
			s = strings.Join(strings.Fields(s), " ") // some authorities type a tab after the letter
			e.Services = addUnique(e.Services, s)
			if code := serviceCode(s); code != "" {
				e.ServiceCodes = addUnique(e.ServiceCodes, code)
			}
		}
		for _, c := range pipe(row["ac_serviceCode_cou"]) {
			e.Passport = addUnique(e.Passport, strings.ToUpper(c))
		}
		if wp := row["wp_url"]; wp != "" {
			e.WhitePapers = addUnique(e.WhitePapers, wp)
		}
		for _, col := range []string{"ac_comments", "ae_comments", "wp_comments"} {
			if c := row[col]; c != "" && !strings.Contains(e.Comments, c) {
				e.Comments = strings.TrimSpace(e.Comments + " " + c)
			}
		}
		for _, col := range []string{"ac_lastupdate", "ae_lastupdate", "wp_lastupdate"} {
			if d := isoDate(row[col]); d > e.LastUpdate {
				e.LastUpdate = d
			}
		}
	}
	for i := range out {
		slices.Sort(out[i].ServiceCodes)
		slices.Sort(out[i].Passport)
	}
	return out
}

// pipe splits a multi-valued field: ESMA separates values with "|".
func pipe(s string) []string {
	var out []string
	for _, p := range strings.Split(s, "|") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func addUnique(l []string, s string) []string {
	if slices.Contains(l, s) {
		return l
	}
	return append(l, s)
}

// serviceCode is the letter of a MiCA service (Art. 3(1)(16)) from ESMA's wording
// "c. exchange of crypto-assets for funds".
func serviceCode(s string) string {
	if len(s) >= 2 && s[1] == '.' && s[0] >= 'a' && s[0] <= 'j' {
		return s[:1]
	}
	if len(s) >= 2 && s[1] == '.' && s[0] >= 'A' && s[0] <= 'J' {
		return strings.ToLower(s[:1])
	}
	return ""
}

// isoDate converts ESMA's DD/MM/YYYY to YYYY-MM-DD; anything else is returned trimmed.
func isoDate(s string) string {
	s = strings.TrimSpace(s)
	if t, err := time.Parse("02/01/2006", s); err == nil {
		return t.Format(time.DateOnly)
	}
	if t, err := time.Parse("2/1/2006", s); err == nil {
		return t.Format(time.DateOnly)
	}
	return s
}

// none drops the literal "None" ESMA writes in empty reason cells.
func none(s string) string {
	if strings.EqualFold(s, "none") {
		return ""
	}
	return s
}
