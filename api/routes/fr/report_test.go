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

// The requests a company report sends, by upstream.
func registerQuery(q string) url.Values {
	return upstreamtest.Query("q", q, "page", "1", "per_page", "1", "limite_matching_etablissements", "100")
}

func bodaccQuery(siren string) url.Values {
	return upstreamtest.Query("where", `registre like "`+siren+`"`, "order_by", "dateparution desc", "limit", "100")
}

func bodaccFamily(siren, famille string) url.Values {
	return upstreamtest.Query("where", `registre like "`+siren+`" AND familleavis="`+famille+`"`, "order_by", "dateparution desc", "limit", "100")
}

func ratiosQuery(siren string) url.Values {
	return upstreamtest.Query("where", `siren="`+siren+`"`, "order_by", "date_cloture_exercice desc", "limit", "20")
}

const (
	bodaccRecords = "/api/explore/v2.1/catalog/datasets/annonces-commerciales/records"
	ratiosRecords = "/api/explore/v2.1/catalog/datasets/ratios_inpi_bce/records"
	rgeLines      = "/data-fair/api/v1/datasets/liste-des-entreprises-rge-2/lines"
	viesREST      = "/taxation_customs/vies/rest-api"
)

// ganymede is every source of a report on GANYMEDE (880878145, ceased in 2022) answering,
// from the recordings of the annuaire-entreprises site (see each connector's PROVENANCE).
func ganymede(e *env) map[string]http.Handler {
	t, f := e.t, e.file
	return map[string]http.Handler{
		"recherche-entreprises": upstreamtest.Want(t, "/search", registerQuery("88087814500015"), f("rechercheentreprises", "search_88087814500015.json")),
		"bodacc":                upstreamtest.Want(t, bodaccRecords, bodaccQuery("880878145"), f("bodacc", "annonces_880878145.json")),
		"ademe":                 upstreamtest.Want(t, rgeLines, upstreamtest.Query("siret_eq", "88087814500015", "size", "100"), f("ademe", "empty.json")),
		"data-economie":         upstreamtest.Want(t, ratiosRecords, ratiosQuery("880878145"), f("economie", "empty.json")),
		"vies":                  upstreamtest.Want(t, viesREST+"/ms/FR/vat/09880878145", nil, f("vies", "get_invalid_fr.json")),
	}
}

func reportCases(e *env) []golden {
	t, f := e.t, e.file
	spec360 := map[string]string{"found": "boolean", "identite.siren": "string", "identite.tva": "string", "identite.denomination": "string",
		"identite.status": "string", "annonces_legales.total": "number", "tva.numero": "string", "siege.siret": "string", "dirigeants": "array",
		"etablissements.total": "number", "finances": "array", "comptes_deposes": "array", "rge.certifie": "boolean",
		"sources": "array", "sources.0.source": "string", "sources.0.fetched_at": "string", "sources.0.status": "string", "confidence": "number"}
	down := map[string]string{"found": "boolean", "annonces_legales": "null", "tva.valide_vies": "null", "sources.1.status": "string",
		"sources.1.error": "string", "comptes_deposes.0.chiffre_affaires": "number", "confidence": "number"}
	return []golden{
		{"entreprise_360_ceased", "fr.entreprise-360", map[string]any{"q": "88087814500015"}, ganymede(e), spec360},
		{"entreprise_360_sources_down", "fr.entreprise-360", map[string]any{"siren": "552032534"}, map[string]http.Handler{
			"recherche-entreprises": upstreamtest.Want(t, "/search", registerQuery("552032534"), f("rechercheentreprises", "search_552032534.json")),
			"bodacc":                upstreamtest.ServerError(),
			"ademe":                 upstreamtest.Want(t, rgeLines, upstreamtest.Query("siret_eq", "55203253400703", "size", "100"), f("ademe", "empty.json")),
			"data-economie":         upstreamtest.Want(t, ratiosRecords, ratiosQuery("552032534"), f("economie", "ratios.json")),
			"vies":                  upstreamtest.TooMany(),
		}, down},
		{"entreprise_360_partial", "fr.entreprise-360.partial", map[string]any{"q": "88087814500015"}, ganymede(e),
			map[string]string{"identite.denomination": "string", "annonces_legales_total": "number", "_partial": "boolean", "sources": "array"}},
		{"free_entreprise_360", "free.entreprise-360", map[string]any{"q": "88087814500015"}, ganymede(e),
			map[string]string{"found": "boolean", "identite.siren": "string", "identite.denomination": "string", "identite.status": "string"}},
	}
}

