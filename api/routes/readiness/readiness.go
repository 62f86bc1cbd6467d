// Package readiness serves /v1/site/agent-readiness: 21 read-only checks of how well a site
// serves AI agents (Checks, in checks.go, is the list and the rule of each), grouped in five
// pillars (access, legibility, transactability, trust, outcome), a score, a grade, the fixes
// by priority and the whole report as markdown.
//
// Every fetch is a plain GET (no script runs: what an agent without a browser sees) through
// the egress guard: a URL whose host the guard refuses is 400 naming url, and a redirect to a
// refused address fails that fetch. A site whose page cannot be fetched at all (no answer) is
// 502, not charged; any HTTP answer, even an error, is audited.
package readiness

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/internal/egress"
	"github.com/peage/appliance/internal/fanout"
	"github.com/peage/appliance/internal/version"
)

// Paths fetched (pSitemap and pServiceDesc are resolved from robots.txt and the page).
const (
	pHome        = "home"
	pRobots      = "/robots.txt"
	pLLMs        = "/llms.txt"
	pSitemap     = "sitemap"
	pOpenAPI     = "/openapi.json"
	pOpenAPIWK   = "/.well-known/openapi.json"
	pServiceDesc = "service-desc"
	pAgentCard   = "/.well-known/agent-card.json"
	pAgentJSON   = "/.well-known/agent.json"
	pMissing     = "missing"
)

// Limits of each fetch.
const (
	fetchTimeout = 10 * time.Second
	maxBody      = 2 << 20
	maxRedirects = 5
)

// Routes holds the handler.
type Routes struct {
	policy *egress.Policy
	client *http.Client
	// lenient skips certificate verification: used only to audit the rest of a site whose
	// certificate fails, so the report says so instead of failing whole.
	lenient *http.Client
	now     func() time.Time
}

// With builds the route over the egress policy. tlsConf may carry extra roots (tests); nil
// means the system's.
func With(policy *egress.Policy, tlsConf *tls.Config) *Routes {
	redirects := func(_ *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("more than %d redirects", maxRedirects)
		}
		return nil
	}
	t := policy.Transport()
	t.TLSClientConfig = tlsConf
	lt := policy.Transport()
	lt.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // only after the verified fetch failed, to describe the site; never to trust it
	return &Routes{policy: policy, now: time.Now,
		client:  &http.Client{Transport: t, Timeout: fetchTimeout, CheckRedirect: redirects},
		lenient: &http.Client{Transport: lt, Timeout: fetchTimeout, CheckRedirect: redirects}}
}

// Bind attaches the handler.
func (r *Routes) Bind(c *catalog.Catalog) error {
	return c.Bind("site.agent-readiness", r.audit, nil)
}

type fetched struct {
	status   int
	header   http.Header
	body     []byte
	elapsed  time.Duration
	finalURL string
	err      error
}

func (f *fetched) isHTML() bool {
	return strings.Contains(f.header.Get("Content-Type"), "html")
}

func (f *fetched) describe(what string) string {
	if f == nil || (f.err == nil && f.status == 0) {
		return what + " not found"
	}
	if f.err != nil {
		return what + " could not be fetched: " + f.err.Error()
	}
	if f.status == 200 && f.isHTML() {
		return what + " answers an HTML page, not the expected document"
	}
	return fmt.Sprintf("%s answered %d", what, f.status)
}

// site is everything fetched for one audit.
type site struct {
	page    string // the URL audited
	origin  string // scheme://host[:port]
	got     map[string]*fetched
	certErr error // the certificate failed verification; the rest was fetched without it

	parseOnce sync.Once
	parsed    *goquery.Document
	visible   string
}

func (s *site) get(p string) *fetched {
	if f, ok := s.got[p]; ok {
		return f
	}
	return &fetched{}
}

// doc is the page's HTML as served, nil when it is not HTML.
func (s *site) doc() *goquery.Document {
	s.parseOnce.Do(func() {
		h := s.get(pHome)
		if h.err != nil || !h.isHTML() {
			return
		}
		d, err := goquery.NewDocumentFromReader(bytes.NewReader(h.body))
		if err != nil {
			return
		}
		s.parsed = d
		body := d.Find("body").Clone()
		body.Find("script, style, template").Remove()
		s.visible = strings.Join(strings.Fields(body.Text()), " ")
	})
	return s.parsed
}

// text is the page's visible text before any script runs.
func (s *site) text() string { s.doc(); return s.visible }

