package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/browserfarm"
	"github.com/peage/appliance/browserfarm/extract"
	"github.com/peage/appliance/browserfarm/extract/htmlcharset"
	"github.com/peage/appliance/internal/egress"
)

// Unblock is the answer of /v1/unblock.
type Unblock struct {
	URL      string `json:"url"`
	FinalURL string `json:"final_url"`
	Status   int    `json:"status"`
	// Country is what the residential exit showed at its last check (proxyd); null when
	// no exit check runs beside the farm or it could not be read.
	Country   *string `json:"country"`
	Rendered  bool    `json:"rendered"`
	Format    string  `json:"format"`
	Title     string  `json:"title"`
	Content   string  `json:"content"`
	Extractor string  `json:"extractor,omitempty"`
}

// unblock fetches with a real browser (render=true, the default) whose fingerprint is a plain
// desktop Chrome on Linux in French, or with a plain HTTP client (render=false). It leaves
// from this box's residential French line, which is the only country served. A captcha or
// challenge page is reported as an error naming the vendor; it is never solved or bypassed.
func (r *Routes) unblock(ctx context.Context, req *catalog.Request) (any, error) {
	country, err := r.exitCountry(ctx, req.Args.Str("country"))
	if err != nil {
		return nil, err
	}
	format := req.Args.Str("format")
	if format == "" {
		format = "markdown"
	}
	render := true
	if req.Args.Has("render") {
		render = req.Args.Bool("render")
	}
	var p *page
	if render {
		t := task(req)
		t.Layout = format != "html" && format != "text" // markdown is read by contentOf
		t.ServerHTML = t.Layout
		p, err = r.load(ctx, t, acceptText)
	} else {
		p, err = r.fetch(ctx, req.Args.Str("url"))
	}
	if err != nil {
		return nil, err
	}
	out := Unblock{URL: req.Args.Str("url"), FinalURL: p.res.Landed(), Status: p.res.Status, Country: country,
		Rendered: render, Format: format, Title: p.res.Title}
	switch format {
	case "html":
		out.Content = p.res.HTML
	case "text":
		out.Content = strings.TrimSpace(p.res.Text)
	default:
		c, err := contentOf(p)
		if err != nil {
			return nil, err
		}
		out.Content, out.Extractor = c.Markdown, extractorOf(c)
		if out.Title == "" {
			out.Title = c.Title
		}
	}
	return out, nil
}

// maxFetch bounds a plain fetch's body.
const maxFetch = 10 << 20

// fetch gets the page without a browser through the egress policy (every redirect hop is
// dialled through it) and shapes the answer like a browser result.
func (r *Routes) fetch(ctx context.Context, u string) (*page, error) {
	if r.policy == nil {
		return nil, apierr.Unavailable("plain fetch is not configured")
	}
	client := &http.Client{Transport: r.policy.Transport(), Timeout: 30 * time.Second,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return errors.New("more than 10 redirects")
			}
			return nil
		}}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, apierr.BadParam("url", "url cannot be requested: %v", err)
	}
	hreq.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36")
	hreq.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	hreq.Header.Set("Accept-Language", "fr-FR,fr;q=0.9,en-US;q=0.8,en;q=0.7")
	resp, err := client.Do(hreq)
	if err != nil {
		var b *egress.Blocked
		if errors.As(err, &b) {
			return nil, &apierr.Error{Code: apierr.CodeBadParam, Param: "url", Cause: err,
				Message: fmt.Sprintf("url leads to %s, which the egress policy refuses: %s", b.Host, b.Reason)}
		}
		return nil, apierr.Upstream("target", err, "the page could not be fetched")
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxFetch+1))
	if err != nil {
		return nil, apierr.Upstream("target", err, "the page could not be read")
	}
	if len(body) > maxFetch {
		return nil, apierr.TooLarge("the page is larger than %d bytes", maxFetch)
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	text, enc := htmlcharset.DecodeHTML(body, resp.Header.Get("Content-Type"))
	res := &browserfarm.Result{URL: u, FinalURL: resp.Request.URL.String(), Status: resp.StatusCode,
		ContentType: strings.ToLower(ct), Header: map[string]string{}, HTML: text, Charset: enc.Name, RetrievedAt: time.Now().UTC()}
	for k := range resp.Header {
		res.Header[strings.ToLower(k)] = resp.Header.Get(k)
	}
	doc, err := extract.Parse(res.HTML)
	if err != nil {
		return nil, fmt.Errorf("web: parse fetched html: %w", err)
	}
	res.Title = extract.Normalise(doc.Find("title").First().Text())
	body2 := doc.Find("body").Clone()
	body2.Find("script, style, noscript, template").Remove()
	res.Text = strings.TrimSpace(body2.Text())
	if res.ContentType == "text/plain" {
		res.Text = res.HTML
	}
	if err := judge(res, acceptText); err != nil {
		return nil, err
	}
	return &page{res: res, doc: doc, fetched: true}, nil
}

// exitCountry reads the exit's country from the exit check. An exit that shows another
// country than the one asked for is a 503 before the page is loaded (nothing charged); an
// exit that cannot be read is said (null), not assumed.
func (r *Routes) exitCountry(ctx context.Context, want string) (*string, error) {
	if r.ExitCountry == nil {
		return nil, nil
	}
	c, err := r.ExitCountry(ctx)
	if err != nil || c == "" {
		return nil, nil
	}
	c = strings.ToLower(c)
	if want != "" && c != strings.ToLower(want) {
		return nil, apierr.Unavailable("the residential exit shows country %q, not %q; nothing was charged", c, want)
	}
	return &c, nil
}
