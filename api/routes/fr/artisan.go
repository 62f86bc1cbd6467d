package fr

import (
	"context"
	"math"
	"strings"
	"time"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream/ademe"
	"github.com/peage/appliance/api/upstream/bodacc"
	"github.com/peage/appliance/api/upstream/ods"
	re "github.com/peage/appliance/api/upstream/rechercheentreprises"
	"github.com/peage/appliance/api/upstream/vies"
)

// The tradesperson check is a points score of confidence, written in
// api/routes/fr/doc/verif-artisan.md; artisanMethod names its version in every answer.
const artisanMethod = "verif-artisan-1"

// ArtisanCheck is the answer of /v1/fr/verif-artisan.
type ArtisanCheck struct {
	Siren                 string          `json:"siren"`
	Siret                 string          `json:"siret"` // the establishment checked: the one asked, or the head office
	Denomination          string          `json:"denomination"`
	Confiance             int             `json:"confiance"` // 0-100
	Niveau                string          `json:"niveau"`    // elevee, moyenne, faible
	MethodVersion         string          `json:"method_version"`
	CertifieRGE           *bool           `json:"certifie_rge"`           // null when ADEME did not answer
	RGEExpireLe           *string         `json:"rge_expire_le"`          // earliest end among the valid qualifications
	ProceduresCollectives *int            `json:"procedures_collectives"` // insolvency notices read; null when BODACC did not answer
	StatutProcedure       *string         `json:"statut_procedure"`
	EtablissementActif    bool            `json:"etablissement_actif"`
	EntrepriseActive      bool            `json:"entreprise_active"`
	NAF                   *string         `json:"naf"`
	Metier                *string         `json:"metier"` // the Répertoire des métiers trade code, when registered there
	Qualifications        []Qualification `json:"qualifications"`
	Facteurs              []Factor        `json:"facteurs"`
	KnockOuts             []KnockOutRule  `json:"knock_outs"`
	Avertissements        []string        `json:"avertissements"`
	Sources               []Source        `json:"sources"`
	Confidence            float64         `json:"confidence"`
	Limites               string          `json:"limites"`
}

const artisanLimits = "The ten-year insurance (garantie décennale) and professional qualifications other than RGE are not verifiable from public data; ask for the certificate."

// artisanInputs are the answers the check reads; nil means the source failed.
type artisanInputs struct {
	u       re.Unite
	etab    re.Etablissement
	rge     *ademe.Lines[ademe.RGE]
	notices *ods.Page[bodacc.Annonce]
	vat     *vies.Result
	today   time.Time
}

// establishment is the SIRET asked for, when q is one the register lists, or the head office.
func establishment(u re.Unite, q string) re.Etablissement {
	if id, ok := isID(q); ok && len(id) == 14 {
		for _, e := range append([]re.Etablissement{u.Siege}, u.MatchingEtablissements...) {
			if e.Siret == id {
				return e
			}
		}
	}
	return u.Siege
}

