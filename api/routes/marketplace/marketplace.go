// Package marketplace serves /v1/<marketplace>: a product of the marketplace by ASIN or
// product URL, or a search (up to 60 products), read through the browser farm from the
// marketplace's own pages, on the box's own (residential) exit. The page's stable element ids
// and its schema.org data are read; nothing is bypassed: a captcha or robot-check page is a
// 502 naming it, and nothing is charged.
package marketplace

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/browserfarm"
	"github.com/peage/appliance/browserfarm/extract"
)

// Name is the upstream name in errors and in the registry (its base URL is the marketplace's
// host: upstream.override.marketplace.base_url).
const Name = "marketplace"

// DefaultBase is the marketplace the route reads when none is configured.
const DefaultBase = "https://www.amazon.com"

// Search bounds: the answer holds at most MaxResults products, read from at most maxPages
// result pages (one browser load each).
const (
	MaxResults = 60
	maxPages   = 3
)

// Farm is what the route needs of the browser pool.
type Farm interface {
	Do(ctx context.Context, t browserfarm.Task) (*browserfarm.Result, error)
	Ready() error
}

// Parts are the route's collaborators.
type Parts struct {
	Farm Farm
	// Base is the marketplace's root URL (scheme and host); "" is DefaultBase.
	Base string
	// Names are the neutral path segments: the route is /v1/<Marketplace>.
	Names catalog.Names
}

// Routes holds the handler.
type Routes struct {
	farm Farm
	base *url.URL
	id   string
}

// With builds the route.
func With(d Parts) (*Routes, error) {
	base, err := browserfarm.SiteBase(d.Base, DefaultBase)
	if err != nil {
		return nil, fmt.Errorf("marketplace: %w", err)
	}
	return &Routes{farm: d.Farm, base: base, id: d.Names.Marketplace}, nil
}

// Bind attaches the handler, ready while the farm is.
func (r *Routes) Bind(c *catalog.Catalog) error {
	ready := func() error {
		if r.farm == nil {
			return fmt.Errorf("marketplace: no browser farm in this process")
		}
		return r.farm.Ready()
	}
	return errors.Join(c.Bind(r.id, r.handle, ready), c.BindCheck(r.id, r.checkURLHost))
}

// storefront matches the marketplace's storefront hosts, one per country.
var storefront = regexp.MustCompile(`^(www\.|smile\.|m\.)?amazon\.(com|ca|com\.mx|com\.br|co\.uk|ie|de|fr|it|es|nl|se|pl|com\.be|com\.tr|ae|sa|eg|in|co\.jp|sg|com\.au|co\.za)$`)

// checkURLHost refuses, before any 402, a product URL on another site than the marketplace:
// one of its storefronts when the route reads a storefront, else the configured host itself.
func (r *Routes) checkURLHost(args catalog.Args) error {
	raw := args.Str("url")
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return apierr.BadParam("url", "url must be a product page of the marketplace")
	}
	host := strings.ToLower(u.Hostname())
	if host == strings.ToLower(r.base.Hostname()) || storefront.MatchString(host) && storefront.MatchString(strings.ToLower(r.base.Hostname())) {
		return nil
	}
	return apierr.BadParam("url", "url must be a product page of the marketplace (%s or another of its storefronts), not of %s", r.base.Hostname(), host)
}

// Answer is the route's result.
type Answer struct {
	Source   string    `json:"source"` // the marketplace host the page came from
	Mode     string    `json:"mode"`   // product or search
	Query    string    `json:"query,omitempty"`
	Product  *Product  `json:"product"`  // the spec names it: null in search mode
	Products []Product `json:"products"` // null in product mode
	Count    int       `json:"count"`
	Pages    int       `json:"pages_read,omitempty"`
	URL      string    `json:"url"`
	Method   string    `json:"method"`
}

const method = "Read from the marketplace's own page in a real browser on the appliance's exit: the product page's element ids " +
	"(#productTitle, the price-to-pay block, #acrPopover, #acrCustomerReviewText, #bylineInfo, #landingImage), then its schema.org " +
	"Product data; search result cards by their data-asin. Captcha and robot-check pages are reported (502), never bypassed."

