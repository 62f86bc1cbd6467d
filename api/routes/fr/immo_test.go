package fr

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/upstream/geoapi"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

// The property routes' fixtures. The geocoder's answers are recordings (ban/testdata/
// PROVENANCE); the sales are the recorded lines of Boulogne-Billancourt's 2025 file
// (dvf/testdata/92012_2025.csv). No recording of the geocoder for an address of a commune
// whose DVF lines are recorded exists, so the full estimates are computed at the place of
// one of those sales (its own address and coordinates), and the routes' geocoding is tested
// on the recorded addresses. A DVF year without a recording answers 500 (DERIVED: a failing
// source), which the answers must declare.

// immoGoldenIDs are the routes whose golden answers this file checks.
var immoGoldenIDs = []string{"fr.estimation-immo", "free.estimation-immo", "fr.analyse-immo", "fr.analyse-immo.partial", "fr.etude-implantation"}

const dvfPath = "/geo-dvf/latest/csv/%d/communes/%s/%s.csv"

// dvfFiles serves the recorded files of insee by year, and fallback for every other year of
// 2021 to 2026 (the years the routes may read at the test clock).
func dvfFiles(e *env, dep, insee string, recorded map[int]string, fallback http.Handler) http.Handler {
	var routes []upstreamtest.Route
	for y := now.Year() - 5; y <= now.Year(); y++ {
		h := fallback
		if f, ok := recorded[y]; ok {
			h = e.file("dvf", f)
		}
		routes = append(routes, upstreamtest.Route{Path: fmt.Sprintf(dvfPath, y, dep, insee), H: h})
	}
	return upstreamtest.Match(e.t, routes...)
}

// belleFeuille is the place of the recorded sale 2025-1193201, as its DVF line gives it.
var belleFeuille = ImmoPlace{Label: "14 RUE DE LA BELLE FEUILLE 92100 Boulogne-Billancourt", Insee: "92012", Commune: "Boulogne-Billancourt",
	Postcode: "92100", Lat: 48.838368, Lon: 2.242039}

// Two recorded flats (425 200 € for 44 m², 500 000 € for 52 m², each sale on several lines):
// by hand, 9663.64 and 9615.38 €/m², median 9639.51, Q1 9627.45, Q3 9651.57; for 60 m²
// 578 370.6 → 578 400 €, range 577 600 to 579 100. Two sales are under the sample floor, so
// 2021-2023 are asked too; the five unrecorded years fail and are declared.
func TestEstimationRecordedSales(t *testing.T) {
	e := setup(t, 0)
	e.serve("dvf", dvfFiles(e, "92", "92012", map[int]string{2025: "92012_2025.csv"}, upstreamtest.ServerError()))
	out, err := e.routes.estimate(context.Background(), belleFeuille, e.routes.source("ban", nil), 60, "appartement")
	if err != nil {
		t.Fatal(err)
	}
	if out.SampleSize != 2 || out.PrixM2.Median != 9640 || out.PrixM2.Q1 != 9627 || out.PrixM2.Q3 != 9652 ||
		out.Estimation.ValeurEstimee != 578400 || out.Estimation.Basse != 577600 || out.Estimation.Haute != 579100 {
		t.Errorf("estimate = %+v %+v %+v", out.SampleSize, out.PrixM2, out.Estimation)
	}
	ech := out.Echantillon
	if ech.Fiabilite != "faible" || ech.Note == nil || fmt.Sprint(ech.Annees) != "[2025]" || fmt.Sprint(ech.AnneesEnEchec) != "[2021 2022 2023 2024 2026]" || ech.Perimetre != "commune" {
		t.Errorf("echantillon = %+v", ech)
	}
	if len(out.Sources) != 7 || out.Confidence != 0.29 {
		t.Errorf("%d sources, confidence %v; want the geocoder and six DVF years, 2 of 7 answering", len(out.Sources), out.Confidence)
	}
	checkGolden(t, "estimation_immo_recorded", out, map[string]string{"ville": "string", "prix_m2.median": "number", "prix_m2.range.1": "number",
		"estimation.valeur_estimee": "number", "sample_size": "number", "method_version": "string", "sources.1.status": "string"})
	if got := len(e.servers["dvf"].Requests()); got != 6 {
		t.Errorf("%d DVF requests, want 6 (three years, then three earlier ones)", got)
	}

	// A fresh client: the five failing years above opened DVF's circuit breaker.
	e = setup(t, 0)
	e.serve("dvf", dvfFiles(e, "92", "92012", map[int]string{2025: "92012_2025.csv"}, upstreamtest.ServerError()))
	houses, err := e.routes.estimate(context.Background(), belleFeuille, e.routes.source("ban", nil), 90, "maison")
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Status() != 404 || !strings.Contains(ae.Message, "no recorded sale of a single maison") {
		t.Errorf("houses = %+v, %v; want 404: no house sold", houses, err)
	}
}

