// Package maps serves /v1/maps: the businesses a maps search lists (name, rating, category,
// address, map URL), and for the first detailsMax of them the phone, website and review
// count of their own place page. Google Maps is read through the browser farm on the box's
// own (residential) exit: the search page's results feed is scrolled until max places or
// the end of the list, the data each page embeds is read before its visible cards, and the
// place pages are read in parallel, on at most half the farm. Google's consent page and its
// "unusual traffic" page are reported (502, nothing charged), never bypassed.
package maps

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/browserfarm"
	"github.com/peage/appliance/browserfarm/extract"
	"github.com/peage/appliance/browserfarm/farmerr"
	"github.com/peage/appliance/internal/fanout"
)

// Name is the upstream name in errors and in the registry (its base URL is the maps site:
// upstream.override.maps.base_url).
const Name = "maps"

// DefaultBase is the maps site the route reads when none is configured.
const DefaultBase = "https://www.google.com"

// Limits of the spec: at most MaxResults businesses, details for at most MaxDetails.
const (
	MaxResults = 120
	MaxDetails = 60
)

// lang is the interface language asked of the maps (hl): categories and the feed's words
// come in French, the appliance's market.
const lang = "fr"

// detailsMargin is kept of the call's deadline after the place pages, to answer with what
// was read rather than time out.
const detailsMargin = 3 * time.Second

// Farm is what the route needs of the browser pool.
type Farm interface {
	Do(ctx context.Context, t browserfarm.Task) (*browserfarm.Result, error)
	Ready() error
}

// Parts are the route's collaborators.
type Parts struct {
	Farm Farm
	// Base is the maps site's root URL (scheme and host); "" is DefaultBase.
	Base string
}

// Routes holds the handler.
type Routes struct {
	farm     Farm
	base     *url.URL
	parallel int
}

// With builds the route.
func With(d Parts) (*Routes, error) {
	base, err := browserfarm.SiteBase(d.Base, DefaultBase)
	if err != nil {
		return nil, fmt.Errorf("maps: %w", err)
	}
	// The place pages read at once: half the farm when it tells its size, so that on a farm
	// of 4 browsers or more one call leaves the other half to the other routes' calls, and
	// never fewer than 2 (a smaller farm queues what it cannot run).
	parallel := 2
	if s, ok := d.Farm.(interface{ Stats() browserfarm.Stats }); ok {
		parallel = max(parallel, s.Stats().Size/2)
	}
	return &Routes{farm: d.Farm, base: base, parallel: parallel}, nil
}

// Bind attaches the handler, ready while the farm is.
func (r *Routes) Bind(c *catalog.Catalog) error {
	ready := func() error {
		if r.farm == nil {
			return errors.New("maps: no browser farm in this process")
		}
		return r.farm.Ready()
	}
	return c.Bind("maps", r.handle, ready)
}

// Place is one business of the answer.
type Place struct {
	Position   int      `json:"position"`
	Name       string   `json:"name"`
	Rating     *float64 `json:"rating"`
	Category   string   `json:"category"`
	Categories []string `json:"categories,omitempty"`
	Address    string   `json:"address"`
	MapURL     string   `json:"map_url"`
	PlaceID    string   `json:"place_id,omitempty"`
	Latitude   *float64 `json:"latitude,omitempty"`
	Longitude  *float64 `json:"longitude,omitempty"`
	// Phone, Website and ReviewCount come from the place's own page: null beyond detailsMax,
	// with details=false, or when that page could not be read (DetailsError says why).
	Phone        *string `json:"phone"`
	Website      *string `json:"website"`
	ReviewCount  *int64  `json:"review_count"`
	Details      string  `json:"details"` // read, failed or not_requested
	DetailsError string  `json:"details_error,omitempty"`
	// Source says where the feed's fields were read: the search page's embedded data, or
	// the result card alone (a place the feed loaded while scrolling).
	Source string `json:"source"`

	dataID   string // feature id "0x…:0x…", joining a card to the embedded data
	link     string // the place URL the embedded data gives
	fromCard bool
	phone    *string // read from embedded data; answered only from the place page
	website  *string
	reviews  *int64
}

