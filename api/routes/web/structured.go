package web

import (
	"context"
	"net/url"
	"time"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/browserfarm"
	"github.com/peage/appliance/browserfarm/extract"
)

// Links is the answer of /v1/links.
type Links struct {
	URL      string         `json:"url"`
	FinalURL string         `json:"final_url"`
	Count    int            `json:"count"`
	Internal []extract.Link `json:"internal"`
	External []extract.Link `json:"external"`
}

func (r *Routes) links(ctx context.Context, req *catalog.Request) (any, error) {
	p, err := r.load(ctx, task(req), acceptHTML)
	if err != nil {
		return nil, err
	}
	in, ex := extract.Links(p.doc, p.res.Landed())
	return Links{URL: req.Args.Str("url"), FinalURL: p.res.Landed(), Count: len(in) + len(ex), Internal: in, External: ex}, nil
}

// Meta is the answer of /v1/meta.
type Meta struct {
	URL      string `json:"url"`
	FinalURL string `json:"final_url"`
	extract.Meta
}

func (r *Routes) meta(ctx context.Context, req *catalog.Request) (any, error) {
	p, err := r.load(ctx, task(req), acceptHTML)
	if err != nil {
		return nil, err
	}
	m := extract.PageMeta(p.doc, p.res.Landed())
	if m.Title == "" {
		m.Title = p.res.Title
	}
	if m.Lang == "" {
		m.Lang = p.res.Lang
	}
	return Meta{URL: req.Args.Str("url"), FinalURL: p.res.Landed(), Meta: m}, nil
}

// Tables is the answer of /v1/web/tables.
type Tables struct {
	URL        string          `json:"url"`
	TableCount int             `json:"table_count"`
	Tables     []extract.Table `json:"tables"`
}

func (r *Routes) tables(ctx context.Context, req *catalog.Request) (any, error) {
	p, err := r.load(ctx, task(req), acceptHTML)
	if err != nil {
		return nil, err
	}
	t := extract.Tables(p.doc)
	return Tables{URL: req.Args.Str("url"), TableCount: len(t), Tables: t}, nil
}

// JSONLD is the answer of /v1/web/jsonld.
type JSONLD struct {
	URL         string            `json:"url"`
	JSONLDCount int               `json:"jsonld_count"`
	Types       []string          `json:"types"`
	JSONLD      []any             `json:"jsonld"`
	OpenGraph   map[string]string `json:"open_graph"`
}

func (r *Routes) jsonld(ctx context.Context, req *catalog.Request) (any, error) {
	p, err := r.load(ctx, task(req), acceptHTML)
	if err != nil {
		return nil, err
	}
	blocks, types := extract.JSONLD(p.doc)
	base, _ := url.Parse(p.res.Landed())
	return JSONLD{URL: req.Args.Str("url"), JSONLDCount: len(blocks), Types: types, JSONLD: blocks,
		OpenGraph: extract.OpenGraph(p.doc, base)}, nil
}

// Contacts is the answer of /v1/web/contacts.
type Contacts struct {
	URL string `json:"url"`
	extract.Contacts
}

func (r *Routes) contacts(ctx context.Context, req *catalog.Request) (any, error) {
	p, err := r.load(ctx, task(req), acceptHTML)
	if err != nil {
		return nil, err
	}
	return Contacts{URL: req.Args.Str("url"), Contacts: extract.FindContacts(p.doc, p.res.Text, p.res.Landed(), r.Region)}, nil
}

// Prices is the answer of /v1/web/prices.
type Prices struct {
	URL             string          `json:"url"`
	StructuredOffer *extract.Offer  `json:"structured_offer"`
	PriceCount      int             `json:"price_count"`
	Prices          []extract.Price `json:"prices"`
}

func (r *Routes) prices(ctx context.Context, req *catalog.Request) (any, error) {
	p, err := r.load(ctx, task(req), acceptHTML)
	if err != nil {
		return nil, err
	}
	offer, prices := extract.Prices(p.doc, p.res.Text)
	return Prices{URL: req.Args.Str("url"), StructuredOffer: offer, PriceCount: len(prices), Prices: prices}, nil
}

