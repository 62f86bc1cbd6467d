package fr

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

// The fixtures of the second set of company reports: every register answer is a recording of
// the annuaire-entreprises site (see rechercheentreprises/testdata/PROVENANCE).

// recordedAt is a day just after the Danone ratios were recorded (2024-12-12).
var recordedAt = time.Date(2025, 1, 15, 12, 0, 0, 0, time.UTC)

const (
	boampRecords = "/api/explore/v2.1/catalog/datasets/boamp/records"
	bioOperators = "/api/gouv/operateurs/"
)

func boampQuery(name string) url.Values {
	return upstreamtest.Query("where", `"`+name+`"`, "order_by", "dateparution desc", "limit", "100")
}

func searchQuery(pairs ...string) url.Values {
	return upstreamtest.Query(append([]string{"page", "1", "per_page", "25"}, pairs...)...)
}

// danoneAll is every source of a dossier on DANONE answering: the register and ratios
// recorded, VIES HAND-WRITTEN (no recording of a French number exists; see vies/PROVENANCE),
// BODACC, ADEME and BOAMP the empty envelopes (DERIVED: a company without any notice, RGE
// line or award).
func danoneAll(e *env) map[string]http.Handler {
	t, f := e.t, e.file
	return map[string]http.Handler{
		"recherche-entreprises": upstreamtest.Want(t, "/search", registerQuery("552032534"), f("rechercheentreprises", "search_552032534.json")),
		"bodacc":                upstreamtest.Want(t, bodaccRecords, bodaccQuery("552032534"), f("bodacc", "empty.json")),
		"vies":                  upstreamtest.Want(t, viesREST+"/ms/FR/vat/27552032534", nil, f("vies", "get_valid.json")),
		"data-economie":         upstreamtest.Want(t, ratiosRecords, ratiosQuery("552032534"), f("economie", "ratios.json")),
		"ademe":                 upstreamtest.Want(t, rgeLines, upstreamtest.Query("siret_eq", "55203253400703", "size", "100"), f("ademe", "empty.json")),
		"boamp":                 upstreamtest.Want(t, boampRecords, boampQuery("DANONE"), f("bodacc", "empty.json")),
	}
}

// ganymedeAll adds BOAMP (empty, DERIVED) to the recorded sources of GANYMEDE.
func ganymedeAll(e *env) map[string]http.Handler {
	m := ganymede(e)
	m["boamp"] = upstreamtest.Want(e.t, boampRecords, boampQuery("GANYMEDE"), e.file("bodacc", "empty.json"))
	return m
}

// besoinDeToit is a roofer (BESOIN DE TOIT, 843701079, NAF 43.91A) with its recorded RGE
// line; VIES answers MS_UNAVAILABLE (DERIVED, see vies/PROVENANCE), BODACC nothing (DERIVED).
func besoinDeToit(e *env) map[string]http.Handler {
	t, f := e.t, e.file
	return map[string]http.Handler{
		"recherche-entreprises": upstreamtest.Want(t, "/search", registerQuery("84370107900017"), f("rechercheentreprises", "search_843701079.json")),
		"ademe":                 upstreamtest.Want(t, rgeLines, upstreamtest.Query("siret_eq", "84370107900017", "size", "100"), f("ademe", "rge_siret.json")),
		"bodacc":                upstreamtest.Want(t, bodaccRecords, bodaccQuery("843701079"), f("bodacc", "empty.json")),
		"vies":                  upstreamtest.Want(t, viesREST+"/ms/FR/vat/90843701079", nil, f("vies", "get_ms_unavailable.json")),
	}
}

// besoinDeToitReceivership is the same recorded roofer with a collective proceeding open: the
// notice of bodacc/testdata/annonces.json, DERIVED from a real conversion into redressement
// judiciaire (another company's, its registre replaced by 843701079; see bodacc/PROVENANCE),
// asked for by SIREN (the recorded register answer to q=843701079).
func besoinDeToitReceivership(e *env) map[string]http.Handler {
	m := besoinDeToit(e)
	m["recherche-entreprises"] = upstreamtest.Want(e.t, "/search", registerQuery("843701079"), e.file("rechercheentreprises", "search_843701079.json"))
	m["bodacc"] = upstreamtest.Want(e.t, bodaccRecords, bodaccQuery("843701079"), e.file("bodacc", "annonces.json"))
	return m
}

