// Package annonces serves the French listing routes through the browser farm, on the box's
// own (residential) exit: /v1/fr/<classifieds_a> (the classifieds site's search),
// /v1/fr/<listings_b> (the property-listings site's listings), /v1/fr/immo (both sites'
// property listings with price per m² and the median asking price) and
// /v1/fr/biens-sous-cotes (those listings against the DVF sale median that estimation-immo
// computes, which the fr family offers as family.References). The page's own JSON state is
// read first, the visible markup only when it is missing; a captcha or block page (DataDome's,
// the site's own) is a 502 naming it, never an empty success, and nothing is charged.
package annonces

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/family"
	"github.com/peage/appliance/browserfarm"
	"github.com/peage/appliance/browserfarm/extract"
)

// ClassifiedsName is the registry row of the classifieds site (its base URL:
// upstream.override.classifieds.base_url).
const ClassifiedsName = "classifieds"

// DefaultClassifieds is the classifieds site read when none is configured.
const DefaultClassifieds = "https://www.leboncoin.fr"

// Bounds: a result page holds 35 ads; at most maxPages are read for one answer.
const (
	maxPages = 3
)

// Farm is what the routes need of the browser pool.
type Farm interface {
	Do(ctx context.Context, t browserfarm.Task) (*browserfarm.Result, error)
	Ready() error
}

// Reference is the DVF sale price per m² biens-sous-cotes compares with (the fr family's).
type Reference = family.References

// Parts are the routes' collaborators.
type Parts struct {
	Farm Farm
	// Classifieds is the classifieds site's root URL; "" is DefaultClassifieds.
	Classifieds string
	// Listings and ListingsPlaces are the listings site's search and place services' root
	// URLs; "" is DefaultListings and DefaultListingsPlaces.
	Listings, ListingsPlaces string
	// Reference answers the DVF median; nil leaves biens-sous-cotes unbound (503).
	Reference Reference
	Names     catalog.Names
}

// Routes holds the handlers.
type Routes struct {
	farm        Farm
	classifieds *url.URL
	listings    *url.URL
	places      *url.URL
	ref         Reference
	names       catalog.Names
}

// With builds the routes.
func With(d Parts) (*Routes, error) {
	r := &Routes{farm: d.Farm, ref: d.Reference, names: d.Names}
	for _, b := range []struct {
		dst      **url.URL
		raw, def string
	}{{&r.classifieds, d.Classifieds, DefaultClassifieds}, {&r.listings, d.Listings, DefaultListings}, {&r.places, d.ListingsPlaces, DefaultListingsPlaces}} {
		base, err := browserfarm.SiteBase(b.raw, b.def)
		if err != nil {
			return nil, fmt.Errorf("annonces: %w", err)
		}
		*b.dst = base
	}
	return r, nil
}

// Bind attaches the handlers, ready while the farm is (and the DVF reference, for
// biens-sous-cotes).
func (r *Routes) Bind(c *catalog.Catalog) error {
	farmReady := func() error {
		if r.farm == nil {
			return fmt.Errorf("annonces: no browser farm in this process")
		}
		return r.farm.Ready()
	}
	errs := []error{
		c.Bind("fr."+r.names.ClassifiedsA, r.searchAds, farmReady),
		c.Bind("fr."+r.names.ListingsB, r.listingsRoute, farmReady),
		c.Bind("fr.immo", r.immo, farmReady),
	}
	if r.ref != nil {
		errs = append(errs, c.Bind("fr.biens-sous-cotes", r.sousCotes, func() error { return errors.Join(farmReady(), r.ref.ReferenceReady()) }))
	}
	return errors.Join(errs...)
}

// load runs the browser job and turns what is not the site's page into an error.
func (r *Routes) load(ctx context.Context, free bool, site, target string) (*browserfarm.Result, error) {
	s := browserfarm.Site{Party: site, Noun: site + " site"}
	res, err := r.farm.Do(ctx, browserfarm.Task{URL: target, Free: free, Site: &s})
	if err != nil {
		return nil, err
	}
	if err := browserfarm.SitePage(res, s, Blocked(res), "page", target); err != nil {
		return nil, err
	}
	return res, nil
}

// Blocked names the block page a result is, "" when it is a real page: DataDome's captcha
// (its iframe and script come from captcha-delivery.com; a page that is only that shell, as
// the classifieds site answers a robot), or any vendor challenge the farm's detector knows.
func Blocked(res *browserfarm.Result) string {
	if strings.Contains(res.HTML, "captcha-delivery.com") && !strings.Contains(res.HTML, "__NEXT_DATA__") {
		return "a captcha (DataDome, captcha-delivery.com)"
	}
	if ch := res.Challenge(); ch != nil {
		return fmt.Sprintf("an anti-bot challenge (%s; %s)", ch.Vendor, ch.Signal)
	}
	return ""
}