// Changed is the answer of /v1/web/changed.
type Changed struct {
	URL           string `json:"url"`
	Changed       bool   `json:"changed"`
	Baseline      bool   `json:"baseline"` // true when no since_sha256 was given
	SinceSHA256   string `json:"since_sha256,omitempty"`
	ContentSHA256 string `json:"content_sha256"`
	ContentChars  int    `json:"content_chars"`
	CheckedAt     string `json:"checked_at"`
}

// changed hashes the normalised main content, not the raw HTML, so re-rendered markup,
// rotating ads and script nonces do not count as a change.
func (r *Routes) changed(ctx context.Context, req *catalog.Request) (any, error) {
	p, err := r.load(ctx, contentTask(req), acceptText)
	if err != nil {
		return nil, err
	}
	c, err := contentOf(p)
	if err != nil {
		return nil, err
	}
	sum, chars := extract.Hash(c.Markdown)
	since := req.Args.Str("since_sha256")
	return Changed{URL: req.Args.Str("url"), Changed: since != "" && since != sum, Baseline: since == "",
		SinceSHA256: since, ContentSHA256: sum, ContentChars: chars,
		CheckedAt: r.now().UTC().Format(time.RFC3339)}, nil
}

// Headings is the answer of /v1/web/headings.
type Headings struct {
	URL      string            `json:"url"`
	Count    int               `json:"count"`
	Headings []extract.Heading `json:"headings"`
}

func (r *Routes) headings(ctx context.Context, req *catalog.Request) (any, error) {
	p, err := r.load(ctx, task(req), acceptHTML)
	if err != nil {
		return nil, err
	}
	h := extract.Headings(p.doc)
	return Headings{URL: req.Args.Str("url"), Count: len(h), Headings: h}, nil
}

// Forms is the answer of /v1/web/forms.
type Forms struct {
	URL       string         `json:"url"`
	FormCount int            `json:"form_count"`
	Forms     []extract.Form `json:"forms"`
	Submitted bool           `json:"submitted"` // always false: forms are read, never sent
}

func (r *Routes) forms(ctx context.Context, req *catalog.Request) (any, error) {
	p, err := r.load(ctx, task(req), acceptHTML)
	if err != nil {
		return nil, err
	}
	f := extract.Forms(p.doc, p.res.Landed())
	return Forms{URL: req.Args.Str("url"), FormCount: len(f), Forms: f}, nil
}

// Images is the answer of /v1/web/images.
type Images struct {
	URL         string              `json:"url"`
	ImageCount  int                 `json:"image_count"`
	Images      []browserfarm.Image `json:"images"`
	SocialImage string              `json:"social_image"`
}

func (r *Routes) images(ctx context.Context, req *catalog.Request) (any, error) {
	t := task(req)
	t.Images = true
	p, err := r.load(ctx, t, acceptHTML)
	if err != nil {
		return nil, err
	}
	imgs := []browserfarm.Image{}
	seen := map[string]bool{}
	for _, im := range p.res.Images {
		if im.Src == "" || seen[im.Src] {
			continue
		}
		seen[im.Src] = true
		imgs = append(imgs, im)
	}
	return Images{URL: req.Args.Str("url"), ImageCount: len(imgs), Images: imgs,
		SocialImage: extract.SocialImage(p.doc, p.res.Landed())}, nil
}

// Navigation is the answer of /v1/web/navigation.
type Navigation struct {
	URL    string         `json:"url"`
	Header []extract.Zone `json:"header"`
	Nav    []extract.Zone `json:"nav"`
	Footer []extract.Zone `json:"footer"`
}

func (r *Routes) navigation(ctx context.Context, req *catalog.Request) (any, error) {
	p, err := r.load(ctx, task(req), acceptHTML)
	if err != nil {
		return nil, err
	}
	out := Navigation{URL: req.Args.Str("url"), Header: []extract.Zone{}, Nav: []extract.Zone{}, Footer: []extract.Zone{}}
	for _, z := range extract.Navigation(p.doc, p.res.Landed()) {
		switch z.Zone {
		case "header":
			out.Header = append(out.Header, z)
		case "nav":
			out.Nav = append(out.Nav, z)
		case "footer":
			out.Footer = append(out.Footer, z)
		}
	}
	return out, nil
}
