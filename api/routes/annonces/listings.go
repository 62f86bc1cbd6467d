package annonces

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"strings"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream/wire"
	"github.com/peage/appliance/browserfarm/extract"
)

// The property-listings site of /v1/fr/<listings_b> (Bien'ici) is a single-page application:
// its pages draw the listings from its own JSON API, which the browser reads the same way
// (the structured data is the whole answer; there is no markup to fall back on). A search is
// two reads: the place service turns the postal code (or city) into the site's zone ids, then
// the search service answers the listings of those zones.

// ListingsName and ListingsPlacesName are the registry rows of the listings site: its search
// service (www) and its place service (res); upstream.override.<name>.base_url moves them.
const (
	ListingsName       = "listings"
	ListingsPlacesName = "listings-places"
)

// DefaultListings and DefaultListingsPlaces are the listings site's hosts when none is configured.
const (
	DefaultListings       = "https://www.bienici.com"
	DefaultListingsPlaces = "https://res.bienici.com"
)

// sitePlace is the place service's answer (one place; a list is read as its first).
type sitePlace struct {
	Name        string   `json:"name"`
	Type        string   `json:"type"`
	Insee       string   `json:"insee_code"`
	PostalCodes []string `json:"postalCodes"`
	ZoneIDs     []string `json:"zoneIds"`
}

// siteAds is the search service's answer; Ads is nil when the answer has no realEstateAds.
type siteAds struct {
	Ads []siteAd `json:"realEstateAds"`
}

type siteAd struct {
	ID              string     `json:"id"`
	AdType          string     `json:"adType"` // buy, rent
	PropertyType    string     `json:"propertyType"`
	PostalCode      string     `json:"postalCode"`
	City            string     `json:"city"`
	Price           wire.Float `json:"price"`
	Surface         wire.Float `json:"surfaceArea"`
	Rooms           wire.Int   `json:"roomsQuantity"`
	Title           string     `json:"title"`
	GeneratedTitle  string     `json:"generatedTitle"`
	PublicationDate string     `json:"publicationDate"`
}

// filters is the search service's filter object, in the order the site writes it.
type filters struct {
	Size          int            `json:"size"`
	From          int            `json:"from"`
	ShowAllModels bool           `json:"showAllModels"`
	FilterType    string         `json:"filterType"`
	PropertyType  []string       `json:"propertyType"`
	Page          int            `json:"page"`
	SortBy        string         `json:"sortBy"`
	SortOrder     string         `json:"sortOrder"`
	OnTheMarket   []bool         `json:"onTheMarket"`
	Zones         map[string]any `json:"zoneIdsByTypes"`
}

