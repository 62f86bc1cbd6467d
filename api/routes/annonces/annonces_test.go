package annonces_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/routes/annonces"
	"github.com/peage/appliance/api/routes/fr"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/upstreamtest"
	"github.com/peage/appliance/browserfarm"
	"github.com/peage/appliance/browserfarm/farmtest"
	"github.com/peage/appliance/internal/goldenfile"
	"github.com/peage/appliance/internal/testenv"
)

var env *farmtest.Env

// requests records the search URLs the browser asked the local site for.
var (
	mu       sync.Mutex
	requests []string
)

// search is the classifieds site's /recherche as the local site serves it: the recorded
// search page (a property search of Paris), whatever the query; the DataDome page for the
// text "bloque"; statuses alone for "limite" (429) and "panne" (500).
func search() http.Handler {
	page, blocked := farmtest.Recorded("search_immo_paris.html.gz", 200), farmtest.Recorded("datadome.html", 403)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests = append(requests, r.URL.RequestURI())
		mu.Unlock()
		switch r.URL.Query().Get("text") {
		case "bloque":
			blocked.ServeHTTP(w, r)
		case "limite":
			http.Error(w, "too many", http.StatusTooManyRequests)
		case "panne":
			http.Error(w, "down", http.StatusInternalServerError)
		case "lent":
			<-r.Context().Done()
		default:
			page.ServeHTTP(w, r)
		}
	})
}

// The listings site as the local site serves it: the place service answers the recorded
// place of 75005 for every q but 75019, for which it answers the DataDome page; the search
// service answers the recorded listings of 75005 whatever the filters.
func listingsSite() map[string]http.Handler {
	place, ads, blocked := farmtest.Recorded("listings_place_75005.json", 200), farmtest.Recorded("listings_ads_75005.json", 200), farmtest.Recorded("datadome.html", 403)
	record := func(h http.Handler, alt func(*http.Request) bool) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			requests = append(requests, r.URL.RequestURI())
			mu.Unlock()
			if alt != nil && alt(r) {
				blocked.ServeHTTP(w, r)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	return map[string]http.Handler{
		"/place.json":         record(jsonType(place), func(r *http.Request) bool { return r.URL.Query().Get("q") == "75019" }),
		"/realEstateAds.json": record(jsonType(ads), nil),
	}
}

// jsonType serves h's body as JSON, as the site does.
func jsonType(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&typed{ResponseWriter: w, ct: "application/json; charset=utf-8"}, r)
	})
}

type typed struct {
	http.ResponseWriter
	ct string
}

func (t *typed) WriteHeader(code int) {
	t.ResponseWriter.Header().Set("Content-Type", t.ct)
	t.ResponseWriter.WriteHeader(code)
}

func TestMain(m *testing.M) {
	flag.Parse()
	if testenv.MainNeeds(testenv.Browser) {
		os.Exit(m.Run())
	}
	var err error
	// The recorded search page is 1.8 MB, as the site's pages are: the production bound
	// (16 MiB), not the tests' 1 MiB.
	env, err = farmtest.StartPagesTuned(1, 8, func(c *browserfarm.Config) { c.MaxHTMLBytes = browserfarm.DefaultConfig().MaxHTMLBytes },
		pages())
	if err != nil {
		fmt.Fprintln(os.Stderr, "annonces tests need a real Chromium:", err)
		os.Exit(1)
	}
	code := m.Run()
	env.Close()
	os.Exit(code)
}

func pages() map[string]http.Handler {
	p := listingsSite()
	p["/recherche"] = search()
	return p
}

// now is the reference's clock: DVF years 2024-2026 are read, then 2021-2023.
var now = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// dvfSite serves the recorded DVF lines of Boulogne-Billancourt's 2025 file
// (api/upstream/dvf/testdata/92012_2025.csv) as the 2025 file of Paris 18e (75118), a DERIVED
// use as fr's Paris test makes of it; every other arrondissement and year has no file (404).
func dvfSite(t *testing.T) http.Handler {
	var routes []upstreamtest.Route
	for y := now.Year() - 5; y <= now.Year(); y++ {
		for a := 75101; a <= 75120; a++ {
			h := http.NotFoundHandler()
			if a == 75118 && y == 2025 {
				h = upstreamtest.File(t, "../../upstream/dvf/testdata/92012_2025.csv")
			}
			routes = append(routes, upstreamtest.Route{Path: fmt.Sprintf("/geo-dvf/latest/csv/%d/communes/75/%d.csv", y, a), H: h})
		}
	}
	return upstreamtest.Match(t, routes...)
}

