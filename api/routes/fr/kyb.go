package fr

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/compute/fold"
	"github.com/peage/appliance/api/upstream/bodacc"
	"github.com/peage/appliance/api/upstream/economie"
	"github.com/peage/appliance/api/upstream/ods"
	re "github.com/peage/appliance/api/upstream/rechercheentreprises"
	"github.com/peage/appliance/api/upstream/vies"
)

// The KYB verdict is rules, not a fitted model: api/routes/fr/doc/kyb.md is the method, and
// kybMethod names its version in every answer. A knock-out rule that fires makes the
// company NON_CONFORME; a vigilance rule that fires, or that could not be checked because
// its source failed, makes it A_VERIFIER; CONFORME needs every rule checked and passed.
const kybMethod = "kyb-1"

// Verdicts.
const (
	Conforme    = "CONFORME"
	AVerifier   = "A_VERIFIER"
	NonConforme = "NON_CONFORME"
)

// Rule kinds and outcomes.
const (
	KnockOut  = "eliminatoire"
	Vigilance = "vigilance"

	Passed     = "ok"
	Fired      = "declenchee"
	Unchecked  = "indeterminee" // its source failed: never guessed
	NotChecked = "non_evaluee"  // not part of this variant
)

// Check is one rule of the verdict: its input value, its weight and the points it earned
// (the weight when it passed, 0 otherwise), and the evidence it read.
type Check struct {
	Regle    string  `json:"regle"`
	Type     string  `json:"type"`
	Valeur   any     `json:"valeur"`
	Poids    int     `json:"poids"`
	Points   int     `json:"points"`
	Resultat string  `json:"resultat"`
	Preuve   string  `json:"preuve"`
	Source   *string `json:"source"`
}

// kybInputs are the answers a verdict is computed from; nil means the source failed (or was
// not called by this variant, as said by called).
type kybInputs struct {
	u       re.Unite
	notices *ods.Page[bodacc.Annonce]
	vat     *vies.Result
	ratios  *ods.Page[economie.Ratio]
	called  map[string]bool
	today   time.Time
}

func rule(name, kind string, weight int, value any, source string) Check {
	c := Check{Regle: name, Type: kind, Valeur: value, Poids: weight}
	if source != "" {
		c.Source = &source
	}
	return c
}

func (c Check) with(result, evidence string) Check {
	c.Resultat, c.Preuve = result, evidence
	if result == Passed {
		c.Points = c.Poids
	}
	return c
}

// unavailable is the outcome of a rule whose source did not answer or was not asked.
func (in kybInputs) unavailable(c Check, upstream string) Check {
	if !in.called[upstream] {
		return c.with(NotChecked, "not part of this variant")
	}
	return c.with(Unchecked, upstream+" did not answer; the rule could not be checked")
}