// The free trial reads the last three years only and gives each type's median.
func TestFreeEstimationRecordedSales(t *testing.T) {
	e := setup(t, 0)
	e.serve("dvf", dvfFiles(e, "92", "92012", map[int]string{2025: "92012_2025.csv"}, upstreamtest.ServerError()))
	out, err := e.routes.communeMedian(context.Background(), belleFeuille, e.routes.source("ban", nil))
	if err != nil {
		t.Fatal(err)
	}
	if m := out.PrixM2Median["appartement"]; m == nil || *m != 9640 || out.PrixM2Median["maison"] != nil || out.Ventes["appartement"] != 2 {
		t.Errorf("free = %+v", out)
	}
	checkGolden(t, "free_estimation_immo_recorded", out, map[string]string{"prix_m2_median.appartement": "number", "prix_m2_median.maison": "null"})
	if got := len(e.servers["dvf"].Requests()); got != 3 {
		t.Errorf("%d DVF requests, want 3 (no widening)", got)
	}
}

// A Paris address is estimated on its arrondissement's files (75119), not the city's twenty.
// Every DVF file failing is a 502 naming DVF (not charged).
func TestEstimationArrondissement(t *testing.T) {
	e := setup(t, 0)
	e.serve("ban", upstreamtest.Want(t, "/geocodage/search", upstreamtest.Query("q", "21 rue des ardennes, Paris", "limit", "5"), e.file("ban", "search_paris_ardennes.json")))
	e.serve("dvf", dvfFiles(e, "75", "75119", nil, upstreamtest.ServerError()))
	_, err := e.call("fr.estimation-immo", map[string]any{"adresse": "21 rue des ardennes, Paris", "surface": 40})
	if ae := apierr.Known(err); ae == nil || ae.Status() != 502 || ae.Upstream != "dvf" {
		t.Fatalf("err = %v, want 502 naming dvf", err)
	}
	for _, r := range e.servers["dvf"].Requests() {
		if !strings.HasSuffix(r.URL.Path, "/communes/75/75119.csv") {
			t.Errorf("read %s, want the 19th arrondissement's file", r.URL.Path)
		}
	}
	if n := len(e.servers["dvf"].Requests()); n != 3 {
		t.Errorf("%d DVF requests, want the window's three years", n)
	}
}

// A commune without any DVF file over the years read is a 404 naming the years, for the
// estimate (six years) and the free trial (three). DERIVED: 404 is DVF's answer for a file
// it does not publish.
func TestEstimationWithoutFiles(t *testing.T) {
	for _, tt := range []struct {
		id       string
		args     map[string]any
		requests int
	}{
		{"fr.estimation-immo", map[string]any{"adresse": "rue jules ferry 64110 mazeres-lezons", "surface": 80, "type": "maison"}, 6},
		{"free.estimation-immo", map[string]any{"adresse": "rue jules ferry 64110 mazeres-lezons"}, 3},
	} {
		t.Run(tt.id, func(t *testing.T) {
			e := setup(t, 0)
			e.serve("ban", upstreamtest.Want(t, "/geocodage/search", upstreamtest.Query("q", "rue jules ferry 64110 mazeres-lezons", "limit", "5"), e.file("ban", "search_mazeres.json")))
			e.serve("dvf", dvfFiles(e, "64", "64373", nil, http.NotFoundHandler()))
			_, err := e.call(tt.id, tt.args)
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Status() != 404 || !strings.Contains(ae.Message, "Mazères-Lezons (64373)") {
				t.Fatalf("err = %v, want 404 naming the commune", err)
			}
			if n := len(e.servers["dvf"].Requests()); n != tt.requests {
				t.Errorf("%d DVF requests, want %d", n, tt.requests)
			}
		})
	}
}

