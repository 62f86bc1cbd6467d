package fr

import (
	"context"
	"math"
	"strings"
	"time"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/compute/fold"
	"github.com/peage/appliance/api/upstream/ademe"
	"github.com/peage/appliance/api/upstream/boamp"
	"github.com/peage/appliance/api/upstream/bodacc"
	"github.com/peage/appliance/api/upstream/economie"
	"github.com/peage/appliance/api/upstream/ods"
	"github.com/peage/appliance/api/upstream/vies"
)

// The due-diligence dossier is the KYB verdict and the risk score computed on one fan-out
// (so both read the same answers), with the financial trend, the event timeline, the
// recent changes of management, head office and capital, and the public contracts won.

// DueDiligence is the answer of /v1/fr/due-diligence.
type DueDiligence struct {
	Found          bool          `json:"found"`
	Query          string        `json:"query"`
	Identite       Identite      `json:"identite"`
	Siege          HQ            `json:"siege"`
	Dirigeants     []Officer     `json:"dirigeants"`
	Etablissements EtabCounts    `json:"etablissements"`
	KYB            DDVerdict     `json:"kyb"`
	Score          DDScore       `json:"score"`
	TVA            TVACheck      `json:"tva"`
	Procedures     *Procedures   `json:"procedures_collectives"` // null when BODACC did not answer
	Finances       DDFinances    `json:"finances"`
	Evenements     []Annonce     `json:"evenements"`  // BODACC notices read, newest first; null when BODACC did not answer
	Changements    *Changements  `json:"changements"` // last 24 months; null when BODACC did not answer
	RGE            *RGEResume    `json:"rge"`
	MarchesPublics *Attributions `json:"marches_publics"` // null when BOAMP did not answer
	Sources        []Source      `json:"sources"`
	Confidence     float64       `json:"confidence"`
	Limites        string        `json:"limites"`
}

// DDVerdict is the KYB part of the dossier.
type DDVerdict struct {
	Verdict       string  `json:"verdict"`
	MethodVersion string  `json:"method_version"`
	Drapeaux      int     `json:"drapeaux"`
	Controles     []Check `json:"controles"`
}

// DDScore is the score part of the dossier.
type DDScore struct {
	Score         int            `json:"score"`
	Grade         string         `json:"grade"`
	Niveau        string         `json:"niveau"`
	MethodVersion string         `json:"method_version"`
	Facteurs      []Factor       `json:"facteurs"`
	KnockOuts     []KnockOutRule `json:"knock_outs"`
}

// DDFinances are the figures and their trend.
type DDFinances struct {
	Registre []Finance `json:"registre"` // the figures the register publishes
	Comptes  []Comptes `json:"comptes"`  // BCE/INPI filed accounts; null when that source did not answer
	Tendance *Tendance `json:"tendance"` // null without two years of individual accounts
}

// Tendance compares the two newest individual accounts.
type Tendance struct {
	De                string   `json:"de"`
	A                 string   `json:"a"`
	EvolutionCAPct    *float64 `json:"evolution_ca_pct"`
	EvolutionResultat *int64   `json:"evolution_resultat_net"`
	EvolutionEBE      *int64   `json:"evolution_ebe"`
	Sens              string   `json:"sens"` // hausse, stable, baisse, or inconnu
}

// Changements counts the notices of the last 24 months that changed the company.
type Changements struct {
	Depuis     string `json:"depuis"`
	Dirigeants int    `json:"dirigeants"`
	Siege      int    `json:"siege"`
	Capital    int    `json:"capital"`
	Autres     int    `json:"autres"`
}

// Attributions are the public contracts the company is named winner of in BOAMP.
type Attributions struct {
	Total   int           `json:"total"`
	Marches []Attribution `json:"marches"`
	Lus     int           `json:"notices_lues"` // notices of the full-text search read
}

// Attribution is one award notice.
type Attribution struct {
	Date      string   `json:"date"`
	Objet     string   `json:"objet"`
	Acheteur  string   `json:"acheteur"`
	Titulaire []string `json:"titulaire"`
	URL       string   `json:"url"`
}

const dueDiligenceLimits = kybLimits + " " + scoreLimits + " Public contracts are found by a full-text search of BOAMP on the company's name."