// naturalia is an organic retailer (302474648) with its recorded Agence Bio operators.
func naturalia(e *env) map[string]http.Handler {
	t, f := e.t, e.file
	return map[string]http.Handler{
		"recherche-entreprises": upstreamtest.Want(t, "/search", registerQuery("302474648"), f("rechercheentreprises", "search_302474648.json")),
		"bodacc":                upstreamtest.Want(t, bodaccRecords, bodaccQuery("302474648"), f("bodacc", "empty.json")),
		"data-economie":         upstreamtest.Want(t, ratiosRecords, ratiosQuery("302474648"), f("economie", "empty.json")),
		"agence-bio":            upstreamtest.Want(t, bioOperators, upstreamtest.Query("siret", "302474648", "nb", "1500"), f("agencebio", "operateurs_siret.json")),
	}
}

// jouppe is the person search of Xavier Jouppe: the recorded answer of the register to
// q=xavier jouppe (DERIVED: served to the person query, whose answer has the same shape),
// with each company's notices.
func jouppe(e *env) map[string]http.Handler {
	t, f := e.t, e.file
	return map[string]http.Handler{
		"recherche-entreprises": upstreamtest.Want(t, "/search",
			searchQuery("nom_personne", "Jouppe", "prenoms_personne", "Xavier", "type_personne", "dirigeant"), f("rechercheentreprises", "search_xavier_jouppe.json")),
		"bodacc": upstreamtest.Match(t,
			upstreamtest.Route{Path: bodaccRecords, Query: bodaccQuery("104049424"), H: f("bodacc", "empty.json")},
			upstreamtest.Route{Path: bodaccRecords, Query: bodaccQuery("880878145"), H: f("bodacc", "annonces_880878145.json")}),
	}
}

// dinum is the DINUM (130025265, NAF 84.11Z) and the recorded answer of a national search of
// the register (the annuaire's "label rge, type collectivité" search, all 84.11Z; DERIVED:
// served to the NAF query).
func dinum(e *env, zone ...string) map[string]http.Handler {
	t, f := e.t, e.file
	return map[string]http.Handler{
		"recherche-entreprises": upstreamtest.Match(t,
			upstreamtest.Route{Path: "/search", Query: registerQuery("130025265"), H: f("rechercheentreprises", "search_130025265.json")},
			upstreamtest.Route{Path: "/search", Query: searchQuery(append([]string{"activite_principale", "84.11Z", "etat_administratif", "A"}, zone...)...),
				H: f("rechercheentreprises", "search_label_rge_type_ct.json")}),
	}
}

// rennesLeads is the recorded answer of the register for companies in 35000 (the annuaire's
// "ag, cp 35000" search; DERIVED: served to the NAF and département query), with the
// candidates' notices (empty, DERIVED).
func rennesLeads(e *env, search url.Values) map[string]http.Handler {
	t, f := e.t, e.file
	var routes []upstreamtest.Route
	for _, s := range []string{"435246145", "835013798", "389600982", "841311574", "492659784", "823403233", "888427994", "977850965", "892707498", "775695901"} {
		routes = append(routes, upstreamtest.Route{Path: bodaccRecords, Query: bodaccQuery(s), H: f("bodacc", "empty.json")})
	}
	return map[string]http.Handler{
		"recherche-entreprises": upstreamtest.Want(t, "/search", search, f("rechercheentreprises", "search_ag_cp_35000.json")),
		"bodacc":                upstreamtest.Match(t, routes...),
	}
}

type compCase struct {
	name, id string
	at       time.Time
	args     map[string]any
	fixtures func(e *env) map[string]http.Handler
	types    map[string]string // the spec's fields and their JSON types
	check    func(t *testing.T, out any)
}