// A partial report is a real reduction: it calls the register and BODACC only, and the free
// trial the register only.
func TestReportVariantsCallFewerSources(t *testing.T) {
	for _, c := range []struct {
		id     string
		called map[string]bool
	}{
		{"fr.entreprise-360", map[string]bool{"recherche-entreprises": true, "bodacc": true, "ademe": true, "data-economie": true, "vies": true}},
		{"fr.entreprise-360.partial", map[string]bool{"recherche-entreprises": true, "bodacc": true}},
		{"free.entreprise-360", map[string]bool{"recherche-entreprises": true}},
	} {
		t.Run(c.id, func(t *testing.T) {
			e := setup(t, 0)
			for name, h := range ganymede(e) {
				e.serve(name, h)
			}
			if _, err := e.call(c.id, map[string]any{"q": "88087814500015"}); err != nil {
				t.Fatal(err)
			}
			for name, srv := range e.servers {
				if n := len(srv.Requests()); (n == 1) != c.called[name] || n > 1 {
					t.Errorf("%s called %d times", name, n)
				}
			}
		})
	}
}

// The register is the source a report cannot stand without: down is a 502 naming it, slow
// a 504, a company it does not know a 404; a bad identifier is a 400 before any call.
func TestReportFailures(t *testing.T) {
	for _, c := range []struct {
		name     string
		args     map[string]any
		register http.Handler
		status   int
		param    string
	}{
		{"register down", map[string]any{"siren": "552032534"}, upstreamtest.ServerError(), 502, ""},
		{"register slow", map[string]any{"siren": "552032534"}, upstreamtest.Hang(), 504, ""},
		{"unknown company", map[string]any{"siren": "552032534"}, e404(), 404, ""},
		{"siren fails Luhn", map[string]any{"siren": "552032535"}, nil, 400, "siren"},
		{"neither q nor siren", map[string]any{}, nil, 400, ""},
	} {
		for _, id := range []string{"fr.entreprise-360", "fr.entreprise-360.partial", "fr.kyb", "fr.kyb.partial", "fr.score-entreprise", "fr.score-entreprise.partial"} {
			t.Run(c.name+"/"+id, func(t *testing.T) {
				// Only the slow case needs a short upstream deadline; the others keep the
				// default, so a loaded machine does not turn a 500 into a timeout.
				var timeout time.Duration
				if c.status == 504 {
					timeout = 100 * time.Millisecond
				}
				e := setup(t, timeout)
				if c.register != nil {
					e.serve("recherche-entreprises", c.register)
				}
				_, err := e.call(id, c.args)
				ae := apierr.From(err)
				if ae.Status() != c.status || (c.param != "" && ae.Param != c.param) {
					t.Fatalf("err = %d %q %v", ae.Status(), ae.Param, err)
				}
				if c.status == 502 && ae.Upstream != "recherche-entreprises" {
					t.Errorf("502 names %q", ae.Upstream)
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

// e404 is the register's answer to an identifier it does not know: a 200 with no result.
func e404() http.Handler {
	return upstreamtest.JSON(200, `{"results": [], "total_results": 0, "page": 1, "per_page": 1, "total_pages": 0}`)
}

// Through the real server: a report is charged, a register failure is a 502 charged
// nothing, a bad SIREN a 400 that never reaches the gate, and a report with failed
// secondary sources is still a charged 200 that declares them.
func TestReportThroughTheServer(t *testing.T) {
	e := setup(t, 0)
	gate := &apitest.RecordingGate{}
	h := apitest.Start(t, e.cat, apitest.Options{CheckShapes: true, Gate: gate, Cache: &mapCache{m: map[string][]byte{}}})

	for name, hd := range ganymede(e) {
		e.serve(name, hd)
	}
	status, doc := get(t, h, "/v1/fr/entreprise-360", url.Values{"q": {"88087814500015"}})
	if status != 200 || doc["found"] != true || typeAt(doc, "sources.4.status") != "string" {
		t.Fatalf("report = %d %v", status, doc)
	}

	e.serve("recherche-entreprises", upstreamtest.ServerError())
	status, doc = get(t, h, "/v1/fr/entreprise-360", url.Values{"siren": {"552032534"}})
	if status != 502 || doc["error"].(map[string]any)["upstream"] != "recherche-entreprises" {
		t.Errorf("register down = %d %v, want 502 naming recherche-entreprises", status, doc)
	}

	before := len(gate.Charged) + len(gate.Waived)
	status, doc = get(t, h, "/v1/fr/entreprise-360", url.Values{"siren": {"552032535"}})
	if status != 400 || doc["error"].(map[string]any)["param"] != "siren" {
		t.Errorf("bad siren = %d %v, want 400 on siren", status, doc)
	}
	if after := len(gate.Charged) + len(gate.Waived); after != before {
		t.Errorf("a bad SIREN reached the gate")
	}
	charged, waived := gate.Counts()
	if charged != 1 || waived != 1 {
		t.Errorf("charged %d, waived %d; want the report charged and the 502 waived", charged, waived)
	}
}

// A company with more proceedings notices than one read returns is not reported as complete.
func TestProceduresDeclareTheirWindow(t *testing.T) {
	e := setup(t, 0)
	e.serve("bodacc", upstreamtest.Match(t,
		upstreamtest.Route{Path: bodaccRecords, Query: bodaccFamily("843701079", "collective"), H: upstreamtest.JSON(200, `{"total_count": 150, "results": []}`)},
		upstreamtest.Route{Path: bodaccRecords, Query: bodaccFamily("843701079", "radiation"), H: e.file("bodacc", "empty.json")}))
	out, err := e.call("fr.procedures-collectives", map[string]any{"siren": "843701079"})
	if err != nil {
		t.Fatal(err)
	}
	if p := out.(Procedures); p.Complet {
		t.Errorf("complet = true with 0 of 150 notices read")
	}
}

// Reports share the answers they fetch: a KYB and a score after a 360 of the same company
// call no upstream again, and say their sources came from the cache, with the time they
// were fetched.
func TestReportsShareTheCache(t *testing.T) {
	e := setupWith(t, 0, now, &mapCache{m: map[string][]byte{}})
	for name, h := range ganymede(e) {
		e.serve(name, h)
	}
	calls := func() int {
		n := 0
		for _, s := range e.servers {
			n += len(s.Requests())
		}
		return n
	}
	if _, err := e.call("fr.entreprise-360", map[string]any{"q": "88087814500015"}); err != nil {
		t.Fatal(err)
	}
	first := calls()
	if first != 5 {
		t.Fatalf("first report made %d upstream calls, want 5", first)
	}
	out, err := e.call("fr.kyb", map[string]any{"q": "88087814500015"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.call("fr.score-entreprise.partial", map[string]any{"q": "88087814500015"}); err != nil {
		t.Fatal(err)
	}
	if n := calls(); n != first {
		t.Errorf("%d more upstream calls, want none", n-first)
	}
	for _, s := range out.(KYB).Sources {
		if !s.Cached || s.FetchedAt != "2026-11-21T12:00:00Z" {
			t.Errorf("source %+v not from the cache", s)
		}
	}
	if v := out.(KYB).Verdict; v != NonConforme {
		t.Errorf("verdict from cached answers = %s", v)
	}
}

// A secondary source that does not answer in time is declared as a timeout in a 200; only
// the register's silence is a 504.
func TestSlowSourceIsDeclared(t *testing.T) {
	e := setup(t, 100*time.Millisecond)
	for name, h := range ganymede(e) {
		e.serve(name, h)
	}
	e.serve("vies", upstreamtest.Hang())
	out, err := e.call("fr.entreprise-360", map[string]any{"q": "88087814500015"})
	if err != nil {
		t.Fatal(err)
	}
	r := out.(Entreprise360)
	last := r.Sources[len(r.Sources)-1]
	if last.Source != "vies" || last.Status != SourceTimeout || r.TVA.ValideVIES != nil || r.Confidence != 0.8 {
		t.Errorf("vies source = %+v, tva = %+v, confidence %v", last, r.TVA, r.Confidence)
	}
}
