package browserfarm

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"
	"github.com/peage/appliance/browserfarm/extract"
	"github.com/peage/appliance/browserfarm/extract/htmlcharset"
	"github.com/peage/appliance/browserfarm/farmerr"
	"github.com/peage/appliance/internal/egress"
	"github.com/ysmood/gson"
)

// Task is one page to load and what to take from it. The rendered HTML, the visible text,
// the title and the language are always returned.
type Task struct {
	URL        string
	Images     bool        // collect every image with its natural size
	Layout     bool        // read the page's layout signals (Result.Layout), for main-content extraction
	Screenshot *Screenshot // capture a PNG
	PDF        bool        // print an A4 PDF
	// Scroll scrolls a list that grows as it is scrolled before the page is read.
	Scroll *Scroll
	// ServerHTML also returns the main document as the server sent it (Result.ServerHTML),
	// for a reader that compares it with the rendered DOM.
	ServerHTML bool
	// Site is the route's own site when URL is the site's, not the caller's input (nil):
	// a refused target is then the site's failure.
	Site *Site
	// Free marks work nobody pays for: it runs within the pool's free share and every
	// waiting paid job is served before it.
	Free bool
}

// Screenshot options.
type Screenshot struct {
	FullPage bool
}

// Result is what the browser saw. The target's own HTTP status is reported, not judged:
// callers decide what a 404 means for their route.
type Result struct {
	URL         string            // as requested
	FinalURL    string            // after redirects and script navigation
	Status      int               // HTTP status of the main document
	ContentType string            // MIME type of the main document
	Header      map[string]string // main document response headers, lower-case names
	Redirects   []Redirect        // HTTP redirects of the main document, in order
	HTML        string            // serialised DOM after scripts ran
	Text        string            // visible text (innerText)
	Title       string
	Lang        string
	Images      []Image
	// Layout is what the browser knows of the page's boxes and no parser can tell, by
	// element index in document order; nil unless Task.Layout asked for it, or when the page
	// was not an HTML document.
	Layout *Layout
	// PNG is the screenshot; PageHeight is the page's full height in CSS pixels and
	// ShotHeight the captured one (smaller when the page was taller than the cap).
	PNG        []byte
	PageHeight int
	ShotHeight int
	PDF        []byte
	// Blocked lists the page's requests (sub-resources, frames, fetches) the egress policy refused.
	Blocked []BlockedRequest
	// LoadComplete is false when the window load event (images, late scripts) did not come
	// within the wait budget.
	LoadComplete bool
	// ReadAtDeadline says the page never finished (its document never ended, or it never
	// settled) and was read as it stood at the job's deadline: what it had rendered by then.
	ReadAtDeadline bool
	// Charset is the encoding the browser decoded the document with (document.characterSet).
	Charset string
	// ServerHTML is the main document as its server sent it, taken from the browser's network
	// layer and decoded by htmlcharset (BOM, header, declaration, detection), when
	// Task.ServerHTML asked for it; "" when the network layer kept none (a document that never
	// ended, one over its buffer, a document that is not HTML). ServerCharset is the encoding
	// that decoding decided: when it differs from Charset, the rendered DOM is mojibake.
	ServerHTML    string
	ServerCharset string
	RetrievedAt   time.Time
	Timings       Timings
	// Scrolled says how Task.Scroll ended; nil when the task asked for none.
	Scrolled *ScrollResult
}

// Landed is the URL the page was read at: the final one, after redirects and script
// navigation, else the one asked for.
func (r *Result) Landed() string {
	if r.FinalURL != "" {
		return r.FinalURL
	}
	return r.URL
}

// Misdecoded reports whether the browser decoded the document with another encoding than
// the one its bytes are in (ServerCharset), so the rendered text is mojibake.
func (r *Result) Misdecoded() bool {
	return r.ServerCharset != "" && r.Charset != "" && !htmlcharset.Same(r.ServerCharset, r.Charset)
}

// LandedHost is the host (and port) of Landed, "" when it does not parse.
func (r *Result) LandedHost() string {
	u, err := url.Parse(r.Landed())
	if err != nil {
		return ""
	}
	return u.Host
}

// Redirect is one hop of the main document.
type Redirect struct {
	URL    string `json:"url"`
	Status int    `json:"status"`
}

