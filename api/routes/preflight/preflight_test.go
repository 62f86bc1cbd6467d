package preflight_test

import (
	"net/http"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/routes/preflight"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/actormarket"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/upstreamtest"
	"github.com/peage/appliance/internal/goldenfile"
	"github.com/peage/appliance/internal/obs"
)

var quiet = obs.Discard()

// now is the day of the tests, a week after the Reddit Scraper Pro record was taken.
var now = time.Date(2026, 10, 7, 12, 0, 0, 0, time.UTC)

func fixture(t *testing.T, name string) http.Handler {
	return upstreamtest.File(t, filepath.Join("..", "..", "upstream", "actormarket", "testdata", name))
}

func recorded(t *testing.T, srv *upstreamtest.Server) {
	srv.Expect("/v2/acts/coding-doctor-omar~reddit-scraper-pro", nil, fixture(t, "act_coding-doctor-omar~reddit-scraper-pro.json"))
	srv.Expect("/v2/acts/jane35~instagram-scraper", nil, fixture(t, "act_jane35~instagram-scraper.json"))
	srv.Expect("/v2/acts/nobody~nothing", nil, upstreamtest.FileStatus(t, filepath.Join("..", "..", "upstream", "actormarket", "testdata", "not_found.json"), 404))
}

type env struct {
	srv *upstreamtest.Server
	h   *apitest.Harness
}

// start serves the route under a renamed segment, as an operator's [routes] would.
func start(t *testing.T, gate paywall.Gate) *env {
	t.Helper()
	srv := upstreamtest.New(t)
	pool := httpc.NewPool(map[string]upstream.Spec{actormarket.Name: srv.Spec(t, actormarket.Name)}, httpc.Options{Contact: "test@example.org", Logger: quiet})
	names := catalog.DefaultNames()
	names.ActorMarketplace = "actor-store"
	r, err := preflight.With(preflight.Parts{Pool: pool, Names: names, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return &env{srv: srv, h: apitest.StartFamily(t, names, r, apitest.Options{Gate: gate})}
}

func (e *env) get(t *testing.T, actor string) (int, []byte) {
	t.Helper()
	return e.h.Get(t, "/v1/actor-store/preflight", url.Values{"actor": {actor}})
}

func TestPreflightAgainstRecordedAnswers(t *testing.T) {
	gate := &apitest.RecordingGate{}
	e := start(t, gate)
	recorded(t, e.srv)
	tests := []struct {
		golden, actor string
		check         func(d any) bool
	}{
		// 659 of 690 runs succeeded (95.5 %), last run a week before, 31 users: OK.
		{"public_actor", "coding-doctor-omar/reddit-scraper-pro", func(d any) bool {
			return apitest.At(d, "verdict") == preflight.OK && apitest.At(d, "score") == 100.0 && len(apitest.At(d, "alerts").([]any)) == 0 &&
				apitest.At(d, "evidence", "runs_30d", "total") == 690.0 && apitest.At(d, "evidence", "runs_30d", "succeeded") == 659.0 &&
				apitest.At(d, "evidence", "runs_30d", "success_rate") == 0.9551 && apitest.At(d, "evidence", "last_run_days_ago") == 7.0 &&
				apitest.At(d, "evidence", "deprecated") == false && apitest.At(d, "pricing", "model") == "NONE" && apitest.At(d, "id") == "mw5JvRF7kSxjfNqdu"
		}},
		// The documentation's example: a private actor, no public statistics, last run in 2019.
		{"private_actor", "jane35/instagram-scraper", func(d any) bool {
			return apitest.At(d, "verdict") == preflight.Avoid && apitest.At(d, "evidence", "runs_30d") == nil &&
				apitest.At(d, "alerts", 0, "rule") == "abandoned" && apitest.At(d, "alerts", 1, "rule") == "too_few_runs" &&
				apitest.At(d, "evidence", "public") == false && apitest.At(d, "evidence", "latest_build") == "0.0.2"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			status, body := e.get(t, tt.actor)
			if status != 200 {
				t.Fatalf("%d %s", status, body)
			}
			if !tt.check(apitest.Decode(t, body)) {
				t.Errorf("answer lacks the recorded values: %s", body)
			}
			apitest.Golden(t, tt.golden, body, goldenfile.Update())
		})
	}
	if charged, waived := gate.Counts(); charged != len(tests) || waived != 0 {
		t.Errorf("charged %d waived %d, want %d and 0", charged, waived, len(tests))
	}
}

// TestFailuresAreNotCharged: an unknown actor is 404 (the API's recorded not-found body), the
// API's 429 and 500 are 502 naming it, no answer in time is 504; none is charged.
func TestFailuresAreNotCharged(t *testing.T) {
	tooMany := upstreamtest.FileStatus(t, filepath.Join("..", "..", "upstream", "actormarket", "testdata", "too_many_requests.json"), 429)
	tests := []struct {
		name    string
		handler http.Handler
		status  int
	}{
		{"unknown actor", nil, 404},
		{"rate limited", tooMany, 502},
		{"server error", upstreamtest.ServerError(), 502},
		{"no answer", upstreamtest.Hang(), 504},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			apitest.NeedsTime(t, tt.status)
			gate := &apitest.RecordingGate{}
			e := start(t, gate)
			if tt.handler == nil {
				recorded(t, e.srv)
			} else {
				e.srv.Handle(tt.handler)
			}
			status, body := e.get(t, "nobody/nothing")
			if status != tt.status {
				t.Fatalf("= %d %s, want %d", status, body, tt.status)
			}
			if tt.status >= 502 {
				if up := apitest.At(apitest.Decode(t, body), "error", "upstream"); up != actormarket.Name {
					t.Errorf("error names %v, want %s", up, actormarket.Name)
				}
			}
			gate.WantNotCharged(t, 1)
		})
	}
}

