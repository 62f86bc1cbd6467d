package annonces_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/routes/annonces"
	"github.com/peage/appliance/api/routes/fr"
	"github.com/peage/appliance/browserfarm"
)

// pageFarm answers a fixed page for each path it lists and fails every other read.
type pageFarm map[string]string

func (f pageFarm) Ready() error { return nil }

func (f pageFarm) Do(_ context.Context, t browserfarm.Task) (*browserfarm.Result, error) {
	u, err := url.Parse(t.URL)
	if err != nil {
		return nil, err
	}
	if html, ok := f[u.Path]; ok {
		return &browserfarm.Result{URL: t.URL, Status: 200, HTML: html}, nil
	}
	return nil, errors.New("unreachable in this test")
}

// harness serves the routes over farm and ref.
func harness(t *testing.T, farm pageFarm, ref annonces.Reference, gate *apitest.RecordingGate) *apitest.Harness {
	t.Helper()
	names := catalog.DefaultNames()
	r, err := annonces.With(annonces.Parts{Farm: farm, Reference: ref, Names: names})
	if err != nil {
		t.Fatal(err)
	}
	return apitest.StartFamily(t, names, r, apitest.Options{Gate: gate})
}

// cpReference answers a DVF median for any postal code and records the codes asked.
type cpReference struct{ asked []string }

func (r *cpReference) ReferenceReady() error { return nil }

func (r *cpReference) DVFReference(_ context.Context, cp, _, typ string) (*fr.Reference, error) {
	r.asked = append(r.asked, cp)
	return &fr.Reference{Insee: "80021", Commune: "Amiens", Type: typ, PrixM2: fr.PrixM2{Median: 3000}}, nil
}

// TestSousCotesListingWithoutPostcode: a city search keeps listings by city name; one without
// a postal code names no commune to read DVF for, so it is left out and counted, and DVF is
// never asked about an empty postal code.
func TestSousCotesListingWithoutPostcode(t *testing.T) {
	const page = `<html><body><script id="__NEXT_DATA__" type="application/json">{"props":{"pageProps":{"searchData":{"total":2,"max_pages":1,"ads":[` +
		`{"list_id":1,"subject":"T2","url":"/ad/ventes_immobilieres/1","price":[100000],"location":{"city":"Amiens","zipcode":"80000"},` +
		`"attributes":[{"key":"real_estate_type","key_label":"Type","value":"2","value_label":"Appartement"},{"key":"square","key_label":"Surface","value":"50","value_label":"50 m²"}]},` +
		`{"list_id":2,"subject":"T3","url":"/ad/ventes_immobilieres/2","price":[90000],"location":{"city":"Amiens"},` +
		`"attributes":[{"key":"real_estate_type","key_label":"Type","value":"2","value_label":"Appartement"},{"key":"square","key_label":"Surface","value":"60","value_label":"60 m²"}]}` +
		`]}}}}</script></body></html>`
	ref := &cpReference{}
	h := harness(t, pageFarm{"/recherche": page}, ref, &apitest.RecordingGate{})
	status, d := h.GetObject(t, "/v1/fr/biens-sous-cotes", url.Values{"city": {"Amiens"}, "minGap": {"0"}})
	if status != 200 {
		t.Fatalf("= %d %v, want 200", status, d)
	}
	if apitest.At(d, "left_out", "sans_code_postal") != 1.0 || apitest.At(d, "listings_compared") != 1.0 || apitest.At(d, "biens", 0, "id") != "1" {
		t.Errorf("left_out %v, compared %v, biens %v; want the listing without a postal code left out and the other compared",
			d["left_out"], d["listings_compared"], d["biens"])
	}
	if len(ref.asked) != 1 || ref.asked[0] != "80000" {
		t.Errorf("DVF asked about postal codes %q, want only 80000", ref.asked)
	}
}

// TestListingsAnswerWithoutAds: a search answer without realEstateAds is not the search
// service's (its API changed): a 502 saying so, not a 404 saying there is no listing, and
// nothing is charged.
func TestListingsAnswerWithoutAds(t *testing.T) {
	gate := &apitest.RecordingGate{}
	h := harness(t, pageFarm{
		"/place.json":         `<html><body><pre>{"name":"Amiens","postalCodes":["80000"],"zoneIds":["-20873"]}</pre></body></html>`,
		"/realEstateAds.json": `<html><body><pre>{"total":0,"message":"moved"}</pre></body></html>`,
	}, nil, gate)
	status, d := h.GetObject(t, "/v1/fr/annonces-immo", url.Values{"cp": {"80000"}})
	if msg, _ := apitest.At(d, "error", "message").(string); status != 502 || !strings.Contains(msg, "realEstateAds") {
		t.Errorf("= %d %v, want 502 naming realEstateAds", status, d)
	}
	if charged, waived := gate.Counts(); charged != 0 || waived != 1 {
		t.Errorf("charged %d waived %d, want 0 and 1", charged, waived)
	}
}