func (r *Routes) fetch(ctx context.Context, c *http.Client, target string) *fetched {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return &fetched{err: err}
	}
	req.Header.Set("User-Agent", "peage-agent-readiness/"+version.Version)
	req.Header.Set("Accept", "text/html,application/json;q=0.9,text/plain;q=0.8,*/*;q=0.5")
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return &fetched{err: err, elapsed: time.Since(start)}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	return &fetched{status: resp.StatusCode, header: resp.Header, body: b, elapsed: time.Since(start), finalURL: resp.Request.URL.String(), err: err}
}

// gather fetches what the checks read: the page and the well-known documents in parallel,
// then the sitemap (robots.txt may name it) and the service description (the page may link it).
func (r *Routes) gather(ctx context.Context, s *site) {
	// The page first, alone: its certificate decides which client reads the rest.
	client := r.client
	home := r.fetch(ctx, client, s.page)
	if isCertError(home.err) {
		s.certErr, client = home.err, r.lenient
		home = r.fetch(ctx, client, s.page)
	}
	s.got[pHome] = home
	run := func(jobs map[string]string) {
		names := slices.Sorted(maps.Keys(jobs))
		got := make([]*fetched, len(names))
		reads := make([]func(context.Context) error, len(names))
		for i, name := range names {
			reads[i] = func(ctx context.Context) error { got[i] = r.fetch(ctx, client, jobs[name]); return nil }
		}
		for i, err := range fanout.Go(ctx, nil, reads...) {
			if err != nil { // the read panicked: the check sees a failed fetch
				got[i] = &fetched{err: err}
			}
			s.got[names[i]] = got[i]
		}
	}
	first := map[string]string{pMissing: s.origin + "/.peage-agent-readiness-" + strconv.FormatInt(r.now().UnixNano(), 36)}
	for _, p := range []string{pRobots, pLLMs, pOpenAPI, pOpenAPIWK, "/.well-known/mcp", "/.well-known/x402", pAgentCard, pAgentJSON} {
		first[p] = s.origin + p
	}
	run(first)
	second := map[string]string{pSitemap: s.origin + "/sitemap.xml"}
	if rb := s.get(pRobots); rb.status == 200 {
		if m := sitemapLine.FindStringSubmatch(string(rb.body)); m != nil {
			if u, err := url.Parse(m[1]); err == nil && u.IsAbs() {
				second[pSitemap] = u.String()
			}
		}
	}
	if d := s.doc(); d != nil {
		if h, ok := d.Find(`link[rel="service-desc"]`).First().Attr("href"); ok {
			if u, err := url.Parse(s.get(pHome).finalURL); err == nil {
				if ref, err := u.Parse(h); err == nil {
					second[pServiceDesc] = ref.String()
				}
			}
		}
	}
	run(second)
}

// isCertError reports whether err is a failed certificate verification.
func isCertError(err error) bool {
	var ve *tls.CertificateVerificationError
	var ue x509.UnknownAuthorityError
	var he x509.HostnameError
	var ie x509.CertificateInvalidError
	return errors.As(err, &ve) || errors.As(err, &ue) || errors.As(err, &he) || errors.As(err, &ie)
}

// Result is one check's verdict.
type Result struct {
	ID       string `json:"id"`
	Pillar   string `json:"pillar"`
	Verdict  string `json:"verdict"`
	Evidence string `json:"evidence"`
	Rule     string `json:"rule"`
	Weight   int    `json:"weight"`
}

// Fix is one recommended change.
type Fix struct {
	Priority string `json:"priority"`
	Check    string `json:"check"`
	Fix      string `json:"fix"`
}

// PillarScore is one pillar.
type PillarScore struct {
	Score  int `json:"score"`
	Passed int `json:"passed"`
	Checks int `json:"checks"`
}

// Report is the answer.
type Report struct {
	URL            string                 `json:"url"`
	Host           string                 `json:"host"`
	Score          int                    `json:"score"`
	Grade          string                 `json:"grade"`
	Pillars        map[string]PillarScore `json:"pillars"`
	Checks         []Result               `json:"checks"`
	Fixes          []Fix                  `json:"fixes"`
	ReportMarkdown string                 `json:"report_markdown"`
	CheckedAt      string                 `json:"checked_at"`
	Method         string                 `json:"method"`
}

var pillarOrder = []string{Access, Legibility, Transactability, Trust, Outcome}

// credit is a verdict's share of its weight: pass 1, warn ½, fail 0.
func credit(v string) float64 {
	return map[string]float64{Pass: 1, Warn: 0.5}[v]
}

// Grade is A from 90, B from 75, C from 60, D from 40, F below.
func Grade(score int) string {
	switch {
	case score >= 90:
		return "A"
	case score >= 75:
		return "B"
	case score >= 60:
		return "C"
	case score >= 40:
		return "D"
	default:
		return "F"
	}
}