// TestBadInputBeforePayment: an actor that is not owner/name is a 400 naming actor before any
// 402, and the API is not called.
func TestBadInputBeforePayment(t *testing.T) {
	e := start(t, nil)
	if status, body := e.get(t, "apify/web-scraper"); status != 402 {
		t.Fatalf("valid call = %d %s, want 402", status, body)
	}
	for _, actor := range []string{"web-scraper", "apify/web/scraper", "apify/", "", "apify/web scraper"} {
		status, body := e.get(t, actor)
		if status != 400 || apitest.At(apitest.Decode(t, body), "error", "param") != "actor" {
			t.Errorf("actor %q = %d %s, want 400 naming actor", actor, status, body)
		}
	}
	if n := len(e.srv.Requests()); n != 0 {
		t.Errorf("%d requests reached the API", n)
	}
}

// TestVerdictRules runs each stated rule alone on otherwise clean facts.
func TestVerdictRules(t *testing.T) {
	clean := preflight.Facts{Public: true, Notice: "NONE", RunsTotal: 1000, RunsSucceeded: 990, LastRunDaysAgo: 0, BuildDaysAgo: 10,
		Users30Days: 100, PricingModel: "PAY_PER_EVENT"}
	tests := []struct {
		name    string
		change  func(*preflight.Facts)
		verdict string
		score   int
		rules   []string
	}{
		{"clean", func(*preflight.Facts) {}, preflight.OK, 100, nil},
		{"deprecated", func(f *preflight.Facts) { f.Deprecated = true }, preflight.Avoid, 60, []string{"deprecated"}},
		{"low success", func(f *preflight.Facts) { f.RunsSucceeded = 700 }, preflight.Avoid, 60, []string{"low_success_rate"}},
		{"middling success", func(f *preflight.Facts) { f.RunsSucceeded = 900 }, preflight.Caution, 85, []string{"success_rate_below_95"}},
		{"few runs", func(f *preflight.Facts) { f.RunsTotal, f.RunsSucceeded = 10, 2 }, preflight.Caution, 85, []string{"too_few_runs"}},
		{"no stats", func(f *preflight.Facts) { f.RunsTotal, f.RunsSucceeded = -1, 0 }, preflight.Caution, 85, []string{"too_few_runs"}},
		{"not recently run", func(f *preflight.Facts) { f.LastRunDaysAgo = 45 }, preflight.Caution, 85, []string{"not_recently_run"}},
		{"abandoned", func(f *preflight.Facts) { f.LastRunDaysAgo = 200 }, preflight.Avoid, 60, []string{"abandoned"}},
		{"never run", func(f *preflight.Facts) { f.LastRunDaysAgo = -1 }, preflight.Avoid, 60, []string{"abandoned"}},
		{"old build", func(f *preflight.Facts) { f.BuildDaysAgo = 400 }, preflight.Caution, 85, []string{"old_build"}},
		{"few users", func(f *preflight.Facts) { f.Users30Days = 2 }, preflight.Caution, 85, []string{"few_users"}},
		{"maintenance", func(f *preflight.Facts) { f.Notice = "UNDER_MAINTENANCE" }, preflight.Caution, 85, []string{"notice"}},
		{"private", func(f *preflight.Facts) { f.Public = false }, preflight.Caution, 85, []string{"not_public"}},
		{"rental", func(f *preflight.Facts) { f.PricingModel = "FLAT_PRICE_PER_MONTH" }, preflight.Caution, 85, []string{"monthly_rental"}},
		{"everything", func(f *preflight.Facts) {
			*f = preflight.Facts{Deprecated: true, RunsTotal: 100, RunsSucceeded: 10, LastRunDaysAgo: 300, BuildDaysAgo: 900, Notice: "UNDER_MAINTENANCE", PricingModel: "FLAT_PRICE_PER_MONTH"}
		}, preflight.Avoid, 0, []string{"deprecated", "low_success_rate", "abandoned", "old_build", "few_users", "notice", "not_public", "monthly_rental"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := clean
			tt.change(&f)
			verdict, score, alerts := preflight.Verdict(f)
			var ids []string
			for _, a := range alerts {
				ids = append(ids, a.Rule)
				if a.Evidence == "" {
					t.Errorf("%s fired without evidence", a.Rule)
				}
			}
			if verdict != tt.verdict || score != tt.score || !equal(ids, tt.rules) {
				t.Errorf("verdict %s %d %v, want %s %d %v", verdict, score, ids, tt.verdict, tt.score, tt.rules)
			}
		})
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