// An address the geocoder does not know is a 404 before any sale is read.
func TestEstimationUnknownAddress(t *testing.T) {
	e := setup(t, 0)
	e.serve("ban", upstreamtest.Want(t, "/geocodage/search", upstreamtest.Query("q", "nowhere at all", "limit", "5"), e.file("ban", "empty.json")))
	e.serve("dvf", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Errorf("DVF asked %s", r.URL) }))
	_, err := e.call("fr.estimation-immo", map[string]any{"adresse": "nowhere at all", "surface": 40})
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Status() != 404 {
		t.Fatalf("err = %v, want 404", err)
	}
}

func TestNotCovered(t *testing.T) {
	for code, want := range map[string]bool{"57463": true, "67482": true, "68224": true, "97611": true, "97411": false, "92012": false, "75119": false} {
		if notCovered(code) != want {
			t.Errorf("notCovered(%s) = %v", code, !want)
		}
	}
}

// loyersTable serves the recorded apartment table of the rent map.
func loyersTable(e *env) http.Handler {
	return upstreamtest.Want(e.t, "/resources/carte-des-loyers-indicateurs-de-loyers-dannonce-par-commune-en-2025/20251211-145010/pred-app-mef-dhup.csv",
		nil, e.file("loyers", "pred-app-mef-dhup.csv"))
}

// The analysis at the recorded Boulogne-Billancourt sales with the recorded rent (29.73 €/m²
// a month): gross yield 29.7322 × 12 / 9639.51 = 3.70 %, sub-score (3.70 − 3) / 6 = 0.117,
// 40 × 0.117 = 4.7 → 5 points. Géorisques, ADEME and geo.api have no recording for the commune
// and fail (DERIVED): their factors earn 40 % of their weight (6 + 4 + 8), the momentum has
// no year with 5 sales (6): 29 points, grade D.
func TestAnalyseRecorded(t *testing.T) {
	e := setup(t, 0)
	e.serve("dvf", dvfFiles(e, "92", "92012", map[int]string{2025: "92012_2025.csv"}, upstreamtest.ServerError()))
	e.serve("carte-loyers", loyersTable(e))
	for _, name := range []string{"georisques", "ademe", "geo-api"} {
		e.serve(name, upstreamtest.ServerError())
	}
	out, err := e.routes.analyse(context.Background(), belleFeuille, e.routes.source("ban", nil), 60, "appartement")
	if err != nil {
		t.Fatal(err)
	}
	rd := out.Rendement
	if rd == nil || rd.RendementBrutPct != 3.70 || rd.LoyerMensuel != 1784 || rd.RendementNetPct != 2.52 {
		t.Errorf("rendement = %+v", rd)
	}
	sc := out.ScoreInvestissement
	points := map[string]int{}
	for _, f := range sc.Facteurs {
		points[f.Facteur+"/"+f.Resultat] = f.Points
	}
	want := map[string]int{"rendement_brut_pct/ok": 5, "ventes_pour_1000_hab/manquant": 8, "evolution_prix_pct/manquant": 6, "risques_recenses/manquant": 6, "part_dpe_fg_pct/manquant": 4}
	if fmt.Sprint(points) != fmt.Sprint(want) || sc.Score != 29 || sc.Note != "D" {
		t.Errorf("score %d %s, factors %v; want 29 D %v", sc.Score, sc.Note, points, want)
	}
	if out.Energie != nil || out.Risques != nil || out.Demographie != nil || out.Estimation.PrixM2Median != 9640 {
		t.Errorf("analysis = %+v", out)
	}
	checkGolden(t, "analyse_immo_recorded", out, map[string]string{"ville": "string", "estimation.prix_m2_median": "number",
		"score_investissement.score": "number", "score_investissement.facteurs.0.points": "number", "rendement.rendement_brut_pct": "number",
		"energie": "null", "risques": "null", "demographie": "null"})
}