// Image is one <img> of the page.
type Image struct {
	Src           string `json:"src"`
	Alt           string `json:"alt"`
	Width         int    `json:"width"`
	Height        int    `json:"height"`
	DisplayWidth  int    `json:"display_width"`
	DisplayHeight int    `json:"display_height"`
}

// Layout lists, by index in document order (the <html> element is 0, as
// document.getElementsByTagName('*') counts), the outermost elements a reader does not see
// and the outermost ones pinned over the page (position fixed: cookie banners,
// bars, modals). Elements is the count of elements when the HTML was read, so a consumer can
// tell that its own parse of HTML lines up.
type Layout struct {
	Elements int   `json:"elements"`
	Hidden   []int `json:"hidden"`
	Pinned   []int `json:"pinned"`
}

// Timings of a job's stages.
type Timings struct {
	Queue, Navigate, Wait, Extract time.Duration
}

// errPageCrashed is the cancel cause when the renderer of the job's tab dies.
var errPageCrashed = errors.New("the page crashed its renderer")

// checkTarget applies the egress policy to the main URL before any browser work, so a
// forbidden target answers 400 naming the reason and never costs a browser slot.
func (f *Farm) checkTarget(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return farmerr.New(farmerr.Refused, "url must be an absolute http or https URL")
	}
	port := 80
	if u.Scheme == "https" {
		port = 443
	}
	if p := u.Port(); p != "" {
		port, err = strconv.Atoi(p)
		if err != nil {
			return farmerr.New(farmerr.Refused, "url has an invalid port")
		}
	}
	if _, err := f.policy.Resolve(ctx, u.Hostname(), port); err != nil {
		var b *egress.Blocked
		if errors.As(err, &b) {
			return &farmerr.Error{Kind: farmerr.Refused, Cause: err,
				Message: fmt.Sprintf("url is refused by the egress policy: %s is %s", u.Hostname(), b.Reason)}
		}
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
			return &farmerr.Error{Kind: farmerr.Refused, Cause: err,
				Message: fmt.Sprintf("url host %s does not exist (DNS)", u.Hostname())}
		}
		return farmerr.Page(farmerr.TargetParty, err, "could not resolve "+u.Hostname())
	}
	return nil
}

// Challenge is the anti-bot challenge the page is, nil for a real page (extract.DetectChallenge
// on the result's status, headers, title, markup and text).
func (r *Result) Challenge() *extract.Challenge {
	return extract.DetectChallenge(r.Status, r.Header, r.Title, r.HTML, r.Text)
}

// SiteBase is the root URL of a site a route reads through the farm: raw, or fallback when
// raw is "", without its trailing slash; anything but an http(s) URL with a host is an error.
func SiteBase(raw, fallback string) (*url.URL, error) {
	if raw == "" {
		raw = fallback
	}
	base, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("bad site URL %q", raw)
	}
	return base, nil
}

// Site is a route's own site, for a task whose target is the site's rather than the caller's
// input: a refusal of the target (no such host, the egress policy) is then a failure of the
// site, not a bad url of the caller's.
type Site struct {
	Party string // the site's name as the failed party: the route family's upstream name
	Noun  string // how messages name it: "marketplace" in "the marketplace could not be reached"
}

// unreachable is a refusal of the site's own target said as the site's failure; any other
// err is itself.
func (s *Site) unreachable(err error) error {
	if fe := farmerr.As(err); fe != nil && fe.Kind == farmerr.Refused {
		return &farmerr.Error{Kind: farmerr.PageFailed, Party: s.Party, Cause: err,
			Message: fmt.Sprintf("the %s could not be reached (%s); nothing was charged", s.Noun, fe.Message)}
	}
	return err
}

// SitePage is for a page read from a route's own site: a wall (blocked names it, with its
// article: "a captcha (…)", "" when there is none) or an HTTP error status is a failure of
// the site, said as "the <site> answered …"; a 404 is a not-found when missing names what the
// site then has no such of (a product, a page), else a failure too. nil when res is the page.
func SitePage(res *Result, site Site, blocked, missing, target string) error {
	switch {
	case blocked != "":
		return &farmerr.Error{Kind: farmerr.PageFailed, Party: site.Party,
			Message: fmt.Sprintf("the %s answered %s instead of its page; it is reported, not bypassed, and nothing was charged", site.Noun, blocked)}
	case res.Status == http.StatusNotFound && missing != "":
		return farmerr.New(farmerr.NotFound, fmt.Sprintf("the %s has no such %s (HTTP 404 at %s)", site.Noun, missing, target))
	case res.Status >= 400:
		return &farmerr.Error{Kind: farmerr.PageFailed, Party: site.Party,
			Message: fmt.Sprintf("the %s answered HTTP %d %s; nothing was charged", site.Noun, res.Status, http.StatusText(res.Status))}
	}
	return nil
}

