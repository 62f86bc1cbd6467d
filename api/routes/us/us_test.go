package us_test

import (
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/routes/us"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/secedgar"
	"github.com/peage/appliance/api/upstream/upstreamtest"
	"github.com/peage/appliance/internal/goldenfile"
	"github.com/peage/appliance/internal/obs"
)

var quiet = obs.Discard()

const contact = "test@example.org"

func fixture(t *testing.T, name string) http.Handler {
	return upstreamtest.File(t, filepath.Join("..", "..", "upstream", "secedgar", "testdata", name))
}

// expectRecorded sets the requests a fixture server accepts, each on its exact path with no
// query, and their recorded answers (upstreamtest.Expect: any other request fails the test).
// Each answers 403 to a User-Agent without the contact, as SEC does.
func expectRecorded(t *testing.T, srv *upstreamtest.Server, answers map[string]http.Handler) {
	for path, h := range answers {
		srv.Expect(path, nil, withContact(h))
	}
}

func withContact(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.UserAgent(), contact) {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

type env struct {
	data, files *upstreamtest.Server
	h           *apitest.Harness
}

// start binds the family to the real catalog behind the real server, both SEC hosts being
// fixture servers; who is the contact put into the User-Agent. attempt, when set, replaces
// the fixture specs' short per-attempt timeout: the 4 MB company facts must not time out on
// a loaded machine in the tests that expect them to arrive.
func start(t *testing.T, who string, gate paywall.Gate, attempt time.Duration) *env {
	t.Helper()
	e := &env{data: upstreamtest.New(t), files: upstreamtest.New(t)}
	// data.sec.gov's recorded 404 answers the CIK no company has (TestUnknownCompanies).
	notFound := upstreamtest.FileStatus(t, filepath.Join("..", "..", "upstream", "secedgar", "testdata", "submissions_not_found.xml"), http.StatusNotFound)
	expectRecorded(t, e.data, map[string]http.Handler{
		"/submissions/CIK0000320193.json":           fixture(t, "submissions_CIK0000320193.json"),
		"/submissions/CIK0001045810.json":           fixture(t, "submissions_CIK0001045810.json"),
		"/api/xbrl/companyfacts/CIK0000320193.json": fixture(t, "companyfacts_CIK0000320193.json.gz"),
		"/api/xbrl/companyfacts/CIK0001045810.json": fixture(t, "companyfacts_CIK0001045810.json.gz"),
		"/submissions/CIK0000000001.json":           notFound,
		"/api/xbrl/companyfacts/CIK0000000001.json": notFound,
	})
	expectRecorded(t, e.files, map[string]http.Handler{"/files/company_tickers.json": fixture(t, "company_tickers.json.gz")})
	specs := map[string]upstream.Spec{secedgar.Name: e.data.Spec(t, secedgar.Name), secedgar.FilesName: e.files.Spec(t, secedgar.FilesName)}
	if attempt > 0 {
		for name, s := range specs {
			s.Timeout = attempt
			specs[name] = s
		}
	}
	pool := httpc.NewPool(specs, httpc.Options{Contact: who, Logger: quiet})
	r, err := us.With(us.Parts{Pool: pool})
	if err != nil {
		t.Fatal(err)
	}
	e.h = apitest.StartFamily(t, catalog.DefaultNames(), r, apitest.Options{Gate: gate})
	return e
}

func (e *env) get(t *testing.T, path string, q url.Values) (int, any, []byte) {
	t.Helper()
	st, b := e.h.Get(t, path, q)
	return st, apitest.Decode(t, b), b
}

// TestRoutesAgainstRecordedAnswers checks each route on Apple and NVIDIA. The financial
// figures are those of their latest 10-K, in millions of dollars: Apple's fiscal 2025 10-K
// (filed 2025-10-31) reports net sales of 416,161 and 391,035, net income of 112,010 and
// 93,736, and shareholders' equity of 73,733 and 56,950 at the two year ends; NVIDIA's
// fiscal 2026 10-K (filed 2026-02-25) revenue of 215,938 and 130,497, net income of 120,067
// and 72,880, and shareholders' equity of 157,293 and 79,327.
func TestRoutesAgainstRecordedAnswers(t *testing.T) {
	gate := &apitest.RecordingGate{}
	e := start(t, contact, gate, time.Minute)
	tests := []struct {
		golden, path string
		q            url.Values
		check        func(d any) bool
	}{
		{"company_ticker", "/v1/us/company", url.Values{"ticker": {"aapl"}}, func(d any) bool {
			return apitest.At(d, "cik") == "0000320193" && apitest.At(d, "name") == "Apple Inc." && apitest.At(d, "exchanges", 0) == "Nasdaq" &&
				apitest.At(d, "tickers", 0) == "AAPL" && apitest.At(d, "sic") == "3571" && apitest.At(d, "state_of_incorporation") == "CA" &&
				apitest.At(d, "fiscal_year_end") == "0926" && apitest.At(d, "latest_filing", "document_url") != nil &&
				apitest.At(d, "latest_annual_report", "document_url") == "https://www.sec.gov/Archives/edgar/data/320193/000032019325000079/aapl-20250927.htm"
		}},
		{"company_cik", "/v1/us/company", url.Values{"cik": {"1045810"}}, func(d any) bool {
			return apitest.At(d, "name") == "NVIDIA CORP" && apitest.At(d, "fiscal_year_end") == "0131" && apitest.At(d, "state_of_incorporation") == "DE"
		}},
		{"filings_10k", "/v1/us/filings", url.Values{"ticker": {"NVDA"}, "type": {"10-k"}}, func(d any) bool {
			return apitest.At(d, "total") == 7.0 && apitest.At(d, "filings", 0, "form") == "10-K" && apitest.At(d, "filings", 0, "filed") == "2026-02-25" &&
				apitest.At(d, "filings", 0, "document_url") == "https://www.sec.gov/Archives/edgar/data/1045810/000104581026000021/nvda-20260125.htm"
		}},
		{"financials_apple", "/v1/us/financials", url.Values{"ticker": {"AAPL"}}, func(d any) bool {
			return apitest.At(d, "concepts", "revenue") == "RevenueFromContractWithCustomerExcludingAssessedTax" &&
				apitest.At(d, "revenue", 0, "value") == 416161e6 && apitest.At(d, "revenue", 1, "value") == 391035e6 && apitest.At(d, "revenue", 2, "value") == 383285e6 &&
				apitest.At(d, "net_income", 0, "value") == 112010e6 && apitest.At(d, "equity", 0, "value") == 73733e6 && apitest.At(d, "cash", 0, "value") == 35934e6 &&
				apitest.At(d, "assets", 0, "value") == 359241e6 && apitest.At(d, "liabilities", 0, "value") == 285508e6 && apitest.At(d, "method") != ""
		}},
		{"financials_nvidia", "/v1/us/financials", url.Values{"cik": {"0001045810"}}, func(d any) bool {
			return apitest.At(d, "concepts", "revenue") == "Revenues" && apitest.At(d, "ticker") == "NVDA" &&
				apitest.At(d, "revenue", 0, "value") == 215938e6 && apitest.At(d, "revenue", 1, "value") == 130497e6 && apitest.At(d, "revenue", 2, "value") == 60922e6 &&
				apitest.At(d, "net_income", 0, "value") == 120067e6 && apitest.At(d, "net_income", 0, "end") == "2026-01-25"
		}},
		// Apple: growth (416,161 - 391,035) / 391,035 = 6.43 %, margin 112,010 / 416,161 = 26.92 %,
		// ROE 112,010 / ((73,733 + 56,950) / 2) = 171.42 %.
		{"snapshot_apple", "/v1/us/snapshot", url.Values{"ticker": {"AAPL"}}, func(d any) bool {
			return apitest.At(d, "revenue_growth_pct") == 6.43 && apitest.At(d, "net_margin_pct") == 26.92 && apitest.At(d, "roe_pct") == 171.42 &&
				apitest.At(d, "roe_basis") == "average equity" && apitest.At(d, "revenue") == 416161e6 && apitest.At(d, "net_income") == 112010e6
		}},
		// NVIDIA: growth (215,938 - 130,497) / 130,497 = 65.47 %, margin 120,067 / 215,938 = 55.60 %,
		// ROE 120,067 / ((157,293 + 79,327) / 2) = 101.49 %.
		{"snapshot_nvidia", "/v1/us/snapshot", url.Values{"ticker": {"NVDA"}}, func(d any) bool {
			return apitest.At(d, "revenue_growth_pct") == 65.47 && apitest.At(d, "net_margin_pct") == 55.6 && apitest.At(d, "roe_pct") == 101.49
		}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			status, doc, body := e.get(t, tt.path, tt.q)
			if status != 200 {
				t.Fatalf("%d %s", status, body)
			}
			if !tt.check(doc) {
				t.Errorf("answer lacks the recorded values: %s", body)
			}
			apitest.Golden(t, tt.golden, doc, goldenfile.Update())
		})
	}
	if charged, waived := gate.Counts(); charged != len(tests) || waived != 0 {
		t.Errorf("charged %d waived %d, want %d and 0", charged, waived, len(tests))
	}
	if n := len(e.files.Requests()); n != 1 {
		t.Errorf("ticker file fetched %d times, want once (cached)", n)
	}
	for _, r := range append(e.data.Requests(), e.files.Requests()...) {
		if !strings.Contains(r.UserAgent(), contact) {
			t.Errorf("%s sent without the contact in its User-Agent: %q", r.URL.Path, r.UserAgent())
		}
	}
}