// The partial variant reads the geocoder, three DVF years and the rent map, nothing else.
func TestAnalysePartialRecorded(t *testing.T) {
	e := setup(t, 0)
	e.serve("dvf", dvfFiles(e, "92", "92012", map[int]string{2025: "92012_2025.csv"}, upstreamtest.ServerError()))
	e.serve("carte-loyers", loyersTable(e))
	for _, name := range []string{"georisques", "ademe", "geo-api"} {
		e.serve(name, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Errorf("the partial asked %s", name) }))
	}
	out, err := e.routes.analysePartial(context.Background(), belleFeuille, e.routes.source("ban", nil), 60)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Partial || out.PrixM2Median != 9640 || out.ValeurEstimee != 578400 || out.RendementBrutPct == nil || *out.RendementBrutPct != 3.70 || out.ScoreInvestissement.Score != 29 {
		t.Errorf("partial = %+v", out)
	}
	for _, f := range out.ScoreInvestissement.Facteurs[1:] {
		if f.Resultat != FactorNotRead {
			t.Errorf("%s = %s, want non_evaluee", f.Facteur, f.Resultat)
		}
	}
	if n := len(e.servers["dvf"].Requests()); n != 3 {
		t.Errorf("%d DVF requests, want 3 (no widening)", n)
	}
	checkGolden(t, "analyse_immo_partial_recorded", out, map[string]string{"_partial": "boolean", "prix_m2_median": "number", "valeur_estimee": "number"})
}

// The investment score's factors, worked out by hand.
func TestScoreInvest(t *testing.T) {
	pop := 10000
	rd := &Rendement{RendementBrutPct: 6}                     // (6 − 3) / 6 = 0.5 → 20 of 40
	dm := &Demographie{Population: &pop, VentesAn: 150}       // 15 per 1000 → 20 of 20
	ri := &RisquesCommune{Total: 4}                           // 1 − 4/8 = 0.5 → 7.5 → 8 of 15
	en := &Energie{Diagnostics: 10, PartFGPct: 50}            // 1 − min(50/40, 1) = 0 → 0 of 10
	medians := map[string]float64{"2024": 2000, "2025": 2100} // +5 % → (5 + 5) / 10 = 1 → 15 of 15
	sc := scoreInvest(analyseInputs{full: true}, rd, en, ri, dm, medians)
	got := []int{}
	for _, f := range sc.Facteurs {
		got = append(got, f.Points)
	}
	if fmt.Sprint(got) != "[20 20 15 8 0]" || sc.Score != 63 || sc.Note != "B" {
		t.Errorf("points %v, score %d %s; want [20 20 15 8 0] 63 B", got, sc.Score, sc.Note)
	}
}

// The location study for Rennes (35238) and "conseil": the register's recorded answer for
// companies in 35000 (DERIVED, as for the leads: served to the words search, whose modal NAF
// is 70.22Z, 3 of 10, and to the commune count, total 37). No recording exists for the
// département count, the populations nor Rennes's DVF files: they fail (DERIVED) and are
// declared; each of the three factors earns 40 % of its weight (20 + 12 + 8 = 40, D).
func TestEtudeImplantation(t *testing.T) {
	e := setup(t, 0)
	recorded := e.file("rechercheentreprises", "search_ag_cp_35000.json")
	e.serve("recherche-entreprises", upstreamtest.Match(t,
		upstreamtest.Route{Path: "/search", Query: searchQuery("q", "conseil", "etat_administratif", "A", "code_commune", "35238"), H: recorded},
		upstreamtest.Route{Path: "/search", Query: upstreamtest.Query("page", "1", "per_page", "1", "activite_principale", "70.22Z", "etat_administratif", "A", "code_commune", "35238"), H: recorded},
		upstreamtest.Route{Path: "/search", Query: upstreamtest.Query("page", "1", "per_page", "1", "activite_principale", "70.22Z", "etat_administratif", "A", "departement", "35"), H: upstreamtest.ServerError()}))
	e.serve("geo-api", upstreamtest.ServerError())
	e.serve("dvf", dvfFiles(e, "35", "35238", nil, upstreamtest.ServerError()))
	got, err := e.call("fr.etude-implantation", map[string]any{"activite": "conseil", "commune": "35238"})
	if err != nil {
		t.Fatal(err)
	}
	out := got.(EtudeImplantation)
	if out.NAF != "70.22Z" || out.ConcurrentsActifs != 37 || out.HabitantsParConcurrent != nil || out.Departement != nil || out.PrixLocauxCommerciaux != nil ||
		out.ScoreOpportunite.Score != 40 || out.ScoreOpportunite.Note != "D" || out.Confidence != 0.25 {
		t.Errorf("study = %+v", out)
	}
	checkGolden(t, "etude_implantation_recorded", out, map[string]string{"commune.insee": "string", "concurrents_actifs": "number",
		"habitants_par_concurrent": "null", "score_opportunite.score": "number", "score_opportunite.facteurs.0.points": "number"})
}

