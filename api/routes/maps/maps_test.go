package maps

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/browserfarm/farmtest"
	"github.com/peage/appliance/internal/goldenfile"
	"github.com/peage/appliance/internal/testenv"
)

var (
	env   *farmtest.Env
	local *site
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testenv.MainNeeds(testenv.Browser) {
		os.Exit(m.Run())
	}
	local = newSite()
	var err error
	env, err = farmtest.StartPages(2, 16, local.pages())
	if err != nil {
		fmt.Fprintln(os.Stderr, "maps tests need a real Chromium:", err)
		os.Exit(1)
	}
	local.base = env.Base
	code := m.Run()
	env.Close()
	os.Exit(code)
}

func start(t *testing.T, gate paywall.Gate) *apitest.Harness { return startAt(t, gate, env.Base) }

// startAt serves the route reading the maps at base.
func startAt(t *testing.T, gate paywall.Gate, base string) *apitest.Harness {
	t.Helper()
	r, err := With(Parts{Farm: env.Farm, Base: base})
	if err != nil {
		t.Fatal(err)
	}
	return apitest.StartFamily(t, catalog.DefaultNames(), r, apitest.Options{Gate: gate})
}

// localized replaces the local site's address, which changes from run to run.
func localized(t *testing.T, d map[string]any) map[string]any {
	b, _ := json.Marshal(d)
	s := strings.ReplaceAll(string(b), env.Base, "http://LOCAL-SITE")
	s = strings.ReplaceAll(s, strings.TrimPrefix(env.Base, "http://"), "LOCAL-SITE")
	var out map[string]any
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func businesses(d map[string]any) []map[string]any {
	var out []map[string]any
	l, _ := d["businesses"].([]any)
	for _, b := range l {
		out = append(out, b.(map[string]any))
	}
	return out
}

// TestSearchFromRecordedPages reads the local site's search of "coffee" in Ilion (the
// recorded search answer, half embedded and half loaded while scrolling) and the places'
// pages, with and without details; each answer is compared with its golden file, and the
// checks below were read by hand in the recordings.
func TestSearchFromRecordedPages(t *testing.T) {
	gate := &apitest.RecordingGate{}
	h := start(t, gate)
	tests := []struct {
		golden      string
		q           url.Values
		count       int
		feedEnd     string
		details     int // places whose page is read
		scrolls     int // loads of more cards
		checkPlaces func(t *testing.T, b []map[string]any)
	}{
		{"coffee_details", url.Values{"q": {"coffee"}, "location": {"Ilion"}, "max": {"12"}}, 12, "max", 12, 1,
			func(t *testing.T, b []map[string]any) {
				first, twelfth := b[0], b[11]
				if first["name"] != "Dream Coffee" || first["rating"] != 4.8 || first["category"] != "Coffee shop" ||
					first["address"] != "Eakou 74, Ilion 131 22, Greece" || first["phone"] != "+30 21 0261 6578" ||
					first["website"] != "https://www.vrisko.gr/details/ag2e4fci67301a_44_3i4a4c_f341701" || first["review_count"] != 48.0 ||
					first["details"] != "read" || first["source"] != "embedded_data" ||
					!strings.HasPrefix(first["map_url"].(string), env.Base+"/maps/place/Dream+Coffee/data=!4m7!3m6!1s0x14a1a32f316b15a1:0x169c54b46dcc3a93") {
					t.Errorf("first = %v", first)
				}
				// Loaded while scrolling: the card gives the feed's fields, the place page the rest.
				if twelfth["name"] != "aiglis 58 coffee" || twelfth["rating"] != 5.0 || twelfth["source"] != "card" ||
					twelfth["address"] != "Eglis 58, Peristeri 121 37, Greece" || twelfth["phone"] != "+30 698 195 5281" ||
					twelfth["website"] != nil || twelfth["review_count"] != 27.0 || twelfth["details"] != "read" {
					t.Errorf("twelfth = %v", twelfth)
				}
			}},
		{"coffee_feed", url.Values{"q": {"coffee"}, "location": {"Ilion"}, "details": {"false"}, "max": {"20"}}, 20, "max", 0, 2,
			func(t *testing.T, b []map[string]any) {
				for _, p := range b {
					if p["phone"] != nil || p["website"] != nil || p["review_count"] != nil || p["details"] != "not_requested" {
						t.Errorf("feed only, yet %v", p)
					}
				}
				if last := b[19]; last["name"] != "West Coffee Saloon" || last["rating"] != 4.9 || last["category"] != "Cafe" ||
					last["address"] != "Kipoupoleos 85" || last["source"] != "card" {
					t.Errorf("twentieth = %v", last)
				}
			}},
		{"coffee_details_max", url.Values{"q": {"coffee"}, "location": {"Ilion"}, "max": {"6"}, "detailsMax": {"2"}}, 6, "max", 2, 0,
			func(t *testing.T, b []map[string]any) {
				for i, p := range b {
					read := p["phone"] != nil && p["review_count"] != nil
					if (i < 2) != read || (i < 2) != (p["details"] == "read") {
						t.Errorf("business %d: details %v phone %v reviews %v", i+1, p["details"], p["phone"], p["review_count"])
					}
				}
			}},
		{"coffee_all", url.Values{"q": {"coffee"}, "location": {"Ilion"}, "max": {"120"}, "detailsMax": {"0"}}, 20, "end_of_list", 0, 2, nil},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			local.reset()
			status, d := h.GetObject(t, "/v1/maps", tt.q)
			if status != 200 {
				t.Fatalf("%d %v", status, d)
			}
			b := businesses(d)
			if d["count"] != float64(tt.count) || len(b) != tt.count || d["feed_end"] != tt.feedEnd || d["details_read"] != float64(tt.details) {
				t.Fatalf("count %v (%d listed), feed_end %v, details_read %v; want %d, %s, %d", d["count"], len(b), d["feed_end"], d["details_read"], tt.count, tt.feedEnd, tt.details)
			}
			for i, p := range b {
				if p["position"] != float64(i+1) {
					t.Errorf("business %d at position %v", i+1, p["position"])
				}
			}
			if tt.checkPlaces != nil {
				tt.checkPlaces(t, b)
			}
			if n := local.countOf("/maps/place/"); n != tt.details {
				t.Errorf("%d place pages read, want %d", n, tt.details)
			}
			if n := local.countOf("/maps/feed"); n != tt.scrolls {
				t.Errorf("%d loads of more cards, want %d", n, tt.scrolls)
			}
			apitest.Golden(t, tt.golden, localized(t, d), goldenfile.Update())
		})
	}
	if charged, waived := gate.Counts(); charged != len(tests) || waived != 0 {
		t.Errorf("charged %d waived %d, want %d and 0", charged, waived, len(tests))
	}
}