func (r *Routes) dueDiligence(ctx context.Context, req *catalog.Request) (any, error) {
	u, reg, err := r.identify(ctx, req)
	if err != nil {
		return nil, err
	}
	c := company(u)
	var (
		notices *ods.Page[bodacc.Annonce]
		vat     *vies.Result
		ratios  *ods.Page[economie.Ratio]
		rge     *ademe.Lines[ademe.RGE]
		awards  *ods.Page[boamp.Avis]
	)
	calls := []call{noticesCall(r, u.Siren, &notices), ratiosCall(r, u.Siren, &ratios), rgeCall(r, u.Siege.Siret, &rge)}
	// A full-text search needs a name: without one it would list every notice.
	if c.Nom != "" {
		calls = append(calls, awardsCall(r, u.Siren, c.Nom, &awards))
	}
	if c.TVA != nil {
		calls = append(calls, vatCall(r, *c.TVA, &vat))
	}
	sources := append([]Source{reg}, r.fanOut(ctx, calls...)...)
	today := r.parisDate()
	called := map[string]bool{bodacc.Name: true, vies.Name: true, economie.Name: true}

	checks := kybChecks(kybInputs{u: u, notices: notices, vat: vat, ratios: ratios, called: called, today: today})
	v, flags := verdict(checks)
	factors, kos, score := scorecard(scoreInputs{u: u, notices: notices, ratios: ratios, called: called, today: today})
	g, niveau := grade(score)
	if len(kos) > 0 && (kos[0].Regle == "cessee" || kos[0].Regle == "radiation") {
		niveau = "cessee"
	}
	out := DueDiligence{Found: true, Query: nonEmpty(req.Args.Str("siren"), req.Args.Str("q")), Identite: identite(u), Siege: c.HQ,
		Dirigeants: c.Officers, Etablissements: EtabCounts{Total: u.NombreEtablissements, Ouverts: u.NombreEtablissementsOuvert},
		KYB:   DDVerdict{Verdict: v, MethodVersion: kybMethod, Drapeaux: flags, Controles: checks},
		Score: DDScore{Score: score, Grade: g, Niveau: niveau, MethodVersion: scoreMethod, Facteurs: factors, KnockOuts: append([]KnockOutRule{}, kos...)},
		TVA:   TVACheck{Numero: c.TVA}, Finances: DDFinances{Registre: c.Finances},
		Sources: sources, Confidence: confidence(sources), Limites: dueDiligenceLimits}
	if vat != nil {
		out.TVA.ValideVIES, out.TVA.NomVIES, out.TVA.AdresseVIE, out.TVA.VerifieLe = &vat.Valid, strPtr(vat.Name), strPtr(oneLine(vat.Address)), strPtr(vat.RequestDate)
	}
	if notices != nil {
		p := procedureState(u.Siren, notices.Results)
		p.Complet = notices.TotalCount <= len(notices.Results)
		out.Procedures = &p
		out.Evenements = []Annonce{}
		for _, a := range notices.Results {
			out.Evenements = append(out.Evenements, annonce(a))
		}
		ch := changes(notices.Results, today.AddDate(-2, 0, 0))
		out.Changements = &ch
	}
	if ratios != nil {
		out.Finances.Comptes = comptes(ratios.Results)
		out.Finances.Tendance = trend(valuationYearsOf(ratios.Results))
	}
	if rge != nil {
		out.RGE = &RGEResume{Qualifications: []Qualification{}}
		for _, row := range rge.Results {
			q := r.qualification(row)
			out.RGE.Qualifications = append(out.RGE.Qualifications, q)
			out.RGE.Certifie = out.RGE.Certifie || q.Valide
		}
	}
	if awards != nil {
		out.MarchesPublics = wonBy(c.Nom, awards.Results)
	}
	return out, nil
}

// trend compares the two newest individual accounts (newest first).
func trend(years []economie.Ratio) *Tendance {
	if len(years) < 2 {
		return nil
	}
	a, b := years[1], years[0]
	t := &Tendance{De: a.DateClotureExercice, A: b.DateClotureExercice, Sens: "inconnu"}
	diff := func(x, y *float64) *int64 {
		if x == nil || y == nil {
			return nil
		}
		v := int64(math.Round(*y - *x))
		return &v
	}
	t.EvolutionResultat, t.EvolutionEBE = diff(a.ResultatNet, b.ResultatNet), diff(a.EBE, b.EBE)
	if a.ChiffreDAffaires != nil && b.ChiffreDAffaires != nil && *a.ChiffreDAffaires > 0 {
		g := math.Round((*b.ChiffreDAffaires / *a.ChiffreDAffaires - 1)*1000) / 10
		t.EvolutionCAPct = &g
		switch {
		case g >= 2:
			t.Sens = "hausse"
		case g <= -2:
			t.Sens = "baisse"
		default:
			t.Sens = "stable"
		}
	}
	return t
}

// changes classifies the modification notices published since since by what they change,
// from their description.
func changes(notices []bodacc.Annonce, since time.Time) Changements {
	out := Changements{Depuis: since.Format(time.DateOnly)}
	for _, a := range notices {
		if a.FamilleAvis != "modification" || a.DateParution < out.Depuis {
			continue
		}
		var m struct {
			Descriptif string `json:"descriptif"`
		}
		a.ModificationsGenerales.Decode(&m)
		d := fold.String(m.Descriptif)
		switch {
		case strings.Contains(d, "administration") || strings.Contains(d, "dirigeant") || strings.Contains(d, "gerant") || strings.Contains(d, "president"):
			out.Dirigeants++
		case strings.Contains(d, "siege") || strings.Contains(d, "transfert"):
			out.Siege++
		case strings.Contains(d, "capital"):
			out.Capital++
		default:
			out.Autres++
		}
	}
	return out
}

// wonBy keeps the notices whose winner is the company (its name among the titulaires).
func wonBy(name string, notices []boamp.Avis) *Attributions {
	out := &Attributions{Marches: []Attribution{}, Lus: len(notices)}
	for _, a := range notices {
		for _, t := range a.Titulaire {
			if sameName(name, t) && fold.Contains(t, name) {
				out.Marches = append(out.Marches, Attribution{Date: a.DateParution, Objet: a.Objet, Acheteur: a.NomAcheteur, Titulaire: []string(a.Titulaire), URL: a.URLAvis})
				break
			}
		}
	}
	out.Total = len(out.Marches)
	return out
}