// navWatch follows the main frame's document requests from CDP events.
type navWatch struct {
	frame proto.PageFrameID
	mu    sync.Mutex
	last  string // URL of the latest main-document request
	resp  *proto.NetworkResponse
	reqID proto.NetworkRequestID // of resp
	redir []Redirect
	// got is closed at the main document's first response. CDP events arrive on their own
	// goroutine, so Navigate can return before the response event has been handled.
	got     chan struct{}
	gotOnce sync.Once
}

func (n *navWatch) onRequest(e *proto.NetworkRequestWillBeSent) {
	if e.Type != proto.NetworkResourceTypeDocument || e.FrameID != n.frame {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if e.RedirectResponse != nil {
		n.redir = append(n.redir, Redirect{URL: e.RedirectResponse.URL, Status: e.RedirectResponse.Status})
	}
	n.last = e.Request.URL
}

func (n *navWatch) onResponse(e *proto.NetworkResponseReceived) {
	if e.Type != proto.NetworkResourceTypeDocument || e.FrameID != n.frame {
		return
	}
	n.mu.Lock()
	n.resp, n.reqID = e.Response, e.RequestID
	n.mu.Unlock()
	n.gotOnce.Do(func() { close(n.got) })
}

// awaitResponse waits for the main document's response event until ctx ends or at most d.
func (n *navWatch) awaitResponse(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-n.got:
	case <-ctx.Done():
	case <-t.C:
	}
}

func (n *navWatch) snapshot() (string, *proto.NetworkResponse, []Redirect) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.last, n.resp, append([]Redirect(nil), n.redir...)
}

// budgets splits the job's time: navigation and waiting share what is left after a reserve
// for reading the page (bigger when a screenshot or PDF must be made).
func budgets(deadline time.Time, t Task) (waitEnd time.Time) {
	total := time.Until(deadline)
	reserve := total / 5
	if t.Screenshot != nil || t.PDF {
		reserve = total / 3
	}
	reserve = min(max(reserve, 300*time.Millisecond), 10*time.Second)
	return deadline.Add(-reserve)
}

func (f *Farm) execute(s *slot, tb *tab, j *job) (*Result, error) {
	t := j.task
	ctx, cancel := context.WithTimeout(j.ctx, f.cfg.JobTimeout)
	defer cancel()
	ctx, crash := context.WithCancelCause(ctx)
	defer crash(nil)
	deadline, _ := ctx.Deadline()

	rec := &recorder{}
	s.proxy.setRecorder(rec)
	defer s.proxy.setRecorder(nil)

	res := &Result{URL: t.URL, RetrievedAt: time.Now().UTC()}
	page := tb.page.Context(ctx)
	nav := &navWatch{frame: page.FrameID, got: make(chan struct{})}
	reqs := newPageRequests(page.FrameID)
	wait := page.Context(ctx).EachEvent(
		func(e *proto.NetworkRequestWillBeSent) { nav.onRequest(e); reqs.onRequest(e) },
		nav.onResponse, reqs.onFinished, reqs.onFailed,
		func(*proto.InspectorTargetCrashed) bool { crash(errPageCrashed); return true })
	go wait()

	waitEnd := budgets(deadline, t)
	start := time.Now()
	navCtx, navCancel := context.WithDeadline(ctx, waitEnd)
	j.navigated = true
	navErr := page.Context(navCtx).Navigate(t.URL)
	navCancel()
	if navErr == nil {
		nav.awaitResponse(ctx, time.Until(waitEnd))
	} else {
		nav.awaitResponse(ctx, 200*time.Millisecond)
	}
	res.Timings.Navigate = time.Since(start)
	if err := f.navOutcome(ctx, navErr, nav, rec, res); err != nil {
		return nil, err
	}

	start = time.Now()
	waitErr := f.waitPage(ctx, page, reqs, waitEnd, res)
	if waitErr != nil && !heldToDeadline(waitErr) {
		return nil, cmp.Or(refusedNavigation(nav, rec, ""), waitErr)
	}
	if waitErr == nil && t.Scroll != nil {
		res.Scrolled = f.scroll(ctx, page, reqs, waitEnd, t.Scroll)
	}
	res.Timings.Wait = time.Since(start)

	start = time.Now()
	err := f.read(ctx, page, t, nav, res)
	if refused := refusedNavigation(nav, rec, res.FinalURL); refused != nil {
		return nil, refused
	}
	if waitErr != nil {
		// The page never finished within the wait budget: what it rendered by then is read
		// with the time kept for reading. Only a page that rendered nothing (no visible
		// text) or could not be read at all (a renderer stuck in a script) is the timeout.
		if err != nil || strings.TrimSpace(res.Text) == "" {
			return nil, waitErr
		}
		res.ReadAtDeadline = true
	} else if err != nil {
		return nil, err
	}
	res.Timings.Extract = time.Since(start)
	res.Blocked = rec.list()
	return res, nil
}

