package mica_test

import (
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/routes/mica"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/esma"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/upstreamtest"
	"github.com/peage/appliance/internal/goldenfile"
	"github.com/peage/appliance/internal/obs"
)

var quiet = obs.Discard()

// now is the clock of the tests: the download date, and the day "in force" is judged on.
var now = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

// recorded expects the five register files at ESMA's paths and answers the recorded copies.
func recorded(t *testing.T, srv *upstreamtest.Server) {
	for _, f := range esma.Files {
		srv.Expect(esma.Folder+f.File, nil, upstreamtest.File(t, filepath.Join("..", "..", "upstream", "esma", "testdata", f.File)))
	}
}

type env struct {
	srv *upstreamtest.Server
	h   *apitest.Harness
}

func start(t *testing.T, gate paywall.Gate) *env {
	t.Helper()
	srv := upstreamtest.New(t)
	pool := httpc.NewPool(map[string]upstream.Spec{esma.Name: srv.Spec(t, esma.Name)}, httpc.Options{Contact: "test@example.org", Logger: quiet})
	r, err := mica.With(mica.Parts{Pool: pool, Dir: t.TempDir(), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return &env{srv: srv, h: apitest.StartFamily(t, catalog.DefaultNames(), r, apitest.Options{Gate: gate})}
}

func (e *env) get(t *testing.T, q url.Values) (int, []byte) {
	t.Helper()
	return e.h.Get(t, "/v1/eu/mica-check", q)
}

func TestCheckAgainstRecordedRegisters(t *testing.T) {
	gate := &apitest.RecordingGate{}
	e := start(t, gate)
	recorded(t, e.srv)
	tests := []struct {
		golden string
		q      url.Values
		check  func(d any) bool
	}{
		// Coinbase is the commercial name of Coinbase Luxembourg S.A.
		{"name_commercial", url.Values{"name": {"coinbase"}}, func(d any) bool {
			return apitest.At(d, "verdict") == mica.Authorised && apitest.At(d, "authorised") == true &&
				apitest.At(d, "matches", 0, "legal_name") == "Coinbase Luxembourg S.A." && apitest.At(d, "matches", 0, "home_member_state") == "LU" &&
				apitest.At(d, "matches", 0, "competent_authority") == "Commission de Surveillance du Secteur Financier (CSSF)" &&
				apitest.At(d, "matches", 0, "match") == "exact" && apitest.At(d, "as_of") == "2026-11-22T09:00:00Z"
		}},
		// Accents, case, hyphen and the legal form do not matter.
		{"name_folded", url.Values{"name": {"BADEN WURTTEMBERGISCHE wertpapierborse g.m.b.h."}}, func(d any) bool {
			return apitest.At(d, "matches", 0, "legal_name") == "Baden-Württembergische Wertpapierbörse GmbH" && apitest.At(d, "verdict") == mica.Authorised &&
				len(apitest.At(d, "matches").([]any)) == 1
		}},
		{"lei", url.Values{"lei": {"5493007WZ7IFULIL8G21"}}, func(d any) bool {
			return apitest.At(d, "matches", 0, "legal_name") == "Bitpanda GmbH" && apitest.At(d, "matches", 0, "authorised_on") == "2025-04-09" &&
				apitest.At(d, "matches", 0, "service_codes", 6) == "j" && apitest.At(d, "query", "lei") == "5493007WZ7IFULIL8G21"
		}},
		{"withdrawn", url.Values{"name": {"Stratos Europe"}}, func(d any) bool {
			return apitest.At(d, "verdict") == mica.Withdrawn && apitest.At(d, "authorised") == false &&
				apitest.At(d, "matches", 0, "authorisation_end") == "2026-04-24" && apitest.At(d, "matches", 0, "authorisation_in_force") == false
		}},
		{"warning", url.Values{"name": {"mexc"}}, func(d any) bool {
			return apitest.At(d, "verdict") == mica.Warning && apitest.At(d, "matches", 0, "register") == "non_compliant" &&
				apitest.At(d, "matches", 0, "competent_authority") == "Netherlands Authority for the Financial Markets (AFM)" &&
				apitest.At(d, "matches", 0, "decision_date") == "2025-09-16"
		}},
		// Circle is both a CASP (AMF) and an EMT issuer (ACPR): both entries are listed.
		{"emt_issuer", url.Values{"name": {"Circle Internet Financial Europe"}}, func(d any) bool {
			return apitest.At(d, "verdict") == mica.Authorised && apitest.At(d, "matches", 0, "register") == "casp" &&
				apitest.At(d, "matches", 1, "register") == "emt" && apitest.At(d, "matches", 1, "legal_name") == "Circle Internet Financial Europe SAS" &&
				len(apitest.At(d, "matches", 1, "white_papers").([]any)) == 2 && apitest.At(d, "matches", 1, "authorised_on") == "2024-07-01"
		}},
		// No exact name: every firm whose name holds the words (Kraken is a commercial name of
		// two Payward entities).
		{"name_contains", url.Values{"name": {"Kraken"}}, func(d any) bool {
			return apitest.At(d, "matches", 0, "match") == "contains" && apitest.At(d, "matches", 0, "legal_name") == "Payward Europe Solutions Limited" &&
				apitest.At(d, "matches", 1, "legal_name") == "Payward Global Solutions Limited" && len(apitest.At(d, "matches").([]any)) == 2
		}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			status, body := e.get(t, tt.q)
			if status != 200 {
				t.Fatalf("%d %s", status, body)
			}
			if !tt.check(apitest.Decode(t, body)) {
				t.Errorf("answer lacks the recorded values: %s", body)
			}
			apitest.Golden(t, tt.golden, body, goldenfile.Update())
		})
	}
	// One download of the five files served every call.
	if n := len(e.srv.Requests()); n != len(esma.Files) {
		t.Errorf("%d requests to ESMA, want %d", n, len(esma.Files))
	}
	if charged, waived := gate.Counts(); charged != len(tests) || waived != 0 {
		t.Errorf("charged %d waived %d, want %d and 0", charged, waived, len(tests))
	}
}

// TestFailuresAreNotCharged: a firm in no register is 404; ESMA's 429 and 500 with no copy
// kept are 502 naming it, no answer in time is 504; none is charged.
func TestFailuresAreNotCharged(t *testing.T) {
	tests := []struct {
		name    string
		handler func(t *testing.T, srv *upstreamtest.Server)
		q       url.Values
		status  int
	}{
		{"unknown name", recorded, url.Values{"name": {"Nowhere Crypto Holdings"}}, 404},
		{"unknown lei", recorded, url.Values{"lei": {"529900T8BM49AURSDO55"}}, 404},
		{"rate limited", func(_ *testing.T, s *upstreamtest.Server) { s.Handle(upstreamtest.TooMany()) }, url.Values{"name": {"Bitpanda"}}, 502},
		{"server error", func(_ *testing.T, s *upstreamtest.Server) { s.Handle(upstreamtest.ServerError()) }, url.Values{"name": {"Bitpanda"}}, 502},
		{"no answer", func(_ *testing.T, s *upstreamtest.Server) { s.Handle(upstreamtest.Hang()) }, url.Values{"name": {"Bitpanda"}}, 504},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			apitest.NeedsTime(t, tt.status)
			gate := &apitest.RecordingGate{}
			e := start(t, gate)
			tt.handler(t, e.srv)
			status, body := e.get(t, tt.q)
			if status != tt.status {
				t.Fatalf("= %d %s, want %d", status, body, tt.status)
			}
			if tt.status >= 502 {
				if up := apitest.At(apitest.Decode(t, body), "error", "upstream"); up != esma.Name {
					t.Errorf("error names %v, want %s", up, esma.Name)
				}
			}
			gate.WantNotCharged(t, 1)
		})
	}
}

