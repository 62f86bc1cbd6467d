package annonces

import (
	"context"
	"errors"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/compute/prixm2"
	"github.com/peage/appliance/api/family"
	"github.com/peage/appliance/internal/fanout"
)

// The classifieds site's property categories (its category ids) and property types (its
// real_estate_type values, whose labels the ads carry).
const (
	categorySale = "9"  // ventes immobilières
	categoryRent = "10" // locations
	typesHomes   = "1,2"
)

// Listing is one property listing.
type Listing struct {
	ID          string   `json:"id"`
	Source      string   `json:"source"`      // the site's host
	Transaction string   `json:"transaction"` // achat or location
	Type        string   `json:"type"`        // appartement, maison, or the site's label
	Rooms       *int     `json:"rooms"`
	SurfaceM2   *float64 `json:"surface_m2"`
	Price       *float64 `json:"price"`    // euros (a month, for a rental)
	PriceM2     *float64 `json:"price_m2"` // euros per m², rounded
	Postcode    string   `json:"cp"`
	City        string   `json:"city"`
	Title       string   `json:"title"`
	Date        string   `json:"date"`
	URL         string   `json:"url"`
	// Viager: sold as a life annuity, its price is the down payment alone; it is counted out
	// of the medians and of biens-sous-cotes.
	Viager bool `json:"viager,omitempty"`
}

// listing reads a property ad; its surface and rooms are the site's attributes square and rooms.
func listing(a rawAd, host, base, transaction string) Listing {
	ad := toAd(a, base)
	l := Listing{ID: ad.ID, Source: host, Transaction: transaction, Price: ad.Price, Postcode: ad.Zipcode, City: ad.City,
		Title: ad.Title, Date: ad.Date, URL: ad.URL, Type: "autre"}
	for _, at := range ad.Attributes {
		if at.Key == "real_estate_type" {
			l.Type = strings.ToLower(at.Value)
		}
	}
	l.Viager = a.attr("immo_sell_type") == "viager"
	if n, err := strconv.Atoi(a.attr("rooms")); err == nil && n > 0 {
		l.Rooms = &n
	}
	if s, err := strconv.ParseFloat(strings.ReplaceAll(a.attr("square"), ",", "."), 64); err == nil && s > 0 {
		l.SurfaceM2 = &s
		if l.Price != nil && *l.Price > 0 {
			m2 := math.Round(*l.Price / s)
			l.PriceM2 = &m2
		}
	}
	return l
}

// inPlace keeps the listings of the place asked: the sites widen a search to the city or the
// surroundings, so a listing of another postal code (or, without one, another city) is left out.
func inPlace(l Listing, city, cp string) bool {
	if cp != "" {
		return l.Postcode == cp
	}
	// "Paris 5e" is in Paris.
	lc, c := strings.ToLower(strings.TrimSpace(l.City)), strings.ToLower(city)
	return lc == c || strings.HasPrefix(lc, c+" ")
}

// propertySearch reads the site's property listings of the place for transaction (achat or
// location), at most want kept after the place filter, with what was left out by reason.
func (r *Routes) propertySearch(ctx context.Context, free bool, city, cp, transaction string, want int) ([]Listing, map[string]int, int, string, error) {
	u, err := url.Parse(r.searchURL(city, cp, transaction))
	if err != nil {
		return nil, nil, 0, "", err
	}
	out := map[string]int{}
	var ls []Listing
	keep := func(a rawAd) bool {
		l := listing(a, r.classifieds.Host, r.classifieds.String(), transaction)
		if !inPlace(l, city, cp) {
			out["autre_lieu"]++
			return false
		}
		ls = append(ls, l)
		return true
	}
	_, read, from, err := r.readPages(ctx, free, u, 1, want, keep)
	return ls, out, read, from, err
}

// median of the listings' price per m², nil without any.
func medianPerM2(ls []Listing) (*float64, int) {
	var v []float64
	for _, l := range ls {
		if l.PriceM2 != nil && !l.Viager {
			v = append(v, *l.PriceM2)
		}
	}
	if len(v) == 0 {
		return nil, 0
	}
	slices.Sort(v)
	m := math.Round(prixm2.Quantile(v, 0.5))
	return &m, len(v)
}