// reference is fr's DVF reference over fixture upstreams (DVF as dvfSite, nothing else asked).
func reference(t *testing.T, dvf http.Handler) *fr.Routes {
	specs := map[string]upstream.Spec{}
	for _, s := range upstream.Specs {
		srv := upstreamtest.New(t)
		if s.Name == "dvf" {
			srv.Handle(dvf)
		}
		specs[s.Name] = srv.Spec(t, s.Name)
	}
	r, err := fr.With(fr.Parts{Upstreams: specs, Now: func() time.Time { return now }, HTTP: httpc.Options{Contact: "test@example.org"}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func start(t *testing.T, gate paywall.Gate) *apitest.Harness {
	t.Helper()
	return startWith(t, gate, dvfSite(t))
}

// startWith is start with DVF answered by dvf.
func startWith(t *testing.T, gate paywall.Gate, dvf http.Handler) *apitest.Harness {
	t.Helper()
	names := catalog.DefaultNames()
	r, err := annonces.With(annonces.Parts{Farm: env.Farm, Classifieds: env.Base, Listings: env.Base, ListingsPlaces: env.Base, Reference: reference(t, dvf), Names: names})
	if err != nil {
		t.Fatal(err)
	}
	return apitest.StartFamily(t, names, r, apitest.Options{Gate: gate})
}

func asked(want string) bool {
	mu.Lock()
	defer mu.Unlock()
	for _, r := range requests {
		if r == want {
			return true
		}
	}
	return false
}

// local replaces the local site's address (its port changes from run to run).
func local(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal([]byte(strings.ReplaceAll(string(b), strings.TrimPrefix(env.Base, "http://"), "LOCAL-SITE")), &out)
	return out
}

func num(v any) float64 { f, _ := v.(float64); return f }

// TestRecordedSearches: each route's full answer from the recorded search page, the search
// URL it asked, and one charge per answer.
func TestRecordedSearches(t *testing.T) {
	gate := &apitest.RecordingGate{}
	h := start(t, gate)
	tests := []struct {
		golden, path string
		q            url.Values
		request      string
		check        func(map[string]any) bool
	}{
		{"classifieds", "/v1/fr/petites-annonces", url.Values{"text": {"appartement"}, "city": {"Paris"}, "zipcode": {"75018"}, "limit": {"3"}},
			"/recherche?locations=Paris_75018&text=appartement", func(d map[string]any) bool {
				return apitest.At(d, "count") == 3.0 && apitest.At(d, "read_from") == "__NEXT_DATA__" &&
					apitest.At(d, "ads", 0, "id") == "3126506313" && apitest.At(d, "ads", 0, "title") == "Studio 1 pièce 24 m²" &&
					apitest.At(d, "ads", 0, "price") == 170000.0 && apitest.At(d, "ads", 0, "city") == "Paris" &&
					apitest.At(d, "ads", 0, "date") == "2025-12-13T04:02:11+01:00" &&
					apitest.At(d, "ads", 0, "url") == "https://www.leboncoin.fr/ad/ventes_immobilieres/3126506313" &&
					len(apitest.At(d, "ads", 0, "images").([]any)) == 6 &&
					apitest.At(d, "ads", 0, "attributes", 0, "key") == "real_estate_type" && apitest.At(d, "ads", 0, "attributes", 0, "value") == "Appartement" &&
					apitest.At(d, "ads", 2, "id") == "3088152467"
			}},
		{"listings", "/v1/fr/annonces-immo", url.Values{"cp": {"75005"}, "max": {"10"}},
			`/realEstateAds.json?filters=%7B%22size%22%3A10%2C%22from%22%3A0%2C%22showAllModels%22%3Afalse%2C%22filterType%22%3A%22buy%22%2C%22propertyType%22%3A%5B%22house%22%2C%22flat%22%5D%2C%22page%22%3A1%2C%22sortBy%22%3A%22relevance%22%2C%22sortOrder%22%3A%22desc%22%2C%22onTheMarket%22%3A%5Btrue%5D%2C%22zoneIdsByTypes%22%3A%7B%22zoneIds%22%3A%5B%22-20873%22%5D%7D%7D`,
			func(d map[string]any) bool {
				return asked("/place.json?q=75005") && apitest.At(d, "count") == 2.0 &&
					apitest.At(d, "listings", 0, "id") == "century-21-202_2421_10464" && apitest.At(d, "listings", 0, "type") == "appartement" &&
					apitest.At(d, "listings", 0, "rooms") == 3.0 && apitest.At(d, "listings", 0, "surface_m2") == 63.51 &&
					apitest.At(d, "listings", 0, "price") == 882000.0 && apitest.At(d, "listings", 0, "price_m2") == 13888.0 &&
					apitest.At(d, "listings", 0, "cp") == "75005" && apitest.At(d, "listings", 1, "price_m2") == 11400.0 &&
					apitest.At(d, "median_asking_price_m2") == 12644.0 && apitest.At(d, "median_of") == 2.0
			}},
		{"immo", "/v1/fr/immo", url.Values{"cp": {"75005"}}, "/recherche?category=9&locations=75005&real_estate_type=1%2C2", func(d map[string]any) bool {
			return apitest.At(d, "count") == 4.0 && apitest.At(d, "left_out", "autre_lieu") == 33.0 &&
				apitest.At(d, "listings", 0, "id") == "3072292353" && apitest.At(d, "listings", 2, "id") == "century-21-202_2421_10464" &&
				apitest.At(d, "sources", 0, "status") == "ok" && apitest.At(d, "sources", 1, "status") == "ok" &&
				apitest.At(d, "median_asking_price_m2") != nil
		}},
		{"biens_sous_cotes", "/v1/fr/biens-sous-cotes", url.Values{"cp": {"75018"}, "minGap": {"20"}}, "/recherche?category=9&locations=75018&real_estate_type=1%2C2",
			func(d map[string]any) bool {
				biens, _ := apitest.At(d, "biens").([]any)
				if len(biens) < 2 || apitest.At(d, "dvf_reference", "appartement 75018", "insee") != "75118" {
					return false
				}
				median := num(apitest.At(d, "dvf_reference", "appartement 75018", "prix_m2", "median"))
				for i, b := range biens {
					gap, m2 := num(apitest.At(b, "gap_pct")), num(apitest.At(b, "price_m2"))
					if gap < 20 || (i > 0 && gap > num(apitest.At(biens[i-1], "gap_pct"))) || num(apitest.At(b, "dvf_median_m2")) != median ||
						gap != float64(int((median-m2)/median*1000+0.5))/10 {
						return false
					}
				}
				return true
			}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			status, d := h.GetObject(t, tt.path, tt.q)
			if status != 200 || !tt.check(d) {
				b, _ := json.Marshal(d)
				t.Fatalf("%d %s", status, b)
			}
			if !asked(tt.request) {
				t.Errorf("the route did not ask %s (asked %v)", tt.request, requests)
			}
			apitest.Golden(t, tt.golden, local(d), goldenfile.Update())
		})
	}
	if charged, waived := gate.Counts(); charged != len(tests) || waived != 0 {
		t.Errorf("charged %d waived %d, want %d and 0", charged, waived, len(tests))
	}
}

// TestBlockedAndFailingSites: DataDome's captcha page is a 502 naming it, the site's 429 and
// 500 are 502s naming the status; none is charged.
func TestBlockedAndFailingSites(t *testing.T) {
	for _, tt := range []struct {
		text string
		says string
	}{
		{"bloque", "DataDome"},
		{"limite", "429"},
		{"panne", "500"},
	} {
		t.Run(tt.text, func(t *testing.T) {
			gate := &apitest.RecordingGate{}
			h := start(t, gate)
			status, d := h.GetObject(t, "/v1/fr/petites-annonces", url.Values{"text": {tt.text}})
			msg, _ := apitest.At(d, "error", "message").(string)
			if status != 502 || !strings.Contains(msg, tt.says) {
				t.Fatalf("= %d %v, want 502 saying %q", status, d, tt.says)
			}
			if charged, waived := gate.Counts(); charged != 0 || waived != 1 {
				t.Errorf("charged %d waived %d, want 0 and 1", charged, waived)
			}
		})
	}
}

// TestUnreachableSiteIs502: a site host the farm may not reach (here a local server the
// egress policy does not allow) is a 502 naming the site, not a 400 about a url the caller
// never gave; nothing is charged and the host is never asked.
func TestUnreachableSiteIs502(t *testing.T) {
	names := catalog.DefaultNames()
	r, err := annonces.With(annonces.Parts{Farm: env.Farm, Classifieds: env.Other.URL, Listings: env.Other.URL, ListingsPlaces: env.Other.URL, Names: names})
	if err != nil {
		t.Fatal(err)
	}
	gate := &apitest.RecordingGate{}
	h := apitest.StartFamily(t, names, r, apitest.Options{Gate: gate})
	for _, c := range []struct {
		path string
		q    url.Values
	}{
		{"/v1/fr/petites-annonces", url.Values{"text": {"velo"}}},
		{"/v1/fr/annonces-immo", url.Values{"cp": {"80000"}}},
		{"/v1/fr/immo", url.Values{"cp": {"80000"}}},
	} {
		status, d := h.GetObject(t, c.path, c.q)
		msg, _ := apitest.At(d, "error", "message").(string)
		if status != 502 || apitest.At(d, "error", "param") != nil || !strings.Contains(msg, "could not be reached") {
			t.Errorf("%s = %d %v, want 502 naming the site", c.path, status, d)
		}
	}
	if charged, waived := gate.Counts(); charged != 0 || waived != 3 {
		t.Errorf("charged %d waived %d, want 0 and 3", charged, waived)
	}
	if n := env.OtherHits.Load(); n != 0 {
		t.Errorf("the refused host was asked %d times", n)
	}
}

// TestDVFDown: biens-sous-cotes cannot stand without the DVF median: DVF failing on every
// file is a 502 naming it, not charged.
func TestDVFDown(t *testing.T) {
	gate := &apitest.RecordingGate{}
	h := startWith(t, gate, upstreamtest.ServerError())
	status, d := h.GetObject(t, "/v1/fr/biens-sous-cotes", url.Values{"cp": {"75018"}})
	if status != 502 || !strings.Contains(fmt.Sprint(d), "dvf") {
		t.Fatalf("= %d %v, want 502 naming dvf", status, d)
	}
	if charged, waived := gate.Counts(); charged != 0 || waived != 1 {
		t.Errorf("charged %d waived %d, want 0 and 1", charged, waived)
	}
}

// TestViagerAndWiderSample: in 75013 the recorded page has two flats and a viager; DVF has
// no file of 75113, so the median is the whole city's (estimation-immo's widening, said in
// the reference), and the viager, priced at its down payment, is left out.
func TestViagerAndWiderSample(t *testing.T) {
	h := start(t, &apitest.RecordingGate{})
	status, d := h.GetObject(t, "/v1/fr/biens-sous-cotes", url.Values{"cp": {"75013"}, "minGap": {"20"}})
	ref := apitest.At(d, "dvf_reference", "appartement 75013")
	if status != 200 || apitest.At(d, "left_out", "viager") != 1.0 || apitest.At(d, "listings_compared") != 2.0 ||
		apitest.At(ref, "echantillon", "perimetre") != "ville" || apitest.At(ref, "echantillon", "insee_lu") != "75056" ||
		apitest.At(d, "count") != 1.0 || apitest.At(d, "biens", 0, "id") != "3134758576" {
		b, _ := json.Marshal(d)
		t.Fatalf("= %d %s", status, b)
	}
}

// TestSlowSite: a search page that never answers is a 504, not charged.
func TestSlowSite(t *testing.T) {
	gate := &apitest.RecordingGate{}
	h := start(t, gate)
	if status, d := h.GetObject(t, "/v1/fr/petites-annonces", url.Values{"text": {"lent"}}); status != 504 {
		t.Fatalf("= %d %v, want 504", status, d)
	}
	if charged, waived := gate.Counts(); charged != 0 || waived != 1 {
		t.Errorf("charged %d waived %d, want 0 and 1", charged, waived)
	}
}

// TestOneSourceDown: the listings site answering its DataDome page is a 502 naming it for
// /v1/fr/<listings_b> (not charged); /v1/fr/immo declares that source failed and answers from
// the classifieds site (charged).
func TestOneSourceDown(t *testing.T) {
	gate := &apitest.RecordingGate{}
	h := start(t, gate)
	status, d := h.GetObject(t, "/v1/fr/annonces-immo", url.Values{"cp": {"75019"}})
	if msg, _ := apitest.At(d, "error", "message").(string); status != 502 || !strings.Contains(msg, "DataDome") {
		t.Fatalf("listings site blocked = %d %v, want 502 naming DataDome", status, d)
	}
	status, d = h.GetObject(t, "/v1/fr/immo", url.Values{"cp": {"75019"}})
	msg, _ := apitest.At(d, "sources", 1, "error").(string)
	if status != 200 || apitest.At(d, "count") != 2.0 || apitest.At(d, "sources", 0, "status") != "ok" ||
		apitest.At(d, "sources", 1, "status") != "failed" || !strings.Contains(msg, "DataDome") {
		t.Fatalf("immo with the listings site blocked = %d %v, want 200 from the classifieds site, the other declared failed", status, d)
	}
	if charged, waived := gate.Counts(); charged != 1 || waived != 1 {
		t.Errorf("charged %d waived %d, want 1 and 1", charged, waived)
	}
}

// TestBadInputBeforePayment: an unknown type, a postal code that is not one, minGap, limit or
// max out of range, a category that is no id: 400 naming the parameter before any 402.
func TestBadInputBeforePayment(t *testing.T) {
	h := start(t, nil)
	if status, d := h.GetObject(t, "/v1/fr/immo", url.Values{"cp": {"75018"}}); status != 402 {
		t.Fatalf("valid call = %d %v, want 402", status, d)
	}
	for _, tt := range []struct {
		path  string
		q     url.Values
		param string
	}{
		{"/v1/fr/immo", url.Values{"cp": {"75018"}, "type": {"vente"}}, "type"},
		{"/v1/fr/immo", url.Values{"cp": {"7501"}}, "cp"},
		{"/v1/fr/annonces-immo", url.Values{"cp": {"75018"}, "max": {"101"}}, "max"},
		{"/v1/fr/annonces-immo", url.Values{"cp": {"75018"}, "type": {"viager"}}, "type"},
		{"/v1/fr/biens-sous-cotes", url.Values{"cp": {"75018"}, "minGap": {"95"}}, "minGap"},
		{"/v1/fr/biens-sous-cotes", url.Values{"cp": {"75018"}, "minGap": {"-1"}}, "minGap"},
		{"/v1/fr/biens-sous-cotes", url.Values{"cp": {"7501A"}}, "cp"},
		{"/v1/fr/petites-annonces", url.Values{"text": {"velo"}, "limit": {"0"}}, "limit"},
		{"/v1/fr/petites-annonces", url.Values{"text": {"velo"}, "limit": {"101"}}, "limit"},
		{"/v1/fr/petites-annonces", url.Values{"text": {"velo"}, "category": {"velos"}}, "category"},
		{"/v1/fr/petites-annonces", url.Values{"text": {"velo"}, "zipcode": {"750"}}, "zipcode"},
	} {
		status, d := h.GetObject(t, tt.path, tt.q)
		if status != 400 || apitest.At(d, "error", "param") != tt.param {
			t.Errorf("%s?%s = %d %v, want 400 naming %s", tt.path, tt.q.Encode(), status, d, tt.param)
		}
	}
}
