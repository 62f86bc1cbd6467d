package marketplace_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/routes/marketplace"
	"github.com/peage/appliance/browserfarm/farmtest"
	"github.com/peage/appliance/internal/goldenfile"
	"github.com/peage/appliance/internal/testenv"
)

var env *farmtest.Env

// requests records the marketplace paths the browser asked for (the main documents).
var (
	mu       sync.Mutex
	requests []string
)

// file serves a recorded page and records the request.
func file(name string, status int) http.Handler {
	h := farmtest.Recorded(name, status)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests = append(requests, r.URL.RequestURI())
		mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// pages are the marketplace's pages as the local site serves them: the recorded captures at
// the paths the route asks for, and statuses alone for the failures.
func pages() map[string]http.Handler {
	status := func(code int) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(code)
			fmt.Fprintf(w, "<html><head><title>%d</title></head><body>%d</body></html>", code, code)
		})
	}
	return map[string]http.Handler{
		"/dp/B0CFPL6CFY":                    file("product.html", 200),
		"/kindle-paperwhite/dp/B0CFPL6CFY/": file("product.html", 200),
		"/dp/B0CAPTCHA1":                    file("captcha.html", 200),
		"/s":                                file("search.html", 200),
		"/dp/B000000404":                    status(404),
		"/dp/B000000429":                    status(429),
		"/dp/B000000500":                    status(500),
		"/dp/B00000HANG":                    http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }),
	}
}

func TestMain(m *testing.M) {
	flag.Parse()
	if testenv.MainNeeds(testenv.Browser) {
		os.Exit(m.Run())
	}
	var err error
	env, err = farmtest.StartPages(1, 8, pages())
	if err != nil {
		fmt.Fprintln(os.Stderr, "marketplace tests need a real Chromium:", err)
		os.Exit(1)
	}
	code := m.Run()
	env.Close()
	os.Exit(code)
}

// start serves the route, named "shop", reading the marketplace at base.
func start(t *testing.T, base string, gate paywall.Gate) *apitest.Harness {
	t.Helper()
	names := catalog.DefaultNames()
	names.Marketplace = "shop"
	r, err := marketplace.With(marketplace.Parts{Farm: env.Farm, Base: base, Names: names})
	if err != nil {
		t.Fatal(err)
	}
	return apitest.StartFamily(t, names, r, apitest.Options{Gate: gate})
}

func get(t *testing.T, h *apitest.Harness, q url.Values) (int, map[string]any) {
	t.Helper()
	return h.GetObject(t, "/v1/shop", q)
}

func TestProductAndSearchFromRecordedPages(t *testing.T) {
	gate := &apitest.RecordingGate{}
	h := start(t, env.Base, gate)
	title := "Kindle Paperwhite 16 GB (Geração mais recente) - O Kindle mais rápido já lançado, com nova tela antirreflexo de 7” e bateria que dura semanas - Cor Preta"
	product := func(d map[string]any) bool {
		return apitest.At(d, "mode") == "product" && apitest.At(d, "product", "asin") == "B0CFPL6CFY" && apitest.At(d, "product", "title") == title &&
			apitest.At(d, "product", "price") == "R$ 879,00" && apitest.At(d, "product", "priceValue") == 879.0 && apitest.At(d, "product", "currency") == "R$" &&
			apitest.At(d, "product", "rating") == 4.8 && apitest.At(d, "product", "reviews") == 8400.0 && apitest.At(d, "product", "brand") == "Amazon" &&
			apitest.At(d, "product", "image") == "https://m.media-amazon.com/images/I/81-vCHKJb1L._AC_SL1500_.jpg" &&
			apitest.At(d, "product", "availability") == "Em estoque"
	}
	tests := []struct {
		golden string
		q      url.Values
		check  func(map[string]any) bool
	}{
		{"product_asin", url.Values{"asin": {"B0CFPL6CFY"}}, product},
		{"product_url", url.Values{"url": {env.Base + "/kindle-paperwhite/dp/B0CFPL6CFY/ref=sr_1_1"}}, product},
		{"search", url.Values{"q": {"kindle paperwhite"}}, func(d map[string]any) bool {
			return apitest.At(d, "mode") == "search" && apitest.At(d, "count") == 2.0 && apitest.At(d, "products", 0, "asin") == "B0CFPL6CFY" &&
				apitest.At(d, "products", 0, "priceValue") == 879.0 && apitest.At(d, "products", 0, "reviews") == 8399.0 && apitest.At(d, "products", 0, "rating") == 4.8 &&
				apitest.At(d, "products", 1, "asin") == "B0CFPHTMDX" && apitest.At(d, "products", 1, "price") == "R$ 965,08" && apitest.At(d, "products", 1, "reviews") == 4264.0 &&
				apitest.At(d, "products", 1, "image") == "https://m.media-amazon.com/images/I/71PMhxKPb1L._AC_UL320_.jpg" &&
				apitest.At(d, "products", 1, "url") == env.Base+"/dp/B0CFPHTMDX"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			status, d := get(t, h, tt.q)
			if status != 200 || !tt.check(d) {
				b, _ := json.Marshal(d)
				t.Fatalf("%d %s", status, b)
			}
			// The local site's port changes from run to run.
			d["url"], d["source"] = "LOCAL-SITE", "LOCAL-SITE"
			if p, ok := d["product"].(map[string]any); ok {
				p["url"] = "LOCAL-SITE"
			}
			for _, p := range anyList(d["products"]) {
				p.(map[string]any)["url"] = "LOCAL-SITE"
			}
			apitest.Golden(t, tt.golden, d, goldenfile.Update())
		})
	}
	mu.Lock()
	got := append([]string(nil), requests...)
	mu.Unlock()
	want := "/s?k=kindle+paperwhite"
	found := false
	for _, r := range got {
		found = found || r == want
	}
	if !found {
		t.Errorf("the search asked %v, want %s among them", got, want)
	}
	if charged, waived := gate.Counts(); charged != len(tests) || waived != 0 {
		t.Errorf("charged %d waived %d, want %d and 0", charged, waived, len(tests))
	}
}