func (r *Routes) handle(ctx context.Context, req *catalog.Request) (any, error) {
	if q := strings.TrimSpace(req.Args.Str("q")); q != "" {
		return r.search(ctx, req, q)
	}
	target := r.base.JoinPath("dp", req.Args.Str("asin"))
	if raw := req.Args.Str("url"); raw != "" {
		u, err := url.Parse(raw)
		if err != nil || ASINOf(u) == "" {
			return nil, apierr.BadParam("url", "url must be a product page of the marketplace, with /dp/<ASIN> in its path")
		}
		target = u
	}
	res, err := r.load(ctx, req, target.String())
	if err != nil {
		return nil, err
	}
	doc, err := extract.Parse(res.HTML)
	if err != nil {
		return nil, fmt.Errorf("marketplace: parse rendered html: %w", err)
	}
	p := ParseProduct(doc, res.Landed())
	if p.ASIN == "" {
		if u, err := url.Parse(res.Landed()); err == nil {
			p.ASIN = ASINOf(u)
		}
	}
	if p.Title == "" {
		return nil, &apierr.Error{Code: apierr.CodeUpstream, Upstream: Name,
			Message: "the marketplace answered a page without product data (its layout may have changed); nothing was charged"}
	}
	return &Answer{Source: res.LandedHost(), Mode: "product", Product: &p, Count: 1, URL: res.Landed(), Method: method}, nil
}

func (r *Routes) search(ctx context.Context, req *catalog.Request, q string) (any, error) {
	ans := &Answer{Mode: "search", Query: q, Products: []Product{}, Method: method}
	seen := map[string]bool{}
	for page := 1; page <= maxPages && len(ans.Products) < MaxResults; page++ {
		u := r.base.JoinPath("s")
		v := url.Values{"k": {q}}
		if page > 1 {
			v.Set("page", strconv.Itoa(page))
		}
		u.RawQuery = v.Encode()
		res, err := r.load(ctx, req, u.String())
		if err != nil {
			if page > 1 && len(ans.Products) > 0 {
				break // the first pages were read; a later one failing shortens the list
			}
			return nil, err
		}
		doc, err := extract.Parse(res.HTML)
		if err != nil {
			return nil, fmt.Errorf("marketplace: parse rendered html: %w", err)
		}
		if page == 1 {
			ans.Source, ans.URL = res.LandedHost(), res.Landed()
		}
		ans.Pages = page
		found := 0
		for _, p := range ParseSearch(doc, r.base, MaxResults) {
			if seen[p.ASIN] || len(ans.Products) >= MaxResults {
				continue
			}
			seen[p.ASIN] = true
			ans.Products = append(ans.Products, p)
			found++
		}
		// A page without new results, or without a link to the next one, is the last.
		if found == 0 || doc.Find(".s-pagination-next:not(.s-pagination-disabled)").Length() == 0 {
			break
		}
	}
	ans.Count = len(ans.Products)
	if ans.Count == 0 {
		return nil, apierr.NotFound("no product of the marketplace matches %q", q)
	}
	return ans, nil
}

// load runs the browser job and turns what is not the marketplace's page into an error.
func (r *Routes) load(ctx context.Context, req *catalog.Request, target string) (*browserfarm.Result, error) {
	site := browserfarm.Site{Party: Name, Noun: "marketplace"}
	task := browserfarm.Task{URL: target, Free: req.Free}
	if req.Args.Str("url") == "" { // the caller's url: the farm's refusal names it
		task.Site = &site
	}
	res, err := r.farm.Do(ctx, task)
	if err != nil {
		return nil, err
	}
	if err := browserfarm.SitePage(res, site, Blocked(res), "product", target); err != nil {
		return nil, err
	}
	return res, nil
}

// Blocked names the block page a result is, "" when it is a real page: the marketplace's own
// robot check (its captcha form posts to /errors/validateCaptcha), its automated-access notice
// on a page with little else, or any vendor challenge the farm's detector knows.
func Blocked(res *browserfarm.Result) string {
	if strings.Contains(res.HTML, "/errors/validateCaptcha") {
		return "a captcha (robot check, form /errors/validateCaptcha)"
	}
	if strings.Contains(res.HTML, "api-services-support@amazon.com") && len([]rune(strings.TrimSpace(res.Text))) < 1500 {
		return "a block page (automated access notice)"
	}
	if ch := res.Challenge(); ch != nil {
		return fmt.Sprintf("an anti-bot challenge (%s; %s)", ch.Vendor, ch.Signal)
	}
	return ""
}