// browserErr classifies a failure of a browser call: a crash of the tab, the job's deadline,
// or a broken browser.
func (f *Farm) browserErr(ctx context.Context, err error, stage string) error {
	if errors.Is(context.Cause(ctx), errPageCrashed) {
		f.crashes.Add(1)
		return farmerr.Page(farmerr.TargetParty, errPageCrashed, "the page crashed the browser tab (renderer) while it loaded; nothing was charged")
	}
	if ctx.Err() != nil {
		return &farmerr.Error{Kind: farmerr.Timeout, Party: farmerr.TargetParty, Cause: err,
			Message: fmt.Sprintf("the page did not finish within the call's deadline (stage: %s)", stage)}
	}
	return &farmerr.Error{Kind: farmerr.Unavailable, Cause: err, Message: "the browser failed during the job (" + stage + "); nothing was charged, retry"}
}

// tab is a fresh incognito context with one prepared tab, used by exactly one job.
type tab struct {
	incog *rod.Browser
	page  *rod.Page
}

// newTab opens a fresh incognito context and a tab with the desktop fingerprint. Workers make
// the next one while idle, so a job does not wait for the renderer process to start.
func (f *Farm) newTab(in *instance) (*tab, error) {
	// The tab's objects must live on the instance's context: rod derives each page's session
	// from it, and a spent context would silently stop the page's event handling. A browser
	// that cannot open a tab in 10 s is broken, so the watchdog kills it.
	watchdog := time.AfterFunc(10*time.Second, in.kill)
	defer watchdog.Stop()
	incog, err := in.browser.Incognito()
	if err != nil {
		return nil, err
	}
	tb := &tab{incog: incog}
	page, err := incog.Page(proto.TargetCreateTarget{URL: "about:blank"})
	if err != nil {
		f.dispose(in, tb)
		return nil, err
	}
	if err := f.preparePage(page, in); err != nil {
		f.dispose(in, tb)
		return nil, err
	}
	tb.page = page
	return tb, nil
}

