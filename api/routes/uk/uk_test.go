package uk_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/routes/uk"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/companieshouse"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/upstreamtest"
	"github.com/peage/appliance/internal/goldenfile"
	"github.com/peage/appliance/internal/obs"
)

var quiet = obs.Discard()

// expectRecorded sets the requests the routes may send (path and exact query) and their
// recorded answers from the connector's testdata; any other request fails the test
// (upstreamtest.Expect). A request without the key is refused 401, as the registrar does.
func expectRecorded(t *testing.T, srv *upstreamtest.Server) {
	page := upstreamtest.Query("items_per_page", "100", "start_index", "0")
	for _, r := range []struct {
		path  string
		query url.Values
		file  string
	}{
		{"/company/00445790", nil, "profile_00445790.json"},
		{"/company/FC040879", nil, "profile_FC040879.json"},
		{"/company/00445790/officers", page, "officers_00445790.json"},
		{"/company/00445790/exemptions", nil, "exemptions_00445790.json"},
		{"/company/03977902/persons-with-significant-control", page, "psc_03977902.json"},
		{"/search/companies", upstreamtest.Query("q", "ABSA UK PERMANENT ESTABLISHMENT", "items_per_page", "5", "start_index", "0"), "search_FC040879.json"},
	} {
		srv.Expect(r.path, r.query, withKey(upstreamtest.File(t, filepath.Join("..", "..", "upstream", "companieshouse", "testdata", r.file))))
	}
}