func compositeCases() []compCase {
	leadsNAF := func(e *env) map[string]http.Handler {
		return rennesLeads(e, searchQuery("activite_principale", "70.22Z", "etat_administratif", "A", "departement", "35"))
	}
	return []compCase{
		{"due_diligence_healthy", "fr.due-diligence", recordedAt, map[string]any{"siren": "552032534"}, danoneAll,
			map[string]string{"identite.siren": "string", "kyb.verdict": "string", "kyb.method_version": "string", "kyb.controles.0.poids": "number",
				"score.score": "number", "score.facteurs.0.points": "number", "finances.tendance.evolution_ca_pct": "number", "finances.comptes": "array",
				"evenements": "array", "changements.dirigeants": "number", "marches_publics.total": "number", "tva.valide_vies": "boolean",
				"procedures_collectives.statut": "string", "sources.5.source": "string", "confidence": "number"},
			func(t *testing.T, out any) {
				d := out.(DueDiligence)
				if d.KYB.Verdict != Conforme || d.Score.Score != 85 || d.Confidence != 1 || len(d.Sources) != 6 {
					t.Errorf("verdict %s score %d confidence %v sources %d", d.KYB.Verdict, d.Score.Score, d.Confidence, len(d.Sources))
				}
				// 2023 (699 M€) against 2022 (635 M€): +10.1 %.
				if g := d.Finances.Tendance.EvolutionCAPct; g == nil || *g != 10.1 || d.Finances.Tendance.Sens != "hausse" {
					t.Errorf("trend = %+v", d.Finances.Tendance)
				}
			}},
		{"due_diligence_ceased", "fr.due-diligence", now, map[string]any{"q": "88087814500015"}, ganymedeAll, nil,
			func(t *testing.T, out any) {
				d := out.(DueDiligence)
				if d.KYB.Verdict != NonConforme || d.Score.Score != 0 || d.Score.Niveau != "cessee" || len(d.Evenements) != 3 || !d.Procedures.Radiee {
					t.Errorf("verdict %s score %d %s events %d", d.KYB.Verdict, d.Score.Score, d.Score.Niveau, len(d.Evenements))
				}
			}},
		{"valorisation_healthy", "fr.valorisation", recordedAt, map[string]any{"siren": "552032534"}, danoneAll,
			map[string]string{"chiffre_affaires": "number", "valorisation.estimation_centrale": "number", "valorisation.range.bas": "number",
				"valorisation.range.haut": "number", "methodes.0.multiples.central": "number", "method_version": "string", "sources": "array"},
			func(t *testing.T, out any) {
				v := out.(Valorisation)
				// 2023, 2022 and 2021 individual accounts: average EBE (417+381+381)/3 = 393 M€
				// → 1572/1965/2358 M€; average EBIT negative: not applicable; net income
				// 2023 1353 M€ → 10824/13530/16236 M€. Medians of the two: 6198, 7747.5, 9297.
				want := ValeurEstimee{EstimationCentrale: 7_747_500_000, Range: Range{Bas: 6_198_000_000, Haut: 9_297_000_000}}
				if v.Valorisation.EstimationCentrale != want.EstimationCentrale || v.Valorisation.Range != want.Range {
					t.Errorf("valorisation = %+v, want %+v", v.Valorisation, want)
				}
				if v.Methodes[1].Applicable || !v.Methodes[0].Applicable || !v.Methodes[2].Applicable || v.Decote != nil || len(v.ComptesUtilises) != 3 {
					t.Errorf("methods = %+v", v.Methodes)
				}
			}},
		{"verif_artisan_healthy", "fr.verif-artisan", now, map[string]any{"q": "84370107900017"}, besoinDeToit,
			map[string]string{"confiance": "number", "certifie_rge": "boolean", "procedures_collectives": "number", "method_version": "string",
				"facteurs.0.facteur": "string", "facteurs.0.poids": "number", "facteurs.0.points": "number", "knock_outs": "array", "limites": "string"},
			func(t *testing.T, out any) {
				// Open (15), active (15), NAF section F (10), created 2018: 8 years (15), no
				// proceeding (20), VIES unavailable (40 % of 5: 2), valid RGE without end date
				// (15), one officer named (5): 97.
				a := out.(ArtisanCheck)
				checkPoints(t, a.Facteurs, []int{15, 15, 10, 15, 20, 2, 15, 5})
				if a.Confiance != 97 || a.Niveau != "elevee" || !*a.CertifieRGE || *a.ProceduresCollectives != 0 || len(a.KnockOuts) != 0 {
					t.Errorf("confiance %d %s rge %v procedures %d kos %v", a.Confiance, a.Niveau, *a.CertifieRGE, *a.ProceduresCollectives, a.KnockOuts)
				}
			}},
		{"verif_artisan_receivership", "fr.verif-artisan", now, map[string]any{"siren": "843701079"}, besoinDeToitReceivership, nil,
			func(t *testing.T, out any) {
				// The healthy roofer's factors but the proceeding: open (15), active (15), 43.91A
				// (F: 10), created 2018 (15), redressement open (0), VIES unavailable (2), RGE
				// valid (15), one officer named (5): 77, capped at 30.
				a := out.(ArtisanCheck)
				checkPoints(t, a.Facteurs, []int{15, 15, 10, 15, 0, 2, 15, 5})
				if a.Confiance != 30 || a.Niveau != "faible" || len(a.KnockOuts) != 1 || a.KnockOuts[0].Regle != "redressement_judiciaire" {
					t.Errorf("confiance %d %s kos %v", a.Confiance, a.Niveau, a.KnockOuts)
				}
			}},
		{"verif_artisan_ceased", "fr.verif-artisan", now, map[string]any{"q": "88087814500015"}, ganymede, nil,
			func(t *testing.T, out any) {
				a := out.(ArtisanCheck)
				if a.Confiance != 0 || a.KnockOuts[0].Regle != "entreprise_cessee" || *a.CertifieRGE || a.EntrepriseActive {
					t.Errorf("confiance %d kos %v", a.Confiance, a.KnockOuts)
				}
			}},
		{"enrich_siren", "fr.enrich", now, map[string]any{"siren": "302474648"}, naturalia,
			map[string]string{"identite.siren": "string", "identite.denomination": "string", "dirigeants.0.nom": "string", "finances.0.chiffre_affaires": "number",
				"risque_insolvabilite.statut": "string", "contact": "object", "contact.note": "null", "contact.note_source": "string", "labels": "array", "sources": "array"},
			func(t *testing.T, out any) {
				x := out.(Enrich)
				if x.Risque == nil || x.Risque.Alerte || len(x.Sources) != 4 || x.Confidence != 1 {
					t.Errorf("risque %+v sources %d", x.Risque, len(x.Sources))
				}
			}},
		{"reseau_dirigeant", "fr.reseau-dirigeant", now, map[string]any{"nom": "Jouppe", "prenom": "Xavier"}, jouppe,
			map[string]string{"total_societes": "number", "cessees": "number", "niveau_alerte": "string", "method_version": "string",
				"facteurs.0.poids": "number", "societes.0.active": "boolean", "societes.0.cessee": "boolean", "societes.0.role": "string"},
			func(t *testing.T, out any) {
				// ARCTURUS active, GANYMEDE ceased 2022-11 after its 2020-01 creation: one
				// quick cessation (8); one of two ceased (below the share); no proceeding.
				n := out.(Reseau)
				checkPoints(t, n.Facteurs, []int{0, 0, 0, 8})
				if n.TotalSocietes != 2 || n.Actives != 1 || n.Cessees != 1 || n.NiveauAlerte != "FAIBLE" || n.ProceduresVerifiees != 2 {
					t.Errorf("network = %d %d %d %s %d", n.TotalSocietes, n.Actives, n.Cessees, n.NiveauAlerte, n.ProceduresVerifiees)
				}
			}},
		{"concurrents_national", "fr.concurrents", now, map[string]any{"siren": "130025265"}, func(e *env) map[string]http.Handler { return dinum(e) },
			map[string]string{"total_marche": "number", "top_concurrents": "array", "top_concurrents.0.nom": "string", "top_concurrents.0.finances": "object",
				"zone": "null", "sources": "array"},
			func(t *testing.T, out any) {
				c := out.(Concurrents)
				if c.TotalMarche != 30 || len(c.TopConcurrents) != 10 || c.NAF != "84.11Z" || !c.Truncated {
					t.Errorf("concurrents = %d %d %s", c.TotalMarche, len(c.TopConcurrents), c.NAF)
				}
			}},
		{"concurrents_zone", "fr.concurrents", now, map[string]any{"siren": "130025265", "zone": "47"},
			func(e *env) map[string]http.Handler { return dinum(e, "departement", "47") },
			map[string]string{"zone.type": "string", "top_concurrents.0.siege_dans_zone": "boolean"},
			func(t *testing.T, out any) {
				in := 0
				for _, c := range out.(Concurrents).TopConcurrents {
					if *c.SiegeDansZone {
						in++
					}
				}
				if in != 1 {
					t.Errorf("%d head offices in 47, want 1 (Marmande)", in)
				}
			}},
		{"qualified_leads_naf", "fr.qualified-leads", now, map[string]any{"activity": "70.22Z", "location": "35"}, leadsNAF,
			map[string]string{"naf_cible": "string", "leads.0.score": "number", "leads.0.categorie": "string", "leads.0.contact": "object",
				"leads.0.contact.telephone": "null", "leads.0.dirigeants": "array", "leads.0.facteurs.0.points": "number", "leads.0.age_ans": "number",
				"leads.0.status": "string", "method_version": "string"},
			func(t *testing.T, out any) {
				l := out.(Leads)
				// AG DEVELOPMENT (70.22Z: 20; head office in Paris: 0; no employee: 0;
				// revenue 2022: 10; 6 years: 10; net income > 0: 10; one year only: 0; no
				// notice: 0; ESS label: 10) = 60, WARM.
				if len(l.Leads) != 10 || l.Leads[0].Siren != "888427994" || l.Leads[0].Score != 60 || l.Leads[0].Categorie != Warm {
					t.Errorf("first lead %+v", l.Leads[0])
				}
				checkPoints(t, l.Leads[0].Facteurs, []int{20, 0, 0, 10, 10, 10, 0, 0, 10})
			}},
		{"qualified_leads_words", "fr.qualified-leads", now, map[string]any{"activity": "ag", "location": "35", "max": 5}, func(e *env) map[string]http.Handler {
			m := rennesLeads(e, nil)
			m["recherche-entreprises"] = upstreamtest.Match(e.t,
				upstreamtest.Route{Path: "/search", Query: searchQuery("q", "ag", "etat_administratif", "A", "departement", "35"), H: e.file("rechercheentreprises", "search_ag_cp_35000.json")},
				upstreamtest.Route{Path: "/search", Query: searchQuery("activite_principale", "70.22Z", "etat_administratif", "A", "departement", "35"), H: e.file("rechercheentreprises", "search_ag_cp_35000.json")})
			return m
		}, nil, func(t *testing.T, out any) {
			// 70.22Z is the code of 3 of the 10 companies.
			l := out.(Leads)
			if l.NAFCible != "70.22Z" || len(l.Leads) != 5 {
				t.Errorf("naf %s (%s), %d leads", l.NAFCible, l.NAFResolution, len(l.Leads))
			}
		}},
	}
}