// Evaluate runs every check on what was fetched.
func Evaluate(s *site) ([]Result, map[string]PillarScore, int, []Fix) {
	results := make([]Result, 0, len(Checks))
	got, total := map[string]float64{}, map[string]float64{}
	pillars := map[string]PillarScore{}
	var fixes []Fix
	var sum, weights float64
	for _, c := range Checks {
		v, ev := c.judge(s)
		results = append(results, Result{ID: c.ID, Pillar: c.Pillar, Verdict: v, Evidence: ev, Rule: c.Rule, Weight: c.Weight})
		w := float64(c.Weight)
		got[c.Pillar] += w * credit(v)
		total[c.Pillar] += w
		sum, weights = sum+w*credit(v), weights+w
		p := pillars[c.Pillar]
		p.Checks++
		if v == Pass {
			p.Passed++
		} else {
			fixes = append(fixes, Fix{Priority: map[int]string{3: "high", 2: "medium", 1: "low"}[c.Weight], Check: c.ID, Fix: c.Fix})
		}
		pillars[c.Pillar] = p
	}
	for k, p := range pillars {
		p.Score = int(100*got[k]/total[k] + 0.5)
		pillars[k] = p
	}
	rank := map[string]int{"high": 0, "medium": 1, "low": 2}
	slices.SortStableFunc(fixes, func(a, b Fix) int { return rank[a.Priority] - rank[b.Priority] })
	if fixes == nil {
		fixes = []Fix{}
	}
	return results, pillars, int(100*sum/weights + 0.5), fixes
}

const method = "21 read-only checks (GET without cookies or script, through the egress guard); each check has a weight of 1 to 3; " +
	"pass counts its weight, warn half, fail nothing; a pillar's score and the overall score are the weighted share in percent; " +
	"grade A ≥ 90, B ≥ 75, C ≥ 60, D ≥ 40, F below; a fix's priority is its check's weight (3 high, 2 medium, 1 low)."

func (r *Routes) audit(ctx context.Context, req *catalog.Request) (any, error) {
	raw := req.Args.Str("url")
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return nil, apierr.BadParam("url", "url must be an absolute http or https URL")
	}
	port := 80
	if u.Scheme == "https" {
		port = 443
	}
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil {
			return nil, apierr.BadParam("url", "url has an invalid port")
		}
	}
	if _, err := r.policy.Resolve(ctx, u.Hostname(), port); err != nil {
		var b *egress.Blocked
		if errors.As(err, &b) {
			return nil, apierr.BadParam("url", "url is refused by the egress policy: %s is %s", u.Hostname(), b.Reason)
		}
		return nil, apierr.Upstream("target", err, "could not resolve %s; nothing was charged", u.Hostname())
	}
	s := &site{page: raw, origin: u.Scheme + "://" + u.Host, got: map[string]*fetched{}}
	r.gather(ctx, s)
	if h := s.get(pHome); h.err != nil && h.status == 0 {
		return nil, apierr.Upstream("target", h.err, "the site could not be fetched (%v); nothing was charged", h.err)
	}
	results, pillars, score, fixes := Evaluate(s)
	rep := Report{URL: raw, Host: u.Hostname(), Score: score, Grade: Grade(score), Pillars: pillars, Checks: results, Fixes: fixes,
		CheckedAt: r.now().UTC().Format(time.RFC3339), Method: method}
	rep.ReportMarkdown = markdown(&rep)
	return rep, nil
}

func markdown(r *Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Agent readiness of %s\n\nScore **%d/100**, grade **%s** (checked %s).\n\n", r.Host, r.Score, r.Grade, r.CheckedAt)
	b.WriteString("| Pillar | Score | Passed |\n|---|---|---|\n")
	for _, p := range pillarOrder {
		ps := r.Pillars[p]
		fmt.Fprintf(&b, "| %s | %d | %d/%d |\n", p, ps.Score, ps.Passed, ps.Checks)
	}
	b.WriteString("\n## Checks\n\n| Check | Pillar | Verdict | Evidence |\n|---|---|---|---|\n")
	for _, c := range r.Checks {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", c.ID, c.Pillar, c.Verdict, strings.ReplaceAll(c.Evidence, "|", "\\|"))
	}
	b.WriteString("\n## Fixes\n\n")
	if len(r.Fixes) == 0 {
		b.WriteString("Nothing to fix.\n")
	}
	for i, f := range r.Fixes {
		fmt.Fprintf(&b, "%d. **%s** (%s): %s\n", i+1, f.Check, f.Priority, f.Fix)
	}
	fmt.Fprintf(&b, "\n## Method\n\n%s\n", r.Method)
	return b.String()
}