// kybChecks evaluates every rule of the method, in the order of the method's page.
func kybChecks(in kybInputs) []Check {
	u := in.u
	var checks []Check

	// Knock-outs.
	c := rule("etat_administratif", KnockOut, 0, u.EtatAdministratif, re.Name)
	switch u.EtatAdministratif {
	case "C":
		checks = append(checks, c.with(Fired, "the register says the company ceased on "+nonEmpty(u.DateFermeture, "an unknown date")))
	case "A":
		checks = append(checks, c.with(Passed, "the register says the company is active"))
	default:
		checks = append(checks, c.with(Unchecked, "the register gives no administrative state"))
	}
	var proc *Procedures
	if in.notices != nil {
		p := procedureState(u.Siren, in.notices.Results)
		proc = &p
	}
	window := ""
	if in.notices != nil && in.notices.TotalCount > len(in.notices.Results) {
		window = " (newest " + strconv.Itoa(len(in.notices.Results)) + " of " + strconv.Itoa(in.notices.TotalCount) + " notices read)"
	}
	c = rule("radiation", KnockOut, 0, nil, bodacc.Name)
	switch {
	case proc == nil:
		checks = append(checks, in.unavailable(c, bodacc.Name))
	case proc.Radiee:
		c.Valeur = true
		checks = append(checks, c.with(Fired, "a deregistration notice was published in BODACC"+window))
	default:
		c.Valeur = false
		checks = append(checks, c.with(Passed, "no deregistration notice in BODACC"+window))
	}
	c = rule("liquidation_judiciaire", KnockOut, 0, nil, bodacc.Name)
	switch {
	case proc == nil:
		checks = append(checks, in.unavailable(c, bodacc.Name))
	case proc.Statut == "liquidation_judiciaire":
		c.Valeur = proc.Statut
		checks = append(checks, c.with(Fired, "the newest judgment in BODACC opens or pronounces a liquidation"+window))
	default:
		c.Valeur = proc.Statut
		checks = append(checks, c.with(Passed, "no open liquidation in BODACC"+window))
	}

	// Vigilance rules, one point each.
	c = rule("procedure_collective_en_cours", Vigilance, 1, nil, bodacc.Name)
	switch {
	case proc == nil:
		checks = append(checks, in.unavailable(c, bodacc.Name))
	case slices.Contains([]string{"redressement_judiciaire", "sauvegarde", "plan_en_cours", "retablissement_professionnel"}, proc.Statut):
		c.Valeur = proc.Statut
		checks = append(checks, c.with(Fired, "an insolvency proceeding or plan is under way ("+proc.Statut+")"))
	default:
		c.Valeur = proc.Statut
		checks = append(checks, c.with(Passed, "no proceeding under way"+window))
	}
	c = rule("tva_validee_vies", Vigilance, 1, nil, vies.Name)
	switch {
	case in.vat == nil:
		checks = append(checks, in.unavailable(c, vies.Name))
	case !in.vat.Valid:
		c.Valeur = false
		checks = append(checks, c.with(Fired, "VIES does not hold the computed number "+in.vat.VATNumber+"; the company may not be VAT-registered"))
	default:
		c.Valeur = true
		checks = append(checks, c.with(Passed, "VIES holds the computed number"))
	}
	c = rule("nom_vies", Vigilance, 1, nil, vies.Name)
	switch {
	case in.vat == nil:
		checks = append(checks, in.unavailable(c, vies.Name))
	case !in.vat.Valid || in.vat.Name == "":
		checks = append(checks, c.with(Passed, "VIES gives no name to compare"))
	case !sameName(nonEmpty(u.NomComplet, u.NomRaisonSociale), in.vat.Name):
		c.Valeur = in.vat.Name
		checks = append(checks, c.with(Fired, "the name VIES gives differs from the register's"))
	default:
		c.Valeur = in.vat.Name
		checks = append(checks, c.with(Passed, "the name VIES gives matches the register's"))
	}
	c = rule("anciennete_6_mois", Vigilance, 1, u.DateCreation, re.Name)
	if created, err := time.Parse(time.DateOnly, u.DateCreation); err != nil {
		checks = append(checks, c.with(Unchecked, "the register gives no creation date"))
	} else if created.After(in.today.AddDate(0, -6, 0)) {
		checks = append(checks, c.with(Fired, "created less than 6 months ago"))
	} else {
		checks = append(checks, c.with(Passed, "created more than 6 months ago"))
	}
	checks = append(checks, accountsCheck(in))
	c = rule("diffusion_partielle", Vigilance, 1, u.StatutDiffusion, re.Name)
	if u.StatutDiffusion == "P" {
		checks = append(checks, c.with(Fired, "the company restricts the diffusion of its data"))
	} else {
		checks = append(checks, c.with(Passed, "data fully public"))
	}
	c = rule("dirigeant_personne_morale_sans_siren", Vigilance, 1, nil, re.Name)
	var unknown []string
	for _, d := range u.Dirigeants {
		if d.TypeDirigeant == "personne morale" && d.Siren == "" {
			unknown = append(unknown, d.Denomination)
		}
	}
	if len(unknown) > 0 {
		c.Valeur = unknown
		checks = append(checks, c.with(Fired, "an officer is a company the register does not identify"))
	} else {
		c.Valeur = []string{}
		checks = append(checks, c.with(Passed, "every officer that is a company has a SIREN"))
	}
	return checks
}