func checkPoints(t *testing.T, fs []Factor, want []int) {
	t.Helper()
	var got []int
	for _, x := range fs {
		got = append(got, x.Points)
	}
	if !equalInts(got, want) {
		t.Errorf("points %v, want %v", got, want)
	}
}

// TestComposites runs each report on recorded answers, checks the breakdown by hand and the
// answer against its golden file.
func TestComposites(t *testing.T) {
	for _, c := range compositeCases() {
		t.Run(c.name, func(t *testing.T) {
			e := setupAt(t, 0, c.at)
			for name, h := range c.fixtures(e) {
				e.serve(name, h)
			}
			out, err := e.call(c.id, c.args)
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, out)
			checkGolden(t, c.name, out, c.types)
		})
	}
}

// compositeArgs is one valid call of each new report.
var compositeArgs = map[string]map[string]any{
	"fr.due-diligence":    {"siren": "552032534"},
	"fr.enrich":           {"siren": "552032534"},
	"fr.verif-artisan":    {"siren": "552032534"},
	"fr.valorisation":     {"siren": "552032534"},
	"fr.concurrents":      {"siren": "552032534"},
	"fr.reseau-dirigeant": {"nom": "Jouppe", "prenom": "Xavier"},
	"fr.qualified-leads":  {"activity": "70.22Z", "location": "35"},
}