// withKey answers 401 to a request without the test key as HTTP Basic user, h otherwise.
func withKey(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if user, _, ok := r.BasicAuth(); !ok || user != "test-key" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

type env struct {
	srv *upstreamtest.Server
	h   *apitest.Harness
}

// start binds the family to the real catalog behind the real server, Companies House being
// the fixture server. key "" leaves the key unset; gate nil is production's challenge-only gate.
func start(t *testing.T, key string, gate paywall.Gate) *env {
	t.Helper()
	srv := upstreamtest.New(t)
	expectRecorded(t, srv)
	spec := srv.Spec(t, companieshouse.Name)
	spec.Key = key
	pool := httpc.NewPool(map[string]upstream.Spec{companieshouse.Name: spec}, httpc.Options{Contact: "test@example.org", Logger: quiet})
	r, err := uk.With(uk.Parts{Pool: pool})
	if err != nil {
		t.Fatal(err)
	}
	return &env{srv: srv, h: apitest.StartFamily(t, catalog.DefaultNames(), r, apitest.Options{Gate: gate})}
}

func (e *env) get(t *testing.T, path string, q url.Values) (int, []byte) {
	t.Helper()
	return e.h.Get(t, path, q)
}

func TestRoutesAgainstRecordedAnswers(t *testing.T) {
	gate := &apitest.RecordingGate{}
	e := start(t, "test-key", gate)
	tests := []struct {
		golden, path string
		q            url.Values
		calls        []string // the upstream paths, in order
		check        func(doc any) bool
	}{
		{"company_number", "/v1/uk/company", url.Values{"number": {"00445790"}}, []string{"/company/00445790"},
			func(d any) bool {
				return apitest.At(d, "name") == "TESCO PLC" && apitest.At(d, "status") == "active" && apitest.At(d, "incorporation") == "1947-11-27" &&
					apitest.At(d, "sic_codes", 0) == "47110" && apitest.At(d, "registered_office", "postal_code") == "AL7 1GA" &&
					apitest.At(d, "accounts", "next_due") == "2026-08-26" && apitest.At(d, "confirmation_statement", "next_due") == "2027-07-02"
			}},
		{"company_name", "/v1/uk/company", url.Values{"q": {"ABSA UK PERMANENT ESTABLISHMENT"}}, []string{"/search/companies", "/company/FC040879"},
			func(d any) bool {
				return apitest.At(d, "company_number") == "FC040879" && apitest.At(d, "type") == "oversea-company" && apitest.At(d, "matches", 0, "company_number") == "FC040879"
			}},
		{"company_lowercase_number", "/v1/uk/company", url.Values{"number": {"fc040879"}}, []string{"/company/FC040879"},
			func(d any) bool { return apitest.At(d, "name") == "ABSA UK PERMANENT ESTABLISHMENT" }},
		{"officers", "/v1/uk/officers", url.Values{"number": {"00445790"}}, []string{"/company/00445790/officers"},
			func(d any) bool {
				return apitest.At(d, "total") == 74.0 && apitest.At(d, "active_count") == 11.0 && apitest.At(d, "listed") == 2.0 &&
					apitest.At(d, "officers", 1, "name") == "BETHELL, Melissa" && apitest.At(d, "officers", 1, "role") == "director" &&
					apitest.At(d, "officers", 1, "appointment") == "2018-09-24" && apitest.At(d, "officers", 1, "nationality") == "British" &&
					apitest.At(d, "officers", 1, "birth") == "1974-09"
			}},
		{"psc", "/v1/uk/psc", url.Values{"number": {"03977902"}}, []string{"/company/03977902/persons-with-significant-control"},
			func(d any) bool {
				return apitest.At(d, "total") == 1.0 && apitest.At(d, "controllers", 0, "name") == "Alphabet, Inc." &&
					apitest.At(d, "controllers", 0, "nature_of_control", 2) == "right-to-appoint-and-remove-directors" && apitest.At(d, "controllers", 0, "active") == true
			}},
		// Tesco's profile links no PSC register but an exemption: listed on a regulated market.
		{"company_check", "/v1/uk/company-check", url.Values{"number": {"00445790"}},
			[]string{"/company/00445790", "/company/00445790/exemptions", "/company/00445790/officers"},
			func(d any) bool {
				return apitest.At(d, "verdict") == "PASS" && len(apitest.At(d, "rules_fired").([]any)) == 0 && apitest.At(d, "active_officers") == 11.0 &&
					apitest.At(d, "psc", "exemption") == "psc-exempt-as-trading-on-uk-regulated-market" &&
					apitest.At(d, "filing_compliance", "accounts_overdue") == false && apitest.At(d, "insolvency_history") == false && apitest.At(d, "method") != ""
			}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			before := len(e.srv.Requests())
			status, body := e.get(t, tt.path, tt.q)
			if status != 200 {
				t.Fatalf("%d %s", status, body)
			}
			var doc any
			if err := json.Unmarshal(body, &doc); err != nil {
				t.Fatal(err)
			}
			if !tt.check(doc) {
				t.Errorf("answer lacks the recorded values: %s", body)
			}
			var got []string
			for _, r := range e.srv.Requests()[before:] {
				got = append(got, r.URL.Path)
			}
			if !sameSet(got, tt.calls) {
				t.Errorf("upstream calls %v, want %v", got, tt.calls)
			}
			apitest.Golden(t, tt.golden, body, goldenfile.Update())
		})
	}
	if charged, waived := gate.Counts(); charged != len(tests) || waived != 0 {
		t.Errorf("charged %d waived %d, want %d and 0", charged, waived, len(tests))
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		seen[s]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}

// TestFailuresAreNotCharged: an unknown number is 404, the registrar's 429 and 500 are 502
// naming it, no answer in time is 504; none is charged. The failing answers are statuses
// alone: no recorded body of these is kept (testdata/PROVENANCE).
func TestFailuresAreNotCharged(t *testing.T) {
	tests := append([]apitest.UpstreamFailure{{Name: "unknown number", Handler: http.NotFoundHandler(), Status: 404}},
		apitest.UpstreamFailures()...)
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			tt.NeedsTime(t)
			gate := &apitest.RecordingGate{}
			e := start(t, "test-key", gate)
			e.srv.Handle(tt.Handler)
			for _, path := range []string{"/v1/uk/company", "/v1/uk/officers", "/v1/uk/psc", "/v1/uk/company-check"} {
				status, body := e.get(t, path, url.Values{"number": {"99999999"}})
				apitest.WantUpstreamError(t, status, body, tt.Status, companieshouse.Name)
			}
			gate.WantNotCharged(t, 4)
		})
	}
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return v
}