// accountsCheck: a commercial company (legal category 5xxx) must file accounts every year;
// none closed within 24 months is a warning. Others are not required to file.
func accountsCheck(in kybInputs) Check {
	c := rule("comptes_24_mois", Vigilance, 1, nil, economie.Name)
	if !in.called[economie.Name] {
		return in.unavailable(c, economie.Name)
	}
	if !strings.HasPrefix(in.u.NatureJuridique, "5") {
		return c.with(Passed, "not required to file accounts (legal category "+nonEmpty(in.u.NatureJuridique, "unknown")+")")
	}
	latest := ""
	if in.ratios != nil {
		for _, x := range in.ratios.Results {
			latest = max(latest, x.DateClotureExercice)
		}
	}
	if in.notices != nil {
		for _, a := range in.notices.Results {
			var d bodacc.Depot
			if a.FamilleAvis == bodacc.DPC && a.Depot.Decode(&d) {
				latest = max(latest, d.DateCloture)
			}
		}
	}
	c.Valeur = strPtr(latest)
	limit := in.today.AddDate(0, -24, 0).Format(time.DateOnly)
	switch {
	case latest >= limit:
		return c.with(Passed, "accounts closed on "+latest)
	case in.ratios == nil:
		return in.unavailable(c, economie.Name)
	case latest == "":
		return c.with(Fired, "no filed accounts found while the company must file")
	default:
		return c.with(Fired, "newest accounts closed on "+latest+", more than 24 months ago")
	}
}

// sameName: the names share a significant word (legal forms and short words aside), which
// tolerates "SAS DURAND BOIS" against "DURAND BOIS".
func sameName(a, b string) bool {
	words := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, w := range strings.FieldsFunc(fold.String(s), func(r rune) bool { return !('a' <= r && r <= 'z' || '0' <= r && r <= '9') }) {
			if len(w) >= 3 && !legalForms[w] {
				m[w] = true
			}
		}
		return m
	}
	wa, wb := words(a), words(b)
	for w := range wa {
		if wb[w] {
			return true
		}
	}
	return len(wa) == 0 || len(wb) == 0
}

var legalForms = map[string]bool{"sas": true, "sasu": true, "sarl": true, "eurl": true, "sci": true, "snc": true, "sca": true, "scop": true, "selarl": true, "societe": true}

// verdict of the checks: any knock-out fired → NON_CONFORME; any vigilance rule fired or
// any rule left unchecked → A_VERIFIER.
func verdict(checks []Check) (string, int) {
	v, flags := Conforme, 0
	for _, c := range checks {
		switch {
		case c.Resultat == Fired && c.Type == KnockOut:
			v = NonConforme
		case c.Resultat == Fired:
			flags++
			if v == Conforme {
				v = AVerifier
			}
		case c.Resultat == Unchecked && v == Conforme:
			v = AVerifier
		}
	}
	return v, flags
}

// KYB is the answer of /v1/fr/kyb.
type KYB struct {
	Siren         string    `json:"siren"`
	Denomination  string    `json:"denomination"`
	Verdict       string    `json:"verdict"`
	MethodVersion string    `json:"method_version"`
	Drapeaux      int       `json:"drapeaux"` // vigilance rules that fired
	Fiscal        Fiscal    `json:"fiscal"`
	Procedures    *string   `json:"procedures"` // the proceedings state, null when BODACC failed
	Dirigeants    []Officer `json:"dirigeants"`
	Comptes       []Comptes `json:"comptes"` // null when the accounts source failed
	Controles     []Check   `json:"controles"`
	Sources       []Source  `json:"sources"`
	Confidence    float64   `json:"confidence"`
	Limites       string    `json:"limites"`
}

// Fiscal is the VAT part of a KYB.
type Fiscal struct {
	TVA            *string `json:"tva"`
	TVAValideeVIES *bool   `json:"tva_validee_vies"`
	NomVIES        *string `json:"nom_vies"`
}

const kybLimits = "Public data only: payment incidents, beneficial owners, sanctions and PEP lists are not checked."