// The register is the source these reports cannot stand without: down is a 502 naming it
// and slow a 504, and nothing else is called.
func TestCompositeRegisterFailures(t *testing.T) {
	for _, m := range []struct {
		name   string
		h      http.Handler
		status int
	}{{"down", upstreamtest.ServerError(), 502}, {"slow", upstreamtest.Hang(), 504}} {
		for id, args := range compositeArgs {
			t.Run(m.name+"/"+id, func(t *testing.T) {
				var timeout time.Duration
				if m.status == 504 {
					timeout = 100 * time.Millisecond
				}
				e := setup(t, timeout)
				e.serve("recherche-entreprises", m.h)
				_, err := e.call(id, args)
				ae := apierr.From(err)
				if ae.Status() != m.status || ae.Upstream != "recherche-entreprises" {
					t.Fatalf("err = %d %q %v", ae.Status(), ae.Upstream, err)
				}
				for name, srv := range e.servers {
					if name != "recherche-entreprises" && len(srv.Requests()) != 0 {
						t.Errorf("%s was called although the register failed", name)
					}
				}
			})
		}
	}
}

// A company the register does not know is a 404, before any other source is called.
func TestCompositeUnknownCompany(t *testing.T) {
	for _, id := range []string{"fr.due-diligence", "fr.enrich", "fr.verif-artisan", "fr.valorisation", "fr.concurrents"} {
		t.Run(id, func(t *testing.T) {
			e := setup(t, 0)
			e.serve("recherche-entreprises", e404())
			_, err := e.call(id, map[string]any{"siren": "552032534"})
			if ae := apierr.From(err); ae.Status() != 404 {
				t.Fatalf("err = %v, want 404", err)
			}
			for name, srv := range e.servers {
				if name != "recherche-entreprises" && len(srv.Requests()) != 0 {
					t.Errorf("%s was called for an unknown company", name)
				}
			}
		})
	}
}