// The opportunity score, worked out by hand: 500 inhabitants per competitor against 250 in
// the département is a ratio of 2 → 50; 100 000 inhabitants → 30; 1 000 per km² → 10.
func TestScoreOpportunite(t *testing.T) {
	pop, hpc, depHPC, dens := 100000, 500.0, 250.0, 1000.0
	e := EtudeImplantation{ConcurrentsActifs: 200, HabitantsParConcurrent: &hpc, Commune: ImplantationCommune{Population: &pop, DensiteHabKm2: &dens},
		Departement: &ZoneConcurrence{HabitantsParConcurrent: &depHPC}}
	sc := scoreOpportunite(e)
	if sc.Score != 90 || sc.Note != "A" {
		t.Errorf("score = %+v", sc)
	}
}

// Through the real server: a bad surface is a 400 that never reaches the gate nor an
// upstream; DVF failing on every year is a 502 naming DVF, and nothing is charged.
func TestEstimationThroughTheServer(t *testing.T) {
	e := setup(t, 0)
	gate := &apitest.RecordingGate{}
	h := apitest.Start(t, e.cat, apitest.Options{CheckShapes: true, Gate: gate})
	e.serve("ban", upstreamtest.Want(t, "/geocodage/search", upstreamtest.Query("q", "21 rue des ardennes, Paris", "limit", "5"), e.file("ban", "search_paris_ardennes.json")))
	e.serve("dvf", dvfFiles(e, "75", "75119", nil, upstreamtest.ServerError()))

	status, doc := get(t, h, "/v1/fr/estimation-immo", url.Values{"adresse": {"21 rue des ardennes, Paris"}, "surface": {"0"}})
	if status != 400 || doc["error"].(map[string]any)["param"] != "surface" {
		t.Errorf("surface 0 = %d %v, want 400 naming surface", status, doc)
	}
	if len(e.servers["ban"].Requests()) != 0 {
		t.Error("a bad parameter reached the geocoder")
	}
	status, doc = get(t, h, "/v1/fr/estimation-immo", url.Values{"adresse": {"21 rue des ardennes, Paris"}, "surface": {"40"}})
	if status != 502 || doc["error"].(map[string]any)["upstream"] != "dvf" {
		t.Errorf("DVF down = %d %v, want 502 naming dvf", status, doc)
	}
	if charged, _ := gate.Counts(); charged != 0 {
		t.Errorf("charged %d calls, want none", charged)
	}
}

// No file in the years that answered while another failed is not "no sale": 502 naming DVF.
func TestNoFileButAYearFailed(t *testing.T) {
	e := setup(t, 0)
	e.serve("ban", upstreamtest.Want(t, "/geocodage/search", upstreamtest.Query("q", "rue jules ferry 64110 mazeres-lezons", "limit", "5"), e.file("ban", "search_mazeres.json")))
	e.serve("dvf", upstreamtest.Match(t,
		upstreamtest.Route{Path: fmt.Sprintf(dvfPath, 2024, "64", "64373"), H: http.NotFoundHandler()},
		upstreamtest.Route{Path: fmt.Sprintf(dvfPath, 2025, "64", "64373"), H: upstreamtest.ServerError()},
		upstreamtest.Route{Path: fmt.Sprintf(dvfPath, 2026, "64", "64373"), H: http.NotFoundHandler()}))
	_, err := e.call("free.estimation-immo", map[string]any{"adresse": "rue jules ferry 64110 mazeres-lezons"})
	if ae := apierr.Known(err); ae == nil || ae.Status() != 502 || ae.Upstream != "dvf" {
		t.Fatalf("err = %v, want 502 naming dvf", err)
	}
}

// TestAreaDensityUsesUnroundedArea: the density of /v1/fr/insee-commune, the analyses and the
// implantation study is population over the area as geo.api gives it, not over the rounded
// km² shown (1 000 inhabitants on 0.5149 km²: 1942.1, where 0.51 km² would give 1960.8).
func TestAreaDensityUsesUnroundedArea(t *testing.T) {
	ha, pop := 51.49, 1000
	km2, d := areaDensity(&geoapi.Commune{Surface: &ha, Population: &pop})
	if km2 == nil || *km2 != 0.51 || d == nil || *d != 1942.1 {
		t.Fatalf("areaDensity = %v, %v; want 0.51 km², 1942.1 /km²", km2, d)
	}
	if km2, d := areaDensity(&geoapi.Commune{Surface: &ha}); km2 == nil || d != nil {
		t.Errorf("without population: %v, %v; want an area and no density", km2, d)
	}
}