// dispose closes the tab's incognito context with everything it held (cookies, storage,
// cache, service workers), on its own short deadline since the job's may be spent.
func (f *Farm) dispose(in *instance, tb *tab) {
	if tb == nil || in.dead() {
		return // nothing to dispose of, and calls on a dead connection only wait
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_ = tb.incog.Context(ctx).Close()
}

func (f *Farm) preparePage(page *rod.Page, in *instance) error {
	ua, major := in.userAgent(page)
	if err := (proto.NetworkSetUserAgentOverride{
		UserAgent:      ua,
		AcceptLanguage: "fr-FR,fr;q=0.9,en-US;q=0.8,en;q=0.7",
		Platform:       "Linux x86_64",
		UserAgentMetadata: &proto.EmulationUserAgentMetadata{
			Brands: []*proto.EmulationUserAgentBrandVersion{
				{Brand: "Chromium", Version: major}, {Brand: "Not_A Brand", Version: "24"}},
			Platform: "Linux", Architecture: "x86", Bitness: "64",
		},
	}).Call(page); err != nil {
		return err
	}
	_ = proto.EmulationSetTimezoneOverride{TimezoneID: "Europe/Paris"}.Call(page)
	return page.SetViewport(&proto.EmulationSetDeviceMetricsOverride{Width: 1280, Height: 800, DeviceScaleFactor: 1})
}

// userAgent derives a plain desktop Chrome user agent from the real one, so pages see the
// browser it is, minus the "Headless" marker that makes sites answer differently.
func (in *instance) userAgent(page *rod.Page) (ua, major string) {
	if in.ua != "" {
		return in.ua, in.uaMajor
	}
	v, err := proto.BrowserGetVersion{}.Call(page)
	if err != nil {
		return "", ""
	}
	ua = strings.Replace(v.UserAgent, "HeadlessChrome/", "Chrome/", 1)
	if i := strings.Index(ua, "Chrome/"); i >= 0 {
		major, _, _ = strings.Cut(ua[i+len("Chrome/"):], ".")
	}
	in.ua, in.uaMajor = ua, major
	return ua, major
}

// navOutcome turns the navigation's result into the main document's facts or an error.
func (f *Farm) navOutcome(ctx context.Context, navErr error, nav *navWatch, rec *recorder, res *Result) error {
	last, resp, redir := nav.snapshot()
	res.Redirects = redir
	if resp != nil {
		res.Status = resp.Status
		res.ContentType = strings.ToLower(resp.MIMEType)
		res.FinalURL = resp.URL
		res.Header = map[string]string{}
		for k, v := range resp.Headers {
			res.Header[strings.ToLower(k)] = v.Str()
		}
	}
	// A refusal of the document itself (the URL or a redirect hop) is the caller's target's
	// fault, not a page of the target: answer 400 naming the reason.
	if reason, ok := res.Header[strings.ToLower(blockedHeader)]; ok {
		return blockedMain(last, reason)
	}
	if navErr == nil {
		if resp == nil {
			return farmerr.Page(farmerr.TargetParty, nil, "the page sent no document")
		}
		return nil
	}
	if last != "" {
		for _, b := range rec.list() {
			if hostOf(b.URL) == hostOf(last) {
				return blockedMain(last, b.Reason)
			}
		}
	}
	var ne *rod.NavigationError
	if errors.As(navErr, &ne) {
		if resp != nil && ne.Reason == "net::ERR_ABORTED" {
			// Chromium aborts the navigation of documents it downloads instead of showing.
			return nil
		}
		return farmerr.Page(farmerr.TargetParty, navErr, "the page could not be loaded: "+ne.Reason)
	}
	if ctx.Err() == nil && context.Cause(ctx) == nil && errors.Is(navErr, context.DeadlineExceeded) {
		// The navigation budget ran out before the job's deadline.
		return &farmerr.Error{Kind: farmerr.Timeout, Party: farmerr.TargetParty, Cause: navErr,
			Message: "the page did not answer within the navigation budget (stage: navigate)"}
	}
	return f.browserErr(ctx, navErr, "navigate")
}

// refusedNavigation is the refusal of a navigation of the main frame after its first document
// (its script, a meta refresh, or a redirect of either) to an address the egress policy
// refuses, nil when there was none. The tab then shows the proxy's refusal page, or Chromium's
// error page for https: neither is a page of the target, and the target chose where to go, as
// with a redirect. read is the address the page was read at, "" when it was not.
func refusedNavigation(nav *navWatch, rec *recorder, read string) error {
	last, resp, _ := nav.snapshot()
	if resp != nil {
		for k, v := range resp.Headers {
			if strings.EqualFold(k, blockedHeader) {
				return blockedMain(resp.URL, v.Str())
			}
		}
	}
	blocked := rec.list()
	for _, u := range []string{last, read} {
		if u == "" {
			continue
		}
		for _, b := range blocked {
			if hostOf(b.URL) == hostOf(u) {
				return blockedMain(u, b.Reason)
			}
		}
	}
	return nil
}

func blockedMain(u, reason string) error {
	return &farmerr.Error{Kind: farmerr.Refused,
		Message: fmt.Sprintf("url leads to %s, which the egress policy refuses: %s", hostOf(u), reason)}
}

const jsRead = `(wantImages, wantLayout, maxBytes) => {
	// Only elements without an offsetParent (not rendered, or positioned fixed) can be
	// either, so the costly style lookups are made for those alone. Closed <details> and
	// dialogs are folded content, not boilerplate.
	const skipTags = new Set(['script', 'style', 'noscript', 'template', 'option', 'optgroup',
		'datalist', 'br', 'wbr', 'source', 'track', 'area', 'map', 'param']);
	const layout = () => {
		const all = document.getElementsByTagName('*'), body = document.body;
		const hidden = [], pinned = [];
		let inside = null;
		for (let i = 0; i < all.length; i++) {
			const el = all[i];
			if (inside) { if (inside.contains(el)) continue; inside = null; }
			if (el.offsetParent !== null || !(el instanceof HTMLElement) || skipTags.has(el.localName)) continue;
			if (el === body || !body.contains(el) || el.closest('details,dialog')) continue;
			const st = getComputedStyle(el);
			if (st.display === 'contents') continue;
			if (!el.checkVisibility({visibilityProperty: true})) { hidden.push(i); inside = el; continue; }
			if (st.position === 'fixed') { pinned.push(i); inside = el; }
		}
		return {elements: all.length, hidden, pinned};
	};
	const de = document.documentElement;
	const html = de ? de.outerHTML : '';
	const out = {
		contentType: document.contentType || '',
		title: document.title || '',
		lang: (de && de.lang) || '',
		charset: document.characterSet || '',
		url: location.href,
		height: Math.max(de ? de.scrollHeight : 0, document.body ? document.body.scrollHeight : 0),
		htmlLen: html.length,
	};
	if (html.length > maxBytes) return out;
	const dt = document.doctype ? '<!DOCTYPE ' + document.doctype.name + '>\n' : '';
	out.html = dt + html;
	out.text = (document.body || de || {}).innerText || '';
	if (wantLayout && document.body && de instanceof HTMLElement) out.layout = layout();
	if (wantImages) {
		out.images = Array.from(document.images).map(i => ({
			src: i.currentSrc || i.src || '', alt: i.getAttribute('alt') || '',
			width: i.naturalWidth || 0, height: i.naturalHeight || 0,
			display_width: i.width || 0, display_height: i.height || 0,
		}));
	}
	return out;
}`

// evalJS calls the function source fn with JSON arguments in the page's current main-frame
// context and awaits its promise: one CDP round trip, where rod's Evaluate first looks up the
// window object, and no stale context id after a navigation.
func evalJS(p *rod.Page, fn string, args ...any) (gson.JSON, error) {
	if args == nil {
		args = []any{} // JSON null would make the spread "(...null)" throw: null is not iterable
	}
	a, err := json.Marshal(args)
	if err != nil {
		return gson.JSON{}, err
	}
	res, err := proto.RuntimeEvaluate{Expression: "(" + fn + ")(..." + string(a) + ")",
		AwaitPromise: true, ReturnByValue: true}.Call(p)
	if err != nil {
		return gson.JSON{}, err
	}
	if d := res.ExceptionDetails; d != nil {
		msg := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			msg = d.Exception.Description
		}
		return gson.JSON{}, fmt.Errorf("page script failed: %s", msg)
	}
	return res.Result.Value, nil
}