func anyList(v any) []any { l, _ := v.([]any); return l }

// TestFailuresAreNotCharged: the robot check is a 502 naming the captcha, an unknown product
// 404, the marketplace's 429 and 500 are 502 naming the status, a page that never loads 504;
// none is charged.
func TestFailuresAreNotCharged(t *testing.T) {
	tests := []struct {
		name, asin string
		status     int
		says       string
	}{
		{"captcha", "B0CAPTCHA1", 502, "captcha"},
		{"unknown product", "B000000404", 404, "404"},
		{"rate limited", "B000000429", 502, "429"},
		{"server error", "B000000500", 502, "500"},
		{"no answer", "B00000HANG", 504, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gate := &apitest.RecordingGate{}
			h := start(t, env.Base, gate)
			status, d := get(t, h, url.Values{"asin": {tt.asin}})
			msg, _ := apitest.At(d, "error", "message").(string)
			if status != tt.status || !bytes.Contains([]byte(msg), []byte(tt.says)) {
				t.Fatalf("= %d %v, want %d saying %q", status, d, tt.status, tt.says)
			}
			gate.WantNotCharged(t, 1)
		})
	}
}

// TestUnreachableMarketplaceIs502: a marketplace host the farm may not reach (here a local
// server the egress policy does not allow) is a 502 naming the marketplace for a search or an
// ASIN, not a 400 about a url the caller never gave; a url the caller gave stays the farm's
// 400 naming it. Nothing is charged and the host is never asked.
func TestUnreachableMarketplaceIs502(t *testing.T) {
	gate := &apitest.RecordingGate{}
	h := start(t, env.Other.URL, gate)
	for _, q := range []url.Values{{"q": {"kettle"}}, {"asin": {"B0CFPL6CFY"}}} {
		status, d := get(t, h, q)
		msg, _ := apitest.At(d, "error", "message").(string)
		if status != 502 || apitest.At(d, "error", "param") != nil || !strings.Contains(msg, "the marketplace could not be reached") {
			t.Errorf("?%s = %d %v, want 502 naming the marketplace", q.Encode(), status, d)
		}
	}
	if status, d := get(t, h, url.Values{"url": {env.Other.URL + "/dp/B0CFPL6CFY"}}); status != 400 || apitest.At(d, "error", "param") != "url" {
		t.Errorf("the caller's url = %d %v, want 400 naming url", status, d)
	}
	if charged, _ := gate.Counts(); charged != 0 {
		t.Errorf("charged %d, want 0", charged)
	}
	if n := env.OtherHits.Load(); n != 0 {
		t.Errorf("the refused host was asked %d times", n)
	}
}

// TestBadInputBeforePayment: no product, a lower-case ASIN, a URL that is no product page or
// a one-letter query is a 400 naming the parameter before any 402.
func TestBadInputBeforePayment(t *testing.T) {
	h := start(t, env.Base, nil)
	if status, d := get(t, h, url.Values{"asin": {"B0CFPL6CFY"}}); status != 402 {
		t.Fatalf("valid call = %d %v, want 402", status, d)
	}
	for _, tt := range []struct {
		q     url.Values
		param string
	}{
		{url.Values{"asin": {"b0cfpl6cfy"}}, "asin"},
		{url.Values{"asin": {"B0CFPL6C"}}, "asin"},
		{url.Values{"url": {"https://www.example.com/some/page"}}, "url"},
		{url.Values{"url": {"ftp://www.example.com/dp/B0CFPL6CFY"}}, "url"},
		{url.Values{"url": {"https://www.example.com/dp/B0CFPL6CFY"}}, "url"},
		{url.Values{"q": {"k"}}, "q"},
	} {
		status, d := get(t, h, tt.q)
		if status != 400 || apitest.At(d, "error", "param") != tt.param {
			t.Errorf("?%s = %d %v, want 400 naming %s", tt.q.Encode(), status, d, tt.param)
		}
	}
	if status, d := get(t, h, url.Values{}); status != 402 {
		t.Errorf("no parameter = %d %v, want the cold probe's 402", status, d)
	}
}