// Immo is the answer of /v1/fr/immo.
type Immo struct {
	Place          Place          `json:"lieu"`
	Transaction    string         `json:"type"`
	Listings       []Listing      `json:"listings"`
	Count          int            `json:"count"`
	MedianAskingM2 *float64       `json:"median_asking_price_m2"`
	MedianOf       int            `json:"median_of"` // listings with a price and a surface
	LeftOut        map[string]int `json:"left_out"`  // listings read but not kept, by reason
	Sources        []Site         `json:"sources"`
	Method         string         `json:"method"`
}

// Place is the place asked.
type Place struct {
	City     string `json:"city,omitempty"`
	Postcode string `json:"cp,omitempty"`
}

// Site says which site was read and how.
type Site struct {
	Site      string  `json:"site"`
	URL       string  `json:"url"`
	PagesRead int     `json:"pages_read"`
	ReadFrom  string  `json:"read_from"`
	Status    string  `json:"status"` // ok, or failed (Error says why; its listings are missing)
	Error     *string `json:"error"`
}

const immoMethod = "The property listings of both listing sources, read at once in a real browser: the classifieds site's search page " +
	"(its Next.js state, __NEXT_DATA__; surface and rooms from the ads' attributes) and the property-listings site's JSON API. A source " +
	"that fails is declared in sources and the answer is made from the other; both failing is a 502. Listings of another postal code " +
	"than the one asked are left out (the sites widen searches). Price per m² = asking price / surface, rounded; the median is over " +
	"the listings having both, viagers (priced at their down payment) excepted."

// allListings reads both sources at once; one failing is declared, both failing is the error.
func (r *Routes) allListings(ctx context.Context, free bool, city, cp, tr string) ([]Listing, map[string]int, []Site, error) {
	type result struct {
		ls   []Listing
		out  map[string]int
		site Site
		err  error
	}
	results := make([]result, 2)
	panics := fanout.Go(ctx, nil,
		func(ctx context.Context) error {
			ls, out, read, from, err := r.propertySearch(ctx, free, city, cp, tr, 35)
			results[0] = result{ls, out, Site{Site: r.classifieds.Host, URL: r.searchURL(city, cp, tr), PagesRead: read, ReadFrom: from, Status: "ok"}, err}
			return nil
		},
		func(ctx context.Context) error {
			ls, out, site, err := r.listingsSearch(ctx, free, city, cp, tr, 100)
			results[1] = result{ls, out, site, err}
			return nil
		})
	for i, err := range panics {
		if err != nil { // the site's read panicked: that site failed, the other stands
			results[i] = result{site: Site{Site: []string{r.classifieds.Host, r.listings.Host}[i]}, err: err}
		}
	}
	var ls []Listing
	out := map[string]int{}
	sites := []Site{}
	failed := 0
	for _, res := range results {
		if res.err != nil {
			msg := res.err.Error()
			res.site.Status, res.site.Error, res.site.PagesRead, res.site.ReadFrom = "failed", &msg, 0, ""
			failed++
		}
		sites = append(sites, res.site)
		ls = append(ls, res.ls...)
		for k, v := range res.out {
			out[k] += v
		}
	}
	if failed == len(results) {
		return nil, nil, sites, results[0].err
	}
	return ls, out, sites, nil
}

func (r *Routes) immo(ctx context.Context, req *catalog.Request) (any, error) {
	city, cp := strings.TrimSpace(req.Args.Str("city")), req.Args.Str("cp")
	tr := nonEmpty(req.Args.Str("type"), "achat")
	ls, out, sites, err := r.allListings(ctx, req.Free, city, cp, tr)
	if err != nil {
		return nil, err
	}
	return listingsAnswer(city, cp, tr, ls, out, sites, immoMethod)
}

// listingsAnswer is the answer of the listing routes; no listing at all is a 404.
func listingsAnswer(city, cp, tr string, ls []Listing, out map[string]int, sites []Site, method string) (*Immo, error) {
	if len(ls) == 0 {
		return nil, apierr.NotFound("no %s listing found for %s", tr, strings.TrimSpace(city+" "+cp))
	}
	med, n := medianPerM2(ls)
	return &Immo{Place: Place{City: city, Postcode: cp}, Transaction: tr, Listings: ls, Count: len(ls), MedianAskingM2: med, MedianOf: n,
		LeftOut: out, Sources: sites, Method: method}, nil
}

func (r *Routes) searchURL(city, cp, transaction string) string {
	cat := categorySale
	if transaction == "location" {
		cat = categoryRent
	}
	u := r.classifieds.JoinPath("recherche")
	u.RawQuery = url.Values{"category": {cat}, "real_estate_type": {typesHomes}, "locations": {locations(city, cp)}}.Encode()
	return u.String()
}