type readOut struct {
	ContentType string  `json:"contentType"`
	Title       string  `json:"title"`
	Lang        string  `json:"lang"`
	Charset     string  `json:"charset"`
	URL         string  `json:"url"`
	Height      float64 `json:"height"`
	HTMLLen     int     `json:"htmlLen"`
	HTML        *string `json:"html"`
	Text        string  `json:"text"`
	Images      []Image `json:"images"`
	Layout      *Layout `json:"layout"`
}

func (f *Farm) read(ctx context.Context, page *rod.Page, t Task, nav *navWatch, res *Result) error {
	p := page.Context(ctx)
	val, err := evalJS(p, jsRead, t.Images, t.Layout, f.cfg.MaxHTMLBytes)
	if err != nil {
		return f.browserErr(ctx, err, "extract")
	}
	var out readOut
	if err := json.Unmarshal([]byte(val.JSON("", "")), &out); err != nil {
		return fmt.Errorf("browserfarm: decode page read: %w", err)
	}
	if strings.HasPrefix(out.URL, "chrome-error:") {
		// A script or refresh sent the tab somewhere that failed after the document loaded:
		// what is displayed is Chromium's error page, not the target's.
		return farmerr.Page(farmerr.TargetParty, nil, "the page navigated by itself to an address that could not be loaded; nothing was charged")
	}
	if out.HTML == nil {
		return farmerr.New(farmerr.TooLarge, fmt.Sprintf("the page's rendered HTML is %d characters, over the %d limit", out.HTMLLen, f.cfg.MaxHTMLBytes))
	}
	res.HTML, res.Text, res.Title, res.Lang, res.Images = *out.HTML, out.Text, out.Title, out.Lang, out.Images
	res.Layout, res.Charset = out.Layout, out.Charset
	if out.URL != "" && out.URL != "about:blank" {
		res.FinalURL = out.URL
	}
	if res.ContentType == "" {
		res.ContentType = strings.ToLower(out.ContentType)
	}
	res.PageHeight = int(out.Height)
	if t.ServerHTML && htmlTypes[res.ContentType] {
		f.serverHTML(p, nav, res)
	}
	if t.Screenshot != nil {
		if err := f.screenshot(p, t.Screenshot, res); err != nil {
			return f.browserErr(ctx, err, "screenshot")
		}
	}
	if t.PDF {
		if err := printPDF(p, res); err != nil {
			return f.browserErr(ctx, err, "pdf")
		}
	}
	return nil
}