func (r *Routes) verifArtisan(ctx context.Context, req *catalog.Request) (any, error) {
	u, reg, err := r.identify(ctx, req)
	if err != nil {
		return nil, err
	}
	in := artisanInputs{u: u, etab: establishment(u, nonEmpty(req.Args.Str("q"), req.Args.Str("siren"))), today: r.parisDate()}
	calls := []call{rgeCall(r, in.etab.Siret, &in.rge), noticesCall(r, u.Siren, &in.notices)}
	if n := company(u).TVA; n != nil {
		calls = append(calls, vatCall(r, *n, &in.vat))
	}
	sources := append([]Source{reg}, r.fanOut(ctx, calls...)...)
	factors, kos, score, warnings := r.artisanScore(in)
	out := ArtisanCheck{Siren: u.Siren, Siret: in.etab.Siret, Denomination: nonEmpty(u.NomComplet, u.NomRaisonSociale), Confiance: score,
		Niveau: confianceLevel(score), MethodVersion: artisanMethod, EtablissementActif: in.etab.EtatAdministratif == "A",
		EntrepriseActive: u.EtatAdministratif == "A", NAF: strPtr(u.ActivitePrincipale), Metier: strPtr(in.etab.ActiviteRegistreMetier),
		Qualifications: []Qualification{}, Facteurs: factors, KnockOuts: append([]KnockOutRule{}, kos...), Avertissements: warnings,
		Sources: sources, Confidence: factorConfidence(factors), Limites: artisanLimits}
	if in.rge != nil {
		certified := false
		for _, row := range in.rge.Results {
			q := r.qualification(row)
			out.Qualifications = append(out.Qualifications, q)
			if q.Valide {
				certified = true
				if q.Fin != nil && (out.RGEExpireLe == nil || *q.Fin < *out.RGEExpireLe) {
					out.RGEExpireLe = q.Fin
				}
			}
		}
		out.CertifieRGE = &certified
	}
	if in.notices != nil {
		p := procedureState(u.Siren, in.notices.Results)
		n := len(p.Procedures)
		out.ProceduresCollectives, out.StatutProcedure = &n, &p.Statut
	}
	return out, nil
}

func confianceLevel(score int) string {
	switch {
	case score >= 75:
		return "elevee"
	case score >= 50:
		return "moyenne"
	}
	return "faible"
}