// Answer is the route's result.
type Answer struct {
	Query      string  `json:"query"`
	Location   string  `json:"location,omitempty"`
	Source     string  `json:"source"` // the maps host the pages came from
	URL        string  `json:"url"`    // the search page read
	Count      int     `json:"count"`
	Businesses []Place `json:"businesses"`
	// FeedEnd says why the list stops where it does: "max" (the call's max was reached),
	// "end_of_list" (the maps said there is no more), "no_more_loaded" (scrolling brought
	// nothing new), "time_budget" (the page's time ran out first) or "single_place" (the
	// search opened one place's page).
	FeedEnd          string `json:"feed_end"`
	DetailsRequested int    `json:"details_requested"`
	DetailsRead      int    `json:"details_read"`
	Method           string `json:"method"`
}

const method = "Google Maps read in a real browser on the appliance's exit: the search page's results feed is scrolled until max " +
	"places or its end-of-list marker; each place's name, rating, category and address come from the data the page embeds " +
	"(window.APP_INITIALIZATION_STATE, the search answer) and, for places loaded while scrolling, from the result card; phone, " +
	"website and review count from each of the first detailsMax places' own page (its embedded place data), read in parallel. " +
	"Google's consent page and its unusual-traffic page are reported (502, nothing charged), never bypassed."

func (r *Routes) handle(ctx context.Context, req *catalog.Request) (any, error) {
	q := strings.TrimSpace(req.Args.Str("q"))
	if q == "" {
		return nil, apierr.BadParam("q", "q (what to look for) is required")
	}
	loc := strings.TrimSpace(req.Args.Str("location"))
	want := int(min(max(req.Args.Int("max"), 1), MaxResults))
	detailsMax := int(min(max(req.Args.Int("detailsMax"), 0), MaxDetails))
	if !req.Args.Bool("details") {
		detailsMax = 0
	}
	target := r.searchURL(q, loc)
	res, err := r.load(ctx, req, target.String(), &browserfarm.Scroll{
		Container: `div[role="feed"]`, Items: `div[role="feed"] a.hfpxzc`, Want: want, End: "span.HlvSq"})
	if err != nil {
		return nil, err
	}
	ans := &Answer{Query: q, Location: loc, Source: res.LandedHost(), URL: res.Landed(), Businesses: []Place{}, Method: method}
	places, feedEnd, err := r.feed(res, want)
	if err != nil {
		return nil, err
	}
	if len(places) == 0 {
		return nil, apierr.NotFound("the maps list no business for %q", strings.TrimSpace(q+" "+loc))
	}
	ans.FeedEnd = feedEnd
	for i := range places {
		places[i].Position = i + 1
		places[i].Details = "not_requested"
	}
	ans.DetailsRequested = min(detailsMax, len(places))
	if err := r.details(ctx, req, places[:ans.DetailsRequested]); err != nil {
		return nil, err
	}
	for _, p := range places[:ans.DetailsRequested] {
		if p.Details == "read" {
			ans.DetailsRead++
		}
	}
	ans.Businesses, ans.Count = places, len(places)
	return ans, nil
}

// searchURL is the maps search for "q location": /maps/search/<words joined by +>?hl=.
func (r *Routes) searchURL(q, loc string) *url.URL {
	words := strings.Fields(q + " " + loc)
	raw := make([]string, len(words))
	for i, w := range words {
		raw[i] = strings.ReplaceAll(url.PathEscape(w), "+", "%2B")
	}
	u := *r.base
	u.Path = "/maps/search/" + strings.Join(words, "+")
	u.RawPath = "/maps/search/" + strings.Join(raw, "+")
	u.RawQuery = url.Values{"hl": {lang}}.Encode()
	return &u
}