// Undervalued is one listing priced below the recorded sale median.
type Undervalued struct {
	Listing
	DVFMedianM2 float64 `json:"dvf_median_m2"`
	GapPct      float64 `json:"gap_pct"` // (median - asking per m²) / median, percent, one decimal
}

// SousCotes is the answer of /v1/fr/biens-sous-cotes.
type SousCotes struct {
	Place      Place                        `json:"lieu"`
	MinGap     float64                      `json:"min_gap_pct"`
	Biens      []Undervalued                `json:"biens"`
	Count      int                          `json:"count"`
	Compared   int                          `json:"listings_compared"`
	References map[string]*family.Reference `json:"dvf_reference"` // by "type cp": the recorded sale median the listings were compared with
	LeftOut    map[string]int               `json:"left_out"`
	Sources    []Site                       `json:"sources"`
	Method     string                       `json:"method"`
}

const sousCotesMethod = "Listings for sale of the postal code (both listing sources, read as /v1/fr/immo reads them) compared with the DVF " +
	"median sale price per m² of the same commune or arrondissement and type, as /v1/fr/estimation-immo computes it (method prixm2, same sample " +
	"and widening). gap = (median - asking price per m²) / median; listings with gap >= minGap, sorted by gap, largest first. A listing without " +
	"surface or price, without a postal code, sold as a viager (its price is the down payment), or of a type without DVF sales, is left out and counted; none left " +
	"to compare is a 404."

func (r *Routes) sousCotes(ctx context.Context, req *catalog.Request) (any, error) {
	city, cp := strings.TrimSpace(req.Args.Str("city")), req.Args.Str("cp")
	minGap := req.Args.Float("minGap")
	ls, out, sites, err := r.allListings(ctx, req.Free, city, cp, "achat")
	if err != nil {
		return nil, err
	}
	if len(ls) == 0 {
		return nil, apierr.NotFound("no listing for sale found for %s", strings.TrimSpace(city+" "+cp))
	}
	ans := &SousCotes{Place: Place{City: city, Postcode: cp}, MinGap: minGap, Biens: []Undervalued{}, References: map[string]*family.Reference{}, LeftOut: out,
		Sources: sites, Method: sousCotesMethod}
	for _, l := range ls {
		if l.PriceM2 == nil {
			ans.LeftOut["sans_surface_ou_prix"]++
			continue
		}
		if l.Viager {
			ans.LeftOut["viager"]++
			continue
		}
		if l.Type != "appartement" && l.Type != "maison" {
			ans.LeftOut["autre_type"]++
			continue
		}
		if l.Postcode == "" {
			// A city search keeps listings by city name: one without a postal code names no
			// commune or arrondissement to read DVF for.
			ans.LeftOut["sans_code_postal"]++
			continue
		}
		// DVF is read by commune (arrondissement): each listing's postal code names it, the
		// one asked or, for a city, its own.
		key := l.Type + " " + l.Postcode
		ref, seen := ans.References[key]
		if !seen {
			ref, err = r.ref.DVFReference(ctx, l.Postcode, city, l.Type)
			var ae *apierr.Error
			if errors.As(err, &ae) && ae.Code == apierr.CodeNotFound {
				ref, err = nil, nil // no sale of that type: its listings cannot be compared
			}
			if err != nil {
				return nil, err
			}
			ans.References[key] = ref
		}
		if ref == nil || ref.PrixM2.Median <= 0 {
			ans.LeftOut["sans_ventes_dvf"]++
			continue
		}
		ans.Compared++
		gap := math.Round((ref.PrixM2.Median-*l.PriceM2)/ref.PrixM2.Median*1000) / 10
		if gap >= minGap {
			ans.Biens = append(ans.Biens, Undervalued{Listing: l, DVFMedianM2: ref.PrixM2.Median, GapPct: gap})
		}
	}
	for t, ref := range ans.References {
		if ref == nil {
			delete(ans.References, t)
		}
	}
	slices.SortStableFunc(ans.Biens, func(a, b Undervalued) int {
		switch {
		case a.GapPct > b.GapPct:
			return -1
		case a.GapPct < b.GapPct:
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	ans.Count = len(ans.Biens)
	if ans.Compared == 0 {
		return nil, apierr.NotFound("none of the %d listings read for %s could be compared with a DVF median (left out: %v)",
			len(ls), strings.TrimSpace(city+" "+cp), ans.LeftOut)
	}
	return ans, nil
}

func nonEmpty(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}