// Bad input is a 400 naming the parameter, from the catalog, before any upstream call.
func TestCompositeBadParams(t *testing.T) {
	e := setup(t, 0)
	for _, tt := range []struct {
		id    string
		args  map[string]any
		param string
	}{
		{"fr.due-diligence", map[string]any{"siren": "552032535"}, "siren"},
		{"fr.due-diligence", map[string]any{}, ""},
		{"fr.enrich", map[string]any{"siren": "55203253"}, "siren"},
		{"fr.enrich", map[string]any{}, ""},
		{"fr.verif-artisan", map[string]any{"siren": "552032535"}, "siren"},
		{"fr.valorisation", map[string]any{"q": "a"}, "q"},
		{"fr.concurrents", map[string]any{"siren": "552032534", "zone": "84x"}, "zone"},
		{"fr.concurrents", map[string]any{"siren": "552032534", "zone": "R99"}, "zone"},
		{"fr.concurrents", map[string]any{"siren": "552032534", "zone": "20"}, "zone"},
		{"fr.reseau-dirigeant", map[string]any{"nom": "Jouppe"}, "prenom"},
		{"fr.reseau-dirigeant", map[string]any{"nom": "Jouppe", "prenom": "Xavier", "annee_naissance": 1850}, "annee_naissance"},
		{"fr.qualified-leads", map[string]any{"activity": "70.22Z"}, "location"},
		{"fr.qualified-leads", map[string]any{"activity": "70.22Z", "location": "35", "max": 51}, "max"},
	} {
		_, err := e.call(tt.id, tt.args)
		ae := apierr.From(err)
		if ae.Status() != 400 || ae.Param != tt.param && tt.param != "" {
			t.Errorf("%s %v: err = %v, want 400 on %q", tt.id, tt.args, err, tt.param)
		}
	}
	for name, s := range e.servers {
		if n := len(s.Requests()); n != 0 {
			t.Errorf("%s was called %d times by bad requests", name, n)
		}
	}
}

// A secondary source down is declared and lowers confidence; an essential one fails the call.
func TestCompositeSourceDown(t *testing.T) {
	t.Run("valorisation without accounts is a 502", func(t *testing.T) {
		e := setupAt(t, 0, recordedAt)
		for name, h := range danoneAll(e) {
			e.serve(name, h)
		}
		e.serve("data-economie", upstreamtest.ServerError())
		_, err := e.call("fr.valorisation", map[string]any{"siren": "552032534"})
		if ae := apierr.From(err); ae.Status() != 502 || ae.Upstream != "data-economie" {
			t.Fatalf("err = %v, want 502 naming data-economie", err)
		}
	})
	t.Run("valorisation without public accounts is a 404", func(t *testing.T) {
		e := setup(t, 0)
		for name, h := range ganymede(e) {
			e.serve(name, h)
		}
		_, err := e.call("fr.valorisation", map[string]any{"q": "88087814500015"})
		if ae := apierr.From(err); ae.Status() != 404 {
			t.Fatalf("err = %v, want 404", err)
		}
	})
	t.Run("due-diligence with BODACC and BOAMP down", func(t *testing.T) {
		e := setupAt(t, 0, recordedAt)
		for name, h := range danoneAll(e) {
			e.serve(name, h)
		}
		e.serve("bodacc", upstreamtest.ServerError())
		e.serve("boamp", upstreamtest.TooMany())
		out, err := e.call("fr.due-diligence", map[string]any{"siren": "552032534"})
		if err != nil {
			t.Fatal(err)
		}
		d := out.(DueDiligence)
		if d.Procedures != nil || d.Evenements != nil || d.MarchesPublics != nil || d.Confidence != 0.67 || d.KYB.Verdict != AVerifier {
			t.Errorf("procedures %v events %v awards %v confidence %v verdict %s", d.Procedures, d.Evenements, d.MarchesPublics, d.Confidence, d.KYB.Verdict)
		}
	})
	t.Run("verif-artisan with ADEME down", func(t *testing.T) {
		e := setup(t, 0)
		for name, h := range besoinDeToit(e) {
			e.serve(name, h)
		}
		e.serve("ademe", upstreamtest.ServerError())
		out, err := e.call("fr.verif-artisan", map[string]any{"q": "84370107900017"})
		if err != nil {
			t.Fatal(err)
		}
		a := out.(ArtisanCheck)
		// RGE and VIES missing: 40 % of 15 and of 5.
		if a.CertifieRGE != nil || a.Confiance != 88 || a.Confidence != 0.75 {
			t.Errorf("rge %v confiance %d confidence %v", a.CertifieRGE, a.Confiance, a.Confidence)
		}
	})
	t.Run("reseau-dirigeant with BODACC down", func(t *testing.T) {
		e := setup(t, 0)
		for name, h := range jouppe(e) {
			e.serve(name, h)
		}
		e.serve("bodacc", upstreamtest.ServerError())
		out, err := e.call("fr.reseau-dirigeant", map[string]any{"nom": "Jouppe", "prenom": "Xavier"})
		if err != nil {
			t.Fatal(err)
		}
		n := out.(Reseau)
		if n.ProceduresVerifiees != 0 || n.Facteurs[0].Resultat != "manquant" || n.Confidence != 0.33 || n.Societes[0].Procedure != nil {
			t.Errorf("checked %d factor %+v confidence %v", n.ProceduresVerifiees, n.Facteurs[0], n.Confidence)
		}
	})
	t.Run("enrich with Agence Bio down", func(t *testing.T) {
		e := setup(t, 0)
		for name, h := range naturalia(e) {
			e.serve(name, h)
		}
		e.serve("agence-bio", upstreamtest.ServerError())
		out, err := e.call("fr.enrich", map[string]any{"siren": "302474648"})
		if err != nil {
			t.Fatal(err)
		}
		if x := out.(Enrich); x.Confidence != 0.75 || x.Sources[3].Status != SourceFailed {
			t.Errorf("confidence %v sources %+v", x.Confidence, x.Sources)
		}
	})
	t.Run("qualified-leads with an unknown commune", func(t *testing.T) {
		e := setup(t, 0)
		e.serve("geo-api", upstreamtest.JSON(200, `[]`))
		_, err := e.call("fr.qualified-leads", map[string]any{"activity": "70.22Z", "location": "Zzyzx"})
		if ae := apierr.From(err); ae.Status() != 404 {
			t.Fatalf("err = %v, want 404", err)
		}
	})
}