// TestUnknownCompanies: a ticker SEC does not list and a CIK EDGAR does not know are 404,
// not charged.
func TestUnknownCompanies(t *testing.T) {
	gate := &apitest.RecordingGate{}
	e := start(t, contact, gate, time.Minute)
	for _, path := range []string{"/v1/us/company", "/v1/us/filings", "/v1/us/financials", "/v1/us/snapshot"} {
		for _, q := range []url.Values{{"ticker": {"ZZZZZQ"}}, {"cik": {"1"}}} {
			if status, _, body := e.get(t, path, q); status != 404 {
				t.Errorf("%s?%s = %d %s, want 404", path, q.Encode(), status, body)
			}
		}
	}
	if charged, waived := gate.Counts(); charged != 0 || waived != 8 {
		t.Errorf("charged %d waived %d, want 0 and 8", charged, waived)
	}
}

// TestFailuresAreNotCharged: SEC's 429 and 500 are 502 naming it, no answer in time is 504.
// The failing answers are statuses alone: no recorded body of these is kept.
func TestFailuresAreNotCharged(t *testing.T) {
	for _, tt := range apitest.UpstreamFailures() {
		t.Run(tt.Name, func(t *testing.T) {
			tt.NeedsTime(t)
			gate := &apitest.RecordingGate{}
			e := start(t, contact, gate, 0)
			e.files.Handle(tt.Handler)
			status, _, body := e.get(t, "/v1/us/company", url.Values{"ticker": {"AAPL"}})
			apitest.WantUpstreamError(t, status, body, tt.Status, secedgar.FilesName)
			// A call by CIK does without the ticker file; it fails on data.sec.gov alone.
			e.data.Handle(tt.Handler)
			for _, path := range []string{"/v1/us/company", "/v1/us/filings", "/v1/us/financials", "/v1/us/snapshot"} {
				status, _, body := e.get(t, path, url.Values{"cik": {"320193"}})
				apitest.WantUpstreamError(t, status, body, tt.Status, secedgar.Name)
			}
			gate.WantNotCharged(t, 5)
		})
	}
}