// kybRun identifies the company, calls the sources of the variant in parallel and computes
// the verdict.
func (r *Routes) kybRun(ctx context.Context, req *catalog.Request, withAccounts bool) (kybInputs, []Source, error) {
	u, reg, err := r.identify(ctx, req)
	if err != nil {
		return kybInputs{}, nil, err
	}
	in := kybInputs{u: u, today: r.parisDate(), called: map[string]bool{bodacc.Name: true, vies.Name: true, economie.Name: withAccounts}}
	calls := []call{noticesCall(r, u.Siren, &in.notices)}
	if n := company(u).TVA; n != nil {
		calls = append(calls, vatCall(r, *n, &in.vat))
	}
	if withAccounts {
		calls = append(calls, ratiosCall(r, u.Siren, &in.ratios))
	}
	return in, append([]Source{reg}, r.fanOut(ctx, calls...)...), nil
}

func (r *Routes) kyb(ctx context.Context, req *catalog.Request) (any, error) {
	in, sources, err := r.kybRun(ctx, req, true)
	if err != nil {
		return nil, err
	}
	c := company(in.u)
	checks := kybChecks(in)
	v, flags := verdict(checks)
	out := KYB{Siren: c.Siren, Denomination: c.Nom, Verdict: v, MethodVersion: kybMethod, Drapeaux: flags,
		Fiscal: Fiscal{TVA: c.TVA}, Dirigeants: c.Officers, Controles: checks, Sources: sources, Confidence: confidence(sources), Limites: kybLimits}
	if in.vat != nil {
		out.Fiscal.TVAValideeVIES, out.Fiscal.NomVIES = &in.vat.Valid, strPtr(in.vat.Name)
	}
	if in.notices != nil {
		out.Procedures = strPtr(procedureState(c.Siren, in.notices.Results).Statut)
	}
	if in.ratios != nil {
		out.Comptes = comptes(in.ratios.Results)
	}
	return out, nil
}

// KYBPartial is the answer of /v1/fr/kyb/partial: without the filed-accounts source, so the
// accounts rule is not evaluated.
type KYBPartial struct {
	Siren          string   `json:"siren"`
	Verdict        string   `json:"verdict"`
	MethodVersion  string   `json:"method_version"`
	TVAValideeVIES *bool    `json:"tva_validee_vies"`
	Insolvency     *string  `json:"insolvency"` // the proceedings state, null when BODACC failed
	Drapeaux       int      `json:"drapeaux"`
	Controles      []Check  `json:"controles"`
	Sources        []Source `json:"sources"`
	Confidence     float64  `json:"confidence"`
	Partial        bool     `json:"_partial"`
}

func (r *Routes) kybPartial(ctx context.Context, req *catalog.Request) (any, error) {
	in, sources, err := r.kybRun(ctx, req, false)
	if err != nil {
		return nil, err
	}
	checks := kybChecks(in)
	v, flags := verdict(checks)
	out := KYBPartial{Siren: in.u.Siren, Verdict: v, MethodVersion: kybMethod, Drapeaux: flags, Controles: checks,
		Sources: sources, Confidence: confidence(sources), Partial: true}
	if in.vat != nil {
		out.TVAValideeVIES = &in.vat.Valid
	}
	if in.notices != nil {
		out.Insolvency = strPtr(procedureState(in.u.Siren, in.notices.Results).Statut)
	}
	return out, nil
}

// FreeKYB is the free trial: the rules the register alone can check. Rules needing BODACC,
// VIES or the accounts are listed as not evaluated, so the verdict is at best A_VERIFIER.
type FreeKYB struct {
	Siren         string   `json:"siren"`
	Verdict       string   `json:"verdict"`
	MethodVersion string   `json:"method_version"`
	Controles     []Check  `json:"controles"`
	Sources       []Source `json:"sources"`
	Trial         bool     `json:"_trial"`
}

func (r *Routes) freeKYB(ctx context.Context, req *catalog.Request) (any, error) {
	u, reg, err := r.identify(ctx, req)
	if err != nil {
		return nil, err
	}
	checks := kybChecks(kybInputs{u: u, today: r.parisDate(), called: map[string]bool{}})
	v, _ := verdict(checks)
	if v == Conforme {
		v = AVerifier // rules were left out: a trial never says CONFORME
	}
	return FreeKYB{Siren: u.Siren, Verdict: v, MethodVersion: kybMethod, Controles: checks, Sources: []Source{reg}, Trial: true}, nil
}