// Through the real server: a report is charged, a failure of its essential source is not,
// and a bad parameter never reaches the gate.
func TestCompositesThroughTheServer(t *testing.T) {
	e := setupAt(t, 0, recordedAt)
	gate := &apitest.RecordingGate{}
	h := apitest.Start(t, e.cat, apitest.Options{CheckShapes: true, Gate: gate, Cache: &mapCache{m: map[string][]byte{}}})
	for name, hd := range danoneAll(e) {
		e.serve(name, hd)
	}
	status, doc := get(t, h, "/v1/fr/valorisation", url.Values{"siren": {"552032534"}})
	if status != 200 || typeAt(doc, "valorisation.estimation_centrale") != "number" {
		t.Fatalf("valorisation = %d %v", status, doc)
	}
	e.serve("recherche-entreprises", upstreamtest.ServerError())
	status, _ = get(t, h, "/v1/fr/due-diligence", url.Values{"siren": {"542065479"}})
	if status != 502 {
		t.Errorf("register down = %d, want 502", status)
	}
	before := len(gate.Charged) + len(gate.Waived)
	status, doc = get(t, h, "/v1/fr/concurrents", url.Values{"siren": {"552032534"}, "zone": {"R99"}})
	if status != 400 || doc["error"].(map[string]any)["param"] != "zone" {
		t.Errorf("bad zone = %d %v", status, doc)
	}
	if after := len(gate.Charged) + len(gate.Waived); after != before {
		t.Errorf("a bad zone reached the gate")
	}
	if charged, waived := gate.Counts(); charged != 1 || waived != 1 {
		t.Errorf("charged %d, waived %d; want the valuation charged and the 502 waived", charged, waived)
	}
}