// TestBadInputBeforePayment: a LEI with wrong check digits, a malformed one, no firm at all
// or a name too short is a 400 naming the parameter before any 402, and ESMA is not called.
func TestBadInputBeforePayment(t *testing.T) {
	e := start(t, nil)
	if status, body := e.get(t, url.Values{"lei": {"5493007WZ7IFULIL8G21"}}); status != 402 {
		t.Fatalf("valid call = %d %s, want 402", status, body)
	}
	for _, tt := range []struct {
		q     url.Values
		param string
	}{
		{url.Values{"lei": {"5493007WZ7IFULIL8G22"}}, "lei"},
		{url.Values{"lei": {"5493007WZ7IFULIL8G2"}}, "lei"},
		{url.Values{"name": {"a"}}, "name"},
	} {
		status, body := e.get(t, tt.q)
		param := apitest.At(apitest.Decode(t, body), "error", "param")
		if status != 400 || (param != tt.param && !(tt.param == "name" && param == "lei")) {
			t.Errorf("?%s = %d %s, want 400 naming %s", tt.q.Encode(), status, body, tt.param)
		}
	}
	if n := len(e.srv.Requests()); n != 0 {
		t.Errorf("%d requests reached ESMA", n)
	}
}

func TestNormalize(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"Bitpanda GmbH", "bitpanda"},
		{"Coinbase Luxembourg S.A.", "coinbase luxembourg"},
		{"Decubate B.V.", "decubate"},
		{"Biogena GmbH & Co KG", "biogena"},
		{"INCREMENTUM družba za izvajanje storitev v zvezi s kriptosredstvi d.o.o.", "incrementum druzba za izvajanje storitev v zvezi s kriptosredstvi"},
		{"Circle Internet Financial Europe SAS", "circle internet financial europe"},
		{"EUWAX AG", "euwax"},
		{"Payward Global Solutions Limited", "payward global solutions"},
		{"Sp. z o.o.", "sp z oo"}, // a name that is only a legal form keeps it
		{"Kraken Digital Asset Exchange (“Kraken”)", "kraken digital asset exchange kraken"},
	} {
		if got := mica.Normalize(tt.in); got != tt.want {
			t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestStaleCopyIsSaid: two days later, ESMA failing, the copy of the first download still
// answers, with its date and stale set, and is charged as a real answer.
func TestStaleCopyIsSaid(t *testing.T) {
	srv := upstreamtest.New(t)
	recorded(t, srv)
	clock := now
	pool := httpc.NewPool(map[string]upstream.Spec{esma.Name: srv.Spec(t, esma.Name)}, httpc.Options{Contact: "test@example.org", Logger: quiet})
	r, err := mica.With(mica.Parts{Pool: pool, Dir: t.TempDir(), Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	gate := &apitest.RecordingGate{}
	e := &env{srv: srv, h: apitest.StartFamily(t, catalog.DefaultNames(), r, apitest.Options{Gate: gate})}
	if status, body := e.get(t, url.Values{"name": {"Bitpanda"}}); status != 200 || apitest.At(apitest.Decode(t, body), "stale") != false {
		t.Fatalf("fresh: %d %s", status, body)
	}
	srv.Reset()
	srv.Handle(upstreamtest.ServerError())
	clock = now.Add(48 * time.Hour)
	status, body := e.get(t, url.Values{"name": {"Bitpanda"}})
	d := apitest.Decode(t, body)
	if status != 200 || apitest.At(d, "stale") != true || apitest.At(d, "as_of") != "2026-11-22T09:00:00Z" || apitest.At(d, "matches", 1, "legal_name") != "Bitpanda GmbH" {
		t.Fatalf("stale: %d %s", status, body)
	}
	if charged, _ := gate.Counts(); charged != 2 {
		t.Errorf("charged %d, want 2", charged)
	}
}