// TestBadInputBeforePayment: with production's challenge-only gate a valid call is asked to
// pay (402), a bad company number is a 400 naming the parameter, and a missing key makes
// every route 503; neither reaches the registrar.
func TestBadInputBeforePayment(t *testing.T) {
	e := start(t, "test-key", nil)
	if status, body := e.get(t, "/v1/uk/company", url.Values{"number": {"00445790"}}); status != 402 {
		t.Fatalf("valid call = %d %s, want 402", status, body)
	}
	for _, q := range []url.Values{{"number": {"445790"}}, {"number": {"0044579X"}}, {"q": {"a"}}} {
		for _, path := range []string{"/v1/uk/company", "/v1/uk/officers", "/v1/uk/psc", "/v1/uk/company-check"} {
			status, body := e.get(t, path, q)
			param := apitest.At(decode(t, body), "error", "param")
			if status != 400 || (param != "number" && param != "q") {
				t.Errorf("%s?%s = %d %s, want 400 naming number or q", path, q.Encode(), status, body)
			}
		}
	}
	noKey := start(t, "", nil)
	for _, path := range []string{"/v1/uk/company", "/v1/uk/officers", "/v1/uk/psc", "/v1/uk/company-check"} {
		if status, body := noKey.get(t, path, url.Values{"number": {"00445790"}}); status != 503 {
			t.Errorf("%s without a key = %d %s, want 503", path, status, body)
		}
	}
	if n := len(e.srv.Requests()) + len(noKey.srv.Requests()); n != 0 {
		t.Errorf("%d requests reached the registrar", n)
	}
}

// TestVerdictRules runs each stated rule alone on otherwise clean facts.
func TestVerdictRules(t *testing.T) {
	clean := uk.Facts{Status: "active", ActiveOfficers: 2, ActivePSCs: 1}
	tests := []struct {
		name    string
		change  func(*uk.Facts)
		verdict string
		rules   []string
	}{
		{"clean", func(*uk.Facts) {}, uk.Pass, nil},
		{"dissolved", func(f *uk.Facts) { f.Status = "dissolved" }, uk.Fail, []string{"status_not_active"}},
		{"liquidation", func(f *uk.Facts) { f.Status = "liquidation"; f.BeenLiquidated = true }, uk.Fail, []string{"status_not_active", "insolvency_history"}},
		{"unusual status", func(f *uk.Facts) { f.Status = "something-new" }, uk.Caution, []string{"status_unusual"}},
		{"accounts overdue", func(f *uk.Facts) { f.AccountsOverdue = true }, uk.Caution, []string{"accounts_overdue"}},
		{"confirmation overdue", func(f *uk.Facts) { f.ConfirmationOverdue = true }, uk.Caution, []string{"confirmation_statement_overdue"}},
		{"insolvency history", func(f *uk.Facts) { f.InsolvencyHistory = true }, uk.Caution, []string{"insolvency_history"}},
		{"no officer", func(f *uk.Facts) { f.ActiveOfficers = 0 }, uk.Caution, []string{"no_active_officers"}},
		{"no psc", func(f *uk.Facts) { f.ActivePSCs = 0 }, uk.Caution, []string{"no_psc_declared"}},
		{"psc statement", func(f *uk.Facts) { f.ActivePSCs, f.ActivePSCStatements = 0, 1 }, uk.Pass, nil},
		{"psc exemption", func(f *uk.Facts) { f.ActivePSCs, f.PSCExemption = 0, "psc-exempt-as-trading-on-uk-regulated-market" }, uk.Pass, nil},
		{"office in dispute", func(f *uk.Facts) { f.OfficeInDispute = true }, uk.Caution, []string{"registered_office_issue"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := clean
			tt.change(&f)
			verdict, fired := uk.Verdict(f)
			var ids []string
			for _, r := range fired {
				ids = append(ids, r.Rule)
				if r.Evidence == "" {
					t.Errorf("%s fired without evidence", r.Rule)
				}
			}
			if verdict != tt.verdict || !sameSet(ids, tt.rules) {
				t.Errorf("verdict %s %v, want %s %v", verdict, ids, tt.verdict, tt.rules)
			}
		})
	}
}