// Scores with a company in receivership: a lead with an open proceeding is dropped, and a
// director's company in receivership raises the alert. The notice is the redressement
// judiciaire of bodacc/testdata/annonces.json (DERIVED from a real notice, registre 843701079),
// served for the company under test (DERIVED use: the connector asks by SIREN and keeps what
// it is answered).
func TestCompositeReceivership(t *testing.T) {
	t.Run("lead dropped", func(t *testing.T) {
		e := setup(t, 0)
		for name, h := range rennesLeads(e, searchQuery("activite_principale", "70.22Z", "etat_administratif", "A", "departement", "35")) {
			e.serve(name, h)
		}
		var routes []upstreamtest.Route
		for _, s := range []string{"435246145", "835013798", "389600982", "841311574", "823403233", "888427994", "977850965", "892707498", "775695901"} {
			routes = append(routes, upstreamtest.Route{Path: bodaccRecords, Query: bodaccQuery(s), H: e.file("bodacc", "empty.json")})
		}
		routes = append(routes, upstreamtest.Route{Path: bodaccRecords, Query: bodaccQuery("492659784"), H: e.file("bodacc", "annonces.json")})
		e.serve("bodacc", upstreamtest.Match(t, routes...))
		out, err := e.call("fr.qualified-leads", map[string]any{"activity": "70.22Z", "location": "35"})
		if err != nil {
			t.Fatal(err)
		}
		l := out.(Leads)
		if len(l.Leads) != 9 || len(l.Exclus) != 1 || l.Exclus[0].Siren != "492659784" || l.Exclus[0].Raison != "collective proceeding: redressement_judiciaire" {
			t.Errorf("%d leads, excluded %+v", len(l.Leads), l.Exclus)
		}
	})
	t.Run("director's company in receivership", func(t *testing.T) {
		e := setup(t, 0)
		for name, h := range jouppe(e) {
			e.serve(name, h)
		}
		e.serve("bodacc", upstreamtest.Match(t,
			upstreamtest.Route{Path: bodaccRecords, Query: bodaccQuery("104049424"), H: e.file("bodacc", "annonces.json")},
			upstreamtest.Route{Path: bodaccRecords, Query: bodaccQuery("880878145"), H: e.file("bodacc", "annonces_880878145.json")}))
		out, err := e.call("fr.reseau-dirigeant", map[string]any{"nom": "Jouppe", "prenom": "Xavier"})
		if err != nil {
			t.Fatal(err)
		}
		n := out.(Reseau)
		// Receivership (30) and one quick cessation (8): 38, MODERE.
		checkPoints(t, n.Facteurs, []int{0, 30, 0, 8})
		if n.Points != 38 || n.NiveauAlerte != "MODERE" || *n.Societes[0].Procedure != "redressement_judiciaire" {
			t.Errorf("points %d %s", n.Points, n.NiveauAlerte)
		}
	})
}

// enrich by name and city searches the register with both, and takes the best match.
func TestEnrichByNameAndCity(t *testing.T) {
	e := setup(t, 0)
	for name, h := range naturalia(e) {
		e.serve(name, h)
	}
	e.serve("recherche-entreprises", upstreamtest.Want(t, "/search", registerQuery("Naturalia Clichy"), e.file("rechercheentreprises", "search_302474648.json")))
	out, err := e.call("fr.enrich", map[string]any{"name": "Naturalia", "city": "Clichy"})
	if err != nil {
		t.Fatal(err)
	}
	if x := out.(Enrich); x.Identite.Siren != "302474648" || x.Query != "Naturalia Clichy" {
		t.Errorf("enrich = %s %q", x.Identite.Siren, x.Query)
	}
}

// A second report on a company calls only the sources the first did not: a due-diligence
// after an entreprise-360 adds BOAMP, a tradesperson check after both adds nothing.
func TestCompositesShareTheCache(t *testing.T) {
	e := setupWith(t, 0, recordedAt, &mapCache{m: map[string][]byte{}})
	for name, h := range danoneAll(e) {
		e.serve(name, h)
	}
	calls := func() map[string]int {
		m := map[string]int{}
		for name, s := range e.servers {
			if n := len(s.Requests()); n > 0 {
				m[name] = n
			}
		}
		return m
	}
	for _, id := range []string{"fr.entreprise-360", "fr.due-diligence", "fr.verif-artisan", "fr.valorisation", "fr.enrich"} {
		if _, err := e.call(id, map[string]any{"siren": "552032534"}); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
	want := map[string]int{"recherche-entreprises": 1, "bodacc": 1, "vies": 1, "data-economie": 1, "ademe": 1, "boamp": 1}
	got := calls()
	for name, n := range want {
		if got[name] != n {
			t.Errorf("%s called %d times over five reports, want %d", name, got[name], n)
		}
	}
}

// Every secondary source silent: the dossier is still answered, each source declared as a
// timeout and the confidence at the register's share; only the register's silence is a 504.
func TestCompositeAllSecondarySlow(t *testing.T) {
	e := setupAt(t, 100*time.Millisecond, recordedAt)
	for name, h := range danoneAll(e) {
		if name != "recherche-entreprises" {
			h = upstreamtest.Hang()
		}
		e.serve(name, h)
	}
	out, err := e.call("fr.due-diligence", map[string]any{"siren": "552032534"})
	if err != nil {
		t.Fatal(err)
	}
	d := out.(DueDiligence)
	for _, s := range d.Sources[1:] {
		if s.Status != SourceTimeout {
			t.Errorf("%s: %s, want timeout", s.Source, s.Status)
		}
	}
	if d.Confidence != 0.17 || d.KYB.Verdict != AVerifier || d.Procedures != nil || d.Finances.Comptes != nil {
		t.Errorf("confidence %v verdict %s", d.Confidence, d.KYB.Verdict)
	}
}