var htmlTypes = map[string]bool{"text/html": true, "application/xhtml+xml": true}

// serverHTML fills res.ServerHTML with the main document's body as the network layer kept
// it. Chromium hands back a body it could decode without error as text, decoded the way it
// reads the response (the header's charset, else the document's declaration, else UTF-8),
// and any other body as base64 of its bytes; the bytes are recovered either way and decoded
// by htmlcharset. A body it no longer holds (a document that never ended, one past its
// buffer) leaves ServerHTML empty: the rendered DOM is then the only source.
func (f *Farm) serverHTML(p *rod.Page, nav *navWatch, res *Result) {
	nav.mu.Lock()
	id := nav.reqID
	nav.mu.Unlock()
	if id == "" {
		return
	}
	body, err := proto.NetworkGetResponseBody{RequestID: id}.Call(p)
	if err != nil || len(body.Body) > f.cfg.MaxHTMLBytes*2 {
		return
	}
	var raw []byte
	if body.Base64Encoded {
		if raw, err = base64.StdEncoding.DecodeString(body.Body); err != nil {
			return
		}
	} else {
		label := ""
		if _, params, err := mime.ParseMediaType(res.Header["content-type"]); err == nil {
			label = params["charset"]
		}
		if label == "" {
			label = htmlcharset.Declared([]byte(body.Body))
		}
		var ok bool
		if raw, ok = htmlcharset.Encode(body.Body, cmp.Or(label, "utf-8")); !ok {
			// Not its bytes again (a character the Go tables lack): Chromium's decoding is
			// the document's.
			res.ServerHTML, res.ServerCharset = body.Body, htmlcharset.Name(label)
			return
		}
	}
	text, d := htmlcharset.DecodeHTML(raw, res.Header["content-type"])
	res.ServerHTML, res.ServerCharset = text, d.Name
}

func (f *Farm) screenshot(p *rod.Page, o *Screenshot, res *Result) error {
	req := proto.PageCaptureScreenshot{Format: proto.PageCaptureScreenshotFormatPng}
	res.ShotHeight = min(res.PageHeight, 800)
	if o.FullPage {
		m, err := proto.PageGetLayoutMetrics{}.Call(p)
		if err != nil {
			return err
		}
		h := res.PageHeight
		if m.CSSContentSize != nil {
			h = int(m.CSSContentSize.Height)
		}
		res.PageHeight = h
		res.ShotHeight = min(h, f.cfg.ScreenshotMaxHeight)
		req.CaptureBeyondViewport = true
		req.Clip = &proto.PageViewport{X: 0, Y: 0, Width: 1280, Height: float64(res.ShotHeight), Scale: 1}
	}
	shot, err := req.Call(p)
	if err != nil {
		return err
	}
	res.PNG = shot.Data
	return nil
}

func printPDF(p *rod.Page, res *Result) error {
	w, h, m := 8.27, 11.69, 0.4 // A4 in inches, 1 cm margins
	r, err := p.PDF(&proto.PagePrintToPDF{PaperWidth: &w, PaperHeight: &h, MarginTop: &m,
		MarginBottom: &m, MarginLeft: &m, MarginRight: &m, PrintBackground: true})
	if err != nil {
		return err
	}
	defer r.Close()
	res.PDF, err = io.ReadAll(io.LimitReader(r, 64<<20))
	return err
}