// feed reads the search page: the embedded search answer first, the feed's cards for what
// it does not hold (places loaded while scrolling) and for the place URLs.
func (r *Routes) feed(res *browserfarm.Result, want int) ([]Place, string, error) {
	doc, err := extract.Parse(res.HTML)
	if err != nil {
		return nil, "", fmt.Errorf("maps: parse rendered html: %w", err)
	}
	page, err := url.Parse(res.Landed())
	if err != nil {
		page = r.base
	}
	state := appState(res.HTML)
	data := searchData(state)
	cards := cardsOf(doc, page)
	if len(data) == 0 && len(cards) == 0 {
		// A search with one answer opens that place's page instead of a list.
		if p, ok := placeData(state); ok {
			p.MapURL = r.placeURL(p, page)
			p.Source = "embedded_data"
			return []Place{p}, "single_place", nil
		}
		if state == nil && doc.Find(`div[role="feed"]`).Length() == 0 {
			return nil, "", &apierr.Error{Code: apierr.CodeUpstream, Upstream: Name,
				Message: "the maps answered a page with neither its embedded data nor a results feed (its layout may have changed); nothing was charged"}
		}
		return nil, "", nil
	}
	byID := map[string]int{}
	for i, p := range data {
		if p.dataID != "" {
			byID[p.dataID] = i
		}
	}
	used := make([]bool, len(data))
	var out []Place
	for _, c := range cards {
		if i, ok := byID[c.dataID]; ok && c.dataID != "" && !used[i] {
			used[i] = true
			p := data[i]
			p.MapURL, p.Source = c.MapURL, "embedded_data"
			if p.PlaceID == "" {
				p.PlaceID = c.PlaceID
			}
			out = append(out, p)
			continue
		}
		c.Source = "card"
		out = append(out, c)
	}
	for i, p := range data {
		if !used[i] {
			p.MapURL, p.Source = r.placeURL(p, page), "embedded_data"
			out = append(out, p)
		}
	}
	for i := range out {
		out[i].MapURL = r.rebase(out[i].MapURL)
	}
	if len(out) >= want {
		return out[:want], "max", nil
	}
	end := "no_more_loaded" // the farm stopped at enough cards, yet fewer places were read
	if s := res.Scrolled; s != nil && s.Stop == "end" {
		end = "end_of_list"
	} else if s != nil && s.Stop == "budget" {
		end = "time_budget"
	}
	return out, end, nil
}

// placeURL is a place's URL when no card gives one: the embedded data's, else the maps'
// documented search by place id.
func (r *Routes) placeURL(p Place, page *url.URL) string {
	if p.link != "" {
		if u, err := page.Parse(p.link); err == nil {
			return u.String()
		}
	}
	u := *r.base
	u.Path, u.RawPath = "/maps/search/", ""
	v := url.Values{"api": {"1"}, "query": {p.Name}}
	if p.PlaceID != "" {
		v.Set("query_place_id", p.PlaceID)
	}
	u.RawQuery = v.Encode()
	return u.String()
}

// rebase puts a place URL on the configured maps host (the pages name www.google.com).
func (r *Routes) rebase(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == r.base.Host {
		return raw
	}
	if h := strings.ToLower(u.Hostname()); h != "google.com" && !strings.HasSuffix(h, ".google.com") {
		return raw
	}
	u.Scheme, u.Host = r.base.Scheme, r.base.Host
	return u.String()
}

// details reads the place pages of places in parallel (at most r.parallel at once) under
// the call's deadline less a margin. A place whose page fails says so in DetailsError; when
// none could be read the call fails with the first reason, and nothing is charged.
func (r *Routes) details(ctx context.Context, req *catalog.Request, places []Place) error {
	if len(places) == 0 {
		return nil
	}
	sem := make(chan struct{}, r.parallel)
	reads := make([]func(context.Context) error, len(places))
	for i := range places {
		reads[i] = func(dctx context.Context) error {
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-dctx.Done():
				return dctx.Err()
			}
			return r.detail(dctx, req, &places[i])
		}
	}
	errs := (&fanout.Runner{Margin: detailsMargin}).Go(ctx, reads...)
	var first error
	for i, err := range errs {
		if err == nil {
			places[i].Details = "read"
			continue
		}
		places[i].Details, places[i].DetailsError = "failed", reason(err)
		if first == nil {
			first = err
		}
	}
	if first != nil && !anyRead(places) {
		if ctx.Err() == nil && errors.Is(first, context.DeadlineExceeded) {
			return &apierr.Error{Code: apierr.CodeTimeout, Upstream: Name, Cause: first,
				Message: "no place page of the maps could be read within the call's deadline; nothing was charged"}
		}
		return first
	}
	return nil
}