// readJSON loads target in the browser and decodes the JSON it shows into out. A page that is
// not JSON (a block page, an error page of the site) is a 502 saying so.
func (r *Routes) readJSON(ctx context.Context, free bool, site, target string, out any) error {
	res, err := r.load(ctx, free, site, target)
	if err != nil {
		return err
	}
	body := strings.TrimSpace(res.Text)
	if doc, err := extract.Parse(res.HTML); err == nil {
		if pre := strings.TrimSpace(doc.Find("pre").First().Text()); pre != "" {
			body = pre
		}
	}
	if !json.Valid([]byte(body)) {
		return &apierr.Error{Code: apierr.CodeUpstream, Upstream: site,
			Message: fmt.Sprintf("the %s site answered a page instead of its JSON (%q); nothing was charged", site, truncate(res.Title, 80))}
	}
	if err := json.Unmarshal([]byte(body), out); err != nil {
		return &apierr.Error{Code: apierr.CodeUpstream, Upstream: site, Message: fmt.Sprintf("the %s site's JSON is not the shape expected: %v; nothing was charged", site, err)}
	}
	return nil
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// zones asks the place service for the zone ids of cp (or city).
func (r *Routes) zones(ctx context.Context, free bool, city, cp string) (sitePlace, error) {
	u := r.places.JoinPath("place.json")
	u.RawQuery = url.Values{"q": {nonEmpty(cp, city)}}.Encode()
	var raw json.RawMessage
	if err := r.readJSON(ctx, free, ListingsPlacesName, u.String(), &raw); err != nil {
		return sitePlace{}, err
	}
	var ps wire.List[sitePlace]
	if err := json.Unmarshal(raw, &ps); err != nil || len(ps) == 0 || len(ps[0].ZoneIDs) == 0 {
		return sitePlace{}, apierr.NotFound("the listings site knows no place %q", nonEmpty(cp, city))
	}
	return ps[0], nil
}

// listingsSearch reads the listings site's listings of the place for transaction, at most
// want, with what was left out by reason.
func (r *Routes) listingsSearch(ctx context.Context, free bool, city, cp, transaction string, want int) ([]Listing, map[string]int, Site, error) {
	site := Site{Site: r.listings.Host, ReadFrom: "JSON API (realEstateAds.json)"}
	p, err := r.zones(ctx, free, city, cp)
	if err != nil {
		return nil, nil, site, err
	}
	f := filters{Size: want, FilterType: "buy", PropertyType: []string{"house", "flat"}, Page: 1, SortBy: "relevance", SortOrder: "desc",
		OnTheMarket: []bool{true}, Zones: map[string]any{"zoneIds": p.ZoneIDs}}
	if transaction == "location" {
		f.FilterType = "rent"
	}
	fj, _ := json.Marshal(f)
	u := r.listings.JoinPath("realEstateAds.json")
	u.RawQuery = url.Values{"filters": {string(fj)}}.Encode()
	site.URL = u.String()
	var ans siteAds
	if err := r.readJSON(ctx, free, ListingsName, u.String(), &ans); err != nil {
		return nil, nil, site, err
	}
	if ans.Ads == nil {
		// Not "no listing": the answer is not the search service's (its API may have changed).
		return nil, nil, site, &apierr.Error{Code: apierr.CodeUpstream, Upstream: ListingsName,
			Message: "the listings site's search answer has no realEstateAds (its API may have changed); nothing was charged"}
	}
	site.PagesRead, site.Status = 1, "ok"
	out := map[string]int{}
	ls := []Listing{}
	for _, a := range ans.Ads {
		l := siteListing(a, r.listings, transaction)
		if !inPlace(l, city, cp) {
			out["autre_lieu"]++
			continue
		}
		if len(ls) < want {
			ls = append(ls, l)
		}
	}
	return ls, out, site, nil
}

// siteListing is the answer's form of a listings-site ad.
func siteListing(a siteAd, base *url.URL, transaction string) Listing {
	l := Listing{ID: a.ID, Source: base.Host, Transaction: transaction, Postcode: a.PostalCode, City: a.City,
		Title: nonEmpty(a.Title, a.GeneratedTitle), Date: a.PublicationDate, URL: base.JoinPath("annonce", a.ID).String(),
		Price: a.Price.Ptr(), SurfaceM2: a.Surface.Ptr(), Type: a.PropertyType}
	switch a.PropertyType {
	case "flat":
		l.Type = "appartement"
	case "house":
		l.Type = "maison"
	}
	if a.Rooms.Valid && a.Rooms.V > 0 {
		n := int(a.Rooms.V)
		l.Rooms = &n
	}
	if l.Price != nil && l.SurfaceM2 != nil && *l.SurfaceM2 > 0 && *l.Price > 0 {
		m2 := math.Round(*l.Price / *l.SurfaceM2)
		l.PriceM2 = &m2
	}
	// The site dates unknown publications at the Unix epoch.
	if strings.HasPrefix(l.Date, "1970-01-01") {
		l.Date = ""
	}
	return l
}

const listingsMethod = "Read from the property-listings site's own JSON API in a real browser on the appliance's exit (the data its pages draw): " +
	"the place service gives the zone ids of the postal code or city, the search service the listings of those zones. Listings of another " +
	"postal code than the one asked are left out. Price per m² = asking price (fees included) / surface, rounded; the median is over the " +
	"listings having both. Block pages are reported (502), never bypassed."

func (r *Routes) listingsRoute(ctx context.Context, req *catalog.Request) (any, error) {
	city, cp := strings.TrimSpace(req.Args.Str("city")), req.Args.Str("cp")
	tr := nonEmpty(req.Args.Str("type"), "achat")
	ls, out, site, err := r.listingsSearch(ctx, req.Free, city, cp, tr, int(req.Args.Int("max")))
	if err != nil {
		return nil, err
	}
	return listingsAnswer(city, cp, tr, ls, out, []Site{site}, listingsMethod)
}