// TestBadInputBeforePayment: with production's challenge-only gate, a valid call is asked to
// pay, a bad ticker or CIK is a 400 naming it, and without a contact e-mail every route is
// 503; none of them reaches SEC.
func TestBadInputBeforePayment(t *testing.T) {
	e := start(t, contact, nil, 0)
	if status, _, body := e.get(t, "/v1/us/company", url.Values{"ticker": {"AAPL"}}); status != 402 {
		t.Fatalf("valid call = %d %s, want 402", status, body)
	}
	for _, q := range []url.Values{{"ticker": {"AAPL;DROP"}}, {"ticker": {"1ABC"}}, {"cik": {"CIK320193"}}, {"cik": {"12345678901"}}} {
		for _, path := range []string{"/v1/us/company", "/v1/us/filings", "/v1/us/financials", "/v1/us/snapshot"} {
			status, doc, body := e.get(t, path, q)
			if p := apitest.At(doc, "error", "param"); status != 400 || (p != "ticker" && p != "cik") {
				t.Errorf("%s?%s = %d %s, want 400 naming ticker or cik", path, q.Encode(), status, body)
			}
		}
	}
	anonymous := start(t, "https://github.com/peage/appliance", nil, 0)
	for _, path := range []string{"/v1/us/company", "/v1/us/filings", "/v1/us/financials", "/v1/us/snapshot"} {
		if status, _, body := anonymous.get(t, path, url.Values{"ticker": {"AAPL"}}); status != 503 {
			t.Errorf("%s without a contact = %d %s, want 503", path, status, body)
		}
	}
	if n := len(e.data.Requests()) + len(e.files.Requests()) + len(anonymous.data.Requests()) + len(anonymous.files.Requests()); n != 0 {
		t.Errorf("%d requests reached SEC", n)
	}
}