// artisanScore computes the factors, the knock-outs that fired, the score and the warnings.
func (r *Routes) artisanScore(in artisanInputs) ([]Factor, []KnockOutRule, int, []string) {
	u, e := in.u, in.etab
	warnings := []string{}
	var factors []Factor

	x := f("existence", "etablissement_actif", 15, e.EtatAdministratif, re.Name)
	if e.EtatAdministratif == "A" {
		x = x.earn(15, "establishment "+e.Siret+" is open")
	} else {
		x = x.earn(0, "establishment "+e.Siret+" is not open (state "+nonEmpty(e.EtatAdministratif, "unknown")+")")
	}
	factors = append(factors, x)
	x = f("existence", "entreprise_active", 15, u.EtatAdministratif, re.Name)
	if u.EtatAdministratif == "A" {
		x = x.earn(15, "the register says the company is active")
	} else {
		x = x.earn(0, "the register says the company is not active (state "+nonEmpty(u.EtatAdministratif, "unknown")+")")
	}
	factors = append(factors, x)

	x = f("metier", "activite_batiment", 10, u.SectionActivitePrincipale, re.Name)
	switch {
	case u.SectionActivitePrincipale == "F":
		x = x.earn(10, "main activity "+u.ActivitePrincipale+" is in NAF section F (construction)")
	case e.ActiviteRegistreMetier != "":
		x = x.earn(10, "registered with the Répertoire des métiers (trade "+e.ActiviteRegistreMetier+")")
	default:
		x = x.earn(0, "main activity "+nonEmpty(u.ActivitePrincipale, "unknown")+" is not a building trade, and no Répertoire des métiers trade")
		warnings = append(warnings, "not registered as a building trade")
	}
	factors = append(factors, x)

	x = f("solidite", "anciennete_ans", 15, nil, re.Name)
	if created, err := time.Parse(time.DateOnly, u.DateCreation); err != nil {
		x = x.missing("no creation date")
	} else {
		years := math.Floor(in.today.Sub(created).Hours()/24/365.25*10) / 10
		x.Valeur = years
		x = x.earn(bins(years, []float64{3, 1}, []int{15, 8, 0}), "created "+u.DateCreation)
		if years < 1 {
			warnings = append(warnings, "created less than a year ago")
		}
	}
	factors = append(factors, x)

	var proc *Procedures
	x = f("solidite", "procedures_collectives", 20, nil, bodacc.Name)
	if in.notices == nil {
		x = x.missing("BODACC did not answer")
	} else {
		p := procedureState(u.Siren, in.notices.Results)
		proc = &p
		x.Valeur = p.Statut
		switch {
		case len(p.Procedures) == 0:
			x = x.earn(20, "no collective proceeding in BODACC")
		case p.Statut == "procedure_cloturee" && p.Procedures[0].DatePublication < in.today.AddDate(-5, 0, 0).Format(time.DateOnly):
			x = x.earn(12, "last proceeding closed more than 5 years ago")
		case p.Statut == "procedure_cloturee":
			x = x.earn(6, "last proceeding closed within 5 years")
		default:
			x = x.earn(0, "a proceeding is open ("+p.Statut+")")
		}
	}
	factors = append(factors, x)

	x = f("solidite", "tva_validee_vies", 5, nil, vies.Name)
	switch {
	case in.vat == nil:
		x = x.missing("VIES did not answer")
	case in.vat.Valid:
		x.Valeur = true
		x = x.earn(5, "VIES holds the computed VAT number")
	default:
		x.Valeur = false
		x = x.earn(0, "VIES does not hold the computed VAT number (the business may be outside VAT, e.g. a micro-entrepreneur)")
	}
	factors = append(factors, x)

	x = f("certification", "rge_valide", 15, nil, ademe.Name)
	if in.rge == nil {
		x = x.missing("ADEME did not answer")
	} else {
		valid, soon := 0, false
		limit := in.today.AddDate(0, 0, 60).Format(time.DateOnly)
		for _, row := range in.rge.Results {
			if r.valid(row) {
				valid++
				soon = soon || (row.LienDateFin != "" && row.LienDateFin <= limit)
			}
		}
		x.Valeur = valid
		switch {
		case valid == 0:
			x = x.earn(0, "no valid RGE qualification for "+e.Siret)
		case soon:
			x = x.earn(10, "valid RGE qualification(s), one ends within 60 days")
			warnings = append(warnings, "an RGE qualification ends within 60 days")
		default:
			x = x.earn(15, "valid RGE qualification(s)")
		}
	}
	factors = append(factors, x)

	x = f("identite", "dirigeant_identifie", 5, nil, re.Name)
	named := 0
	for _, d := range u.Dirigeants {
		if strings.TrimSpace(d.Nom+d.Denomination) != "" {
			named++
		}
	}
	x.Valeur = named
	if named > 0 || u.Complements.EstEntrepreneurIndiv {
		x = x.earn(5, "the register names who runs the business")
	} else {
		x = x.earn(0, "the register names no officer")
	}
	factors = append(factors, x)

	score := 0
	for _, y := range factors {
		score += y.Points
	}
	var kos []KnockOutRule
	switch {
	case u.EtatAdministratif == "C":
		kos = append(kos, KnockOutRule{"entreprise_cessee", "confiance 0", "the register says the company ceased"})
		score = 0
	case e.EtatAdministratif == "F":
		kos = append(kos, KnockOutRule{"etablissement_ferme", "confiance 0", "the establishment checked is closed"})
		score = 0
	case proc != nil && proc.Radiee:
		kos = append(kos, KnockOutRule{"radiation", "confiance 0", "a deregistration notice was published in BODACC"})
		score = 0
	case proc != nil && proc.Statut == "liquidation_judiciaire":
		kos = append(kos, KnockOutRule{"liquidation_judiciaire", "confiance 0", "a liquidation is open"})
		score = 0
	case proc != nil && (proc.Statut == "redressement_judiciaire" || proc.Statut == "sauvegarde" || proc.Statut == "retablissement_professionnel"):
		kos = append(kos, KnockOutRule{proc.Statut, "confiance capped at 30", "a proceeding is open: the business may not finish the work"})
		score = min(score, 30)
	case proc != nil && proc.Statut == "plan_en_cours":
		kos = append(kos, KnockOutRule{"plan_en_cours", "confiance capped at 50", "a plan is being carried out"})
		score = min(score, 50)
	}
	return factors, kos, score, warnings
}