// readPages reads up to pages result pages of the search u (its page parameter set from the
// second on) and keeps the ads keep accepts, until want are kept; it answers the ads and the
// pages read. A later page failing shortens the list; the first failing is the error.
func (r *Routes) readPages(ctx context.Context, free bool, u *url.URL, pages, want int, keep func(rawAd) bool) ([]rawAd, int, string, error) {
	var out []rawAd
	seen := map[string]bool{}
	from := ""
	read := 0
	for page := 1; page <= pages && len(out) < want; page++ {
		pu := *u
		if page > 1 {
			q := pu.Query()
			q.Set("page", fmt.Sprint(page))
			pu.RawQuery = q.Encode()
		}
		res, err := r.load(ctx, free, ClassifiedsName, pu.String())
		if err != nil {
			if page > 1 {
				break
			}
			return nil, 0, "", err
		}
		doc, err := extract.Parse(res.HTML)
		if err != nil {
			return nil, 0, "", fmt.Errorf("annonces: parse rendered html: %w", err)
		}
		sp, ok, err := readSearch(doc)
		if err != nil {
			return nil, 0, "", &apierr.Error{Code: apierr.CodeUpstream, Upstream: ClassifiedsName, Message: err.Error() + "; nothing was charged"}
		}
		if !ok {
			if page > 1 {
				break
			}
			return nil, 0, "", &apierr.Error{Code: apierr.CodeUpstream, Upstream: ClassifiedsName,
				Message: "the classifieds site answered a page without a result list (neither its __NEXT_DATA__ state nor ad cards: its layout may have changed); nothing was charged"}
		}
		read, from = page, sp.from
		found := 0
		for _, a := range sp.ads {
			id := a.ListID.String()
			if seen[id] {
				continue
			}
			seen[id] = true
			found++
			if keep(a) && len(out) < want {
				out = append(out, a)
			}
		}
		// A page without new ads, or the site's last page, ends the reading.
		if found == 0 || (sp.maxPages > 0 && page >= sp.maxPages) {
			break
		}
	}
	return out, read, from, nil
}

// locations is the site's location filter: "City_cp", the postal code or the city alone.
func locations(city, cp string) string {
	switch {
	case city != "" && cp != "":
		return city + "_" + cp
	case cp != "":
		return cp
	}
	return city
}

// Answer of /v1/fr/<classifieds_a>.
type Answer struct {
	Source    string `json:"source"` // the site's host
	Query     Query  `json:"query"`
	Ads       []Ad   `json:"ads"`
	Count     int    `json:"count"`
	PagesRead int    `json:"pages_read"`
	ReadFrom  string `json:"read_from"` // __NEXT_DATA__ (the page's own JSON state) or markup
	URL       string `json:"url"`
	Method    string `json:"method"`
}

// Query echoes what was searched.
type Query struct {
	Text     string `json:"text,omitempty"`
	Category string `json:"category,omitempty"`
	City     string `json:"city,omitempty"`
	Zipcode  string `json:"zipcode,omitempty"`
	Limit    int64  `json:"limit,omitempty"`
}

const adsMethod = "Read from the classifieds site's own search page in a real browser on the appliance's exit: the page's Next.js state " +
	"(__NEXT_DATA__, props.pageProps.searchData.ads: the ad objects of the site's own finder), the visible ad cards only when it is missing. " +
	"Prices in euros, dates in French time; attributes are the ad's labelled characteristics. Captcha and block pages are reported (502), never bypassed."

func (r *Routes) searchAds(ctx context.Context, req *catalog.Request) (any, error) {
	q := Query{Text: strings.TrimSpace(req.Args.Str("text")), Category: req.Args.Str("category"), City: strings.TrimSpace(req.Args.Str("city")),
		Zipcode: req.Args.Str("zipcode"), Limit: req.Args.Int("limit")}
	u := r.classifieds.JoinPath("recherche")
	v := url.Values{"text": {q.Text}}
	if q.Category != "" {
		v.Set("category", q.Category)
	}
	if loc := locations(q.City, q.Zipcode); loc != "" {
		v.Set("locations", loc)
	}
	u.RawQuery = v.Encode()
	ads, read, from, err := r.readPages(ctx, req.Free, u, maxPages, int(q.Limit), func(rawAd) bool { return true })
	if err != nil {
		return nil, err
	}
	ans := &Answer{Source: r.classifieds.Host, Query: q, Ads: []Ad{}, PagesRead: read, ReadFrom: from, URL: u.String(), Method: adsMethod}
	for _, a := range ads {
		ans.Ads = append(ans.Ads, toAd(a, r.classifieds.String()))
	}
	ans.Count = len(ans.Ads)
	if ans.Count == 0 {
		return nil, apierr.NotFound("no classified ad matches %q", q.Text)
	}
	return ans, nil
}