// TestOnePlacePageBlocked: a place whose page is Google's unusual-traffic page says so in
// its details_error; the others are read and the call is charged.
func TestOnePlacePageBlocked(t *testing.T) {
	local.blockID.Store("0x14a1a3148b697c67:0xa7fb118f74eabd4b") // Cocoza Speciality Coffee, second
	defer local.blockID.Store("")
	gate := &apitest.RecordingGate{}
	h := start(t, gate)
	status, d := h.GetObject(t, "/v1/maps", url.Values{"q": {"coffee"}, "location": {"Ilion"}, "max": {"3"}})
	b := businesses(d)
	if status != 200 || len(b) != 3 || d["details_read"] != 2.0 {
		t.Fatalf("%d %v", status, d)
	}
	second := b[1]
	msg, _ := second["details_error"].(string)
	if second["details"] != "failed" || !strings.Contains(msg, "unusual traffic") || second["phone"] != nil {
		t.Errorf("second = %v", second)
	}
	if b[0]["details"] != "read" || b[2]["details"] != "read" {
		t.Errorf("first %v third %v, want both read", b[0]["details"], b[2]["details"])
	}
	if charged, waived := gate.Counts(); charged != 1 || waived != 0 {
		t.Errorf("charged %d waived %d, want 1 and 0", charged, waived)
	}
}