func anyRead(places []Place) bool {
	for _, p := range places {
		if p.Details == "read" {
			return true
		}
	}
	return false
}

// detail reads one place's page and fills its phone, website and review count.
func (r *Routes) detail(ctx context.Context, req *catalog.Request, p *Place) error {
	target, err := url.Parse(p.MapURL)
	if err != nil {
		return fmt.Errorf("maps: bad place URL %q", p.MapURL)
	}
	if target.Query().Get("hl") == "" {
		v := target.Query()
		v.Set("hl", lang)
		target.RawQuery = v.Encode()
	}
	res, err := r.load(ctx, req, target.String(), nil)
	if err != nil {
		return err
	}
	got, ok := placeData(appState(res.HTML))
	if !ok {
		return &apierr.Error{Code: apierr.CodeUpstream, Upstream: Name,
			Message: "the place page carries no place data (its layout may have changed)"}
	}
	if p.dataID != "" && got.dataID != "" && got.dataID != p.dataID {
		return &apierr.Error{Code: apierr.CodeUpstream, Upstream: Name,
			Message: fmt.Sprintf("the place page shows another place (%s)", got.Name)}
	}
	p.Phone, p.Website, p.ReviewCount = got.phone, got.website, got.reviews
	if p.fromCard {
		// A card gives a short address and one category: the page's own data says more.
		p.Address, p.Categories = or(got.Address, p.Address), orList(got.Categories, p.Categories)
		if len(p.Categories) > 0 {
			p.Category = p.Categories[0]
		}
	}
	if p.Rating == nil {
		p.Rating = got.Rating
	}
	if p.PlaceID == "" {
		p.PlaceID = got.PlaceID
	}
	if p.Latitude == nil {
		p.Latitude, p.Longitude = got.Latitude, got.Longitude
	}
	return nil
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func orList(a, b []string) []string {
	if len(a) > 0 {
		return a
	}
	return b
}

// reason is an error's message for a place's DetailsError.
func reason(err error) string {
	if ae := apierr.Known(err); ae != nil {
		return ae.Message
	}
	if fe := farmerr.As(err); fe != nil {
		return fe.Message
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return "not read within the call's deadline"
	}
	return err.Error()
}

// load runs the browser job and turns what is not the maps' page into an error.
func (r *Routes) load(ctx context.Context, req *catalog.Request, target string, scroll *browserfarm.Scroll) (*browserfarm.Result, error) {
	site := browserfarm.Site{Party: Name, Noun: "maps"}
	res, err := r.farm.Do(ctx, browserfarm.Task{URL: target, Free: req.Free, Scroll: scroll, Site: &site})
	if err != nil {
		return nil, err
	}
	if err := browserfarm.SitePage(res, site, Blocked(res), "", target); err != nil {
		return nil, err
	}
	return res, nil
}

// Blocked names the wall a result is, "" when it is a maps page: Google's consent page
// (consent.google.com, or its consent form on a page without the maps' data), its
// "unusual traffic" page (google.com/sorry, its captcha form), or a challenge the farm's
// detector knows.
func Blocked(res *browserfarm.Result) string {
	u, _ := url.Parse(res.Landed())
	host, path := "", ""
	if u != nil {
		host, path = strings.ToLower(u.Hostname()), u.Path
	}
	hasData := strings.Contains(res.HTML, stateMarker)
	switch {
	case strings.HasPrefix(host, "consent."):
		return "Google's consent page (" + host + ")"
	case !hasData && strings.Contains(res.HTML, "consent.google.com/save"):
		return "Google's consent page (consent.google.com form)"
	case strings.HasPrefix(path, "/sorry/"):
		return `Google's "unusual traffic" page (` + host + `/sorry)`
	case !hasData && (strings.Contains(res.HTML, `id="captcha-form"`) || strings.Contains(res.HTML, "/sorry/image") ||
		strings.Contains(res.Text, "unusual traffic from your computer network")):
		return `Google's "unusual traffic" page (google.com/sorry captcha)`
	}
	if ch := res.Challenge(); ch != nil && !hasData {
		return fmt.Sprintf("an anti-bot challenge (%s; %s)", ch.Vendor, ch.Signal)
	}
	return ""
}