// TestPlacePagesThatNeverAnswer: when no place page asked for answers, the call is a 504 and
// is not charged.
func TestPlacePagesThatNeverAnswer(t *testing.T) {
	local.hangAll.Store(true)
	defer local.hangAll.Store(false)
	gate := &apitest.RecordingGate{}
	h := start(t, gate)
	status, d := h.GetObject(t, "/v1/maps", url.Values{"q": {"coffee"}, "location": {"Ilion"}, "max": {"2"}})
	if status != 504 {
		t.Fatalf("= %d %v, want 504", status, d)
	}
	if charged, waived := gate.Counts(); charged != 0 || waived != 1 {
		t.Errorf("charged %d waived %d, want 0 and 1", charged, waived)
	}
}

// TestWallsAndEmptySearchAreNotCharged: Google's consent page and its unusual-traffic page
// are 502s naming them, a search without results is a 404, a maps that never answers a 504;
// none is charged.
func TestWallsAndEmptySearchAreNotCharged(t *testing.T) {
	tests := []struct {
		name, q string
		status  int
		says    string
	}{
		{"consent page", "consent wall", 502, "consent page"},
		{"unusual traffic", "unusual traffic", 502, `"unusual traffic" page`},
		{"no result", "coffee nowhere", 404, "no business"},
		{"no answer", "never answers", 504, "did not"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gate := &apitest.RecordingGate{}
			h := start(t, gate)
			status, d := h.GetObject(t, "/v1/maps", url.Values{"q": {tt.q}})
			msg, _ := apitest.At(d, "error", "message").(string)
			if status != tt.status || !strings.Contains(msg, tt.says) {
				t.Fatalf("= %d %v, want %d saying %q", status, d, tt.status, tt.says)
			}
			if charged, waived := gate.Counts(); charged != 0 || waived != 1 {
				t.Errorf("charged %d waived %d, want 0 and 1", charged, waived)
			}
		})
	}
}

// TestUnreachableMapsIs502: a maps host the farm may not reach (here a local server the
// egress policy does not allow) is a 502 naming the maps, not a 400 about a url the caller
// never gave; nothing is charged and the host is never asked.
func TestUnreachableMapsIs502(t *testing.T) {
	gate := &apitest.RecordingGate{}
	h := startAt(t, gate, env.Other.URL)
	status, d := h.GetObject(t, "/v1/maps", url.Values{"q": {"coffee"}})
	msg, _ := apitest.At(d, "error", "message").(string)
	if status != 502 || apitest.At(d, "error", "param") != nil || !strings.Contains(msg, "the maps could not be reached") {
		t.Fatalf("= %d %v, want 502 naming the maps", status, d)
	}
	if charged, waived := gate.Counts(); charged != 0 || waived != 1 {
		t.Errorf("charged %d waived %d, want 0 and 1", charged, waived)
	}
	if n := env.OtherHits.Load(); n != 0 {
		t.Errorf("the refused host was asked %d times", n)
	}
}

// TestBadInputBeforePayment: each bad parameter is a 400 naming it before any 402.
func TestBadInputBeforePayment(t *testing.T) {
	h := start(t, nil)
	if status, d := h.GetObject(t, "/v1/maps", url.Values{"q": {"coffee"}}); status != 402 {
		t.Fatalf("valid call = %d %v, want 402", status, d)
	}
	for _, tt := range []struct {
		q     url.Values
		param string
	}{
		{url.Values{"q": {""}}, "q"},
		{url.Values{"q": {"coffee"}, "max": {"0"}}, "max"},
		{url.Values{"q": {"coffee"}, "max": {"121"}}, "max"},
		{url.Values{"q": {"coffee"}, "max": {"ten"}}, "max"},
		{url.Values{"q": {"coffee"}, "detailsMax": {"61"}}, "detailsMax"},
		{url.Values{"q": {"coffee"}, "detailsMax": {"-1"}}, "detailsMax"},
		{url.Values{"q": {"coffee"}, "details": {"maybe"}}, "details"},
	} {
		status, d := h.GetObject(t, "/v1/maps", tt.q)
		if status != 400 || apitest.At(d, "error", "param") != tt.param {
			t.Errorf("?%s = %d %v, want 400 naming %s", tt.q.Encode(), status, d, tt.param)
		}
	}
}
