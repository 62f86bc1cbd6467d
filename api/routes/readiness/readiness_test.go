package readiness_test

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/family"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/routes/readiness"
	"github.com/peage/appliance/internal/egress"
)

const goodHome = `<!doctype html><html lang="en"><head><title>Good site</title>
<meta name="description" content="A site built to pass every agent-readiness check.">
<link rel="canonical" href="/"><link rel="service-desc" href="/api/openapi.json">
<script type="application/ld+json">{"@context":"https://schema.org","@type":"Organization","name":"Good"}</script>
</head><body><h1>Good site</h1>
<p>This page is rendered on the server, so an agent that does not run JavaScript reads the same words as a person does.
It explains what the site offers, how to call its API, and where its terms are. There is enough text here to count as content.</p>
<a href="/privacy">Privacy</a></body></html>`

// goodSite passes every check: HTTPS with HSTS, robots.txt allowing AI agents and naming the
// sitemap, llms.txt, OpenAPI (linked as service-desc), MCP, x402, an agent card, a server-
// rendered page with title, description, lang, one h1, JSON-LD, canonical and a privacy link,
// and a real 404.
func goodSite(t *testing.T) *httptest.Server {
	var srv *httptest.Server
	files := map[string][2]string{
		"/robots.txt":                  {"text/plain", "User-agent: *\nAllow: /\n\nUser-agent: GPTBot\nUser-agent: ClaudeBot\nAllow: /\n"},
		"/llms.txt":                    {"text/markdown", "# Good site\n\n> A site built to pass.\n\n- [API](/api/openapi.json)\n"},
		"/sitemap-main.xml":            {"application/xml", `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>/</loc></url></urlset>`},
		"/api/openapi.json":            {"application/json", `{"openapi":"3.1.0","info":{"title":"Good","version":"1"},"paths":{}}`},
		"/.well-known/mcp":             {"application/json", `{"name":"good","endpoint":"/mcp"}`},
		"/.well-known/x402":            {"application/json", `{"x402Version":2,"resources":[]}`},
		"/.well-known/agent-card.json": {"application/json", `{"name":"Good agent","url":"/a2a"}`},
	}
	srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Strict-Transport-Security", "max-age=31536000")
		if r.URL.Path == "/" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = io.WriteString(w, goodHome)
			return
		}
		if r.URL.Path == "/robots.txt" {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, files["/robots.txt"][1]+"Sitemap: "+srv.URL+"/sitemap-main.xml\n")
			return
		}
		f, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", f[0])
		_, _ = io.WriteString(w, f[1])
	}))
	t.Cleanup(srv.Close)
	return srv
}

// badSite fails every check it can: plain HTTP, robots.txt shutting GPTBot out, a slow 403
// challenge page (cf-mitigated) with no title, text, lang, h1, JSON-LD, canonical or links,
// none of the well-known documents, and a soft 200 for missing pages. robots present is a
// pass here; noRobots gives the site without robots.txt, where that check fails.
func badSite(t *testing.T, noRobots bool) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/robots.txt" && !noRobots:
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "User-agent: GPTBot\nDisallow: /\n")
		case r.URL.Path == "/":
			time.Sleep(4100 * time.Millisecond)
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("cf-mitigated", "challenge")
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, `<html><head></head><body><div id="app"></div><script>start()</script></body></html>`)
		case strings.HasPrefix(r.URL.Path, "/.well-known/"), r.URL.Path == "/openapi.json", r.URL.Path == "/llms.txt", r.URL.Path == "/sitemap.xml":
			http.NotFound(w, r)
		default: // soft 200
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, `<html><body><div id="app"></div></body></html>`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func harness(t *testing.T, tlsConf *tls.Config, allow ...string) (*apitest.Harness, *apitest.RecordingGate) {
	t.Helper()
	gate := &apitest.RecordingGate{}
	return harnessGate(t, tlsConf, gate, allow...), gate
}

// harnessGate serves the family behind gate, the egress policy allowing allow (local test
// sites) and joined to the public_url format as compose does.
func harnessGate(t *testing.T, tlsConf *tls.Config, gate paywall.Gate, allow ...string) *apitest.Harness {
	t.Helper()
	pol, err := egress.New(egress.Config{Allow: allow})
	if err != nil {
		t.Fatal(err)
	}
	fam := family.BindFunc(func(c *catalog.Catalog) error {
		if err := c.AlsoCheck("public_url", pol.CheckURL); err != nil {
			return err
		}
		return readiness.With(pol, tlsConf).Bind(c)
	})
	return apitest.StartFamily(t, catalog.DefaultNames(), fam, apitest.Options{Gate: gate})
}

func hostPort(s *httptest.Server) string { u, _ := url.Parse(s.URL); return u.Host }

func audit(t *testing.T, h *apitest.Harness, target string) (int, map[string]any) {
	t.Helper()
	resp, err := h.Client.Get(h.BaseURL + "/v1/site/agent-readiness?url=" + url.QueryEscape(target))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s", b)
	}
	return resp.StatusCode, m
}

func verdicts(m map[string]any) map[string]string {
	out := map[string]string{}
	for _, c := range m["checks"].([]any) {
		cm := c.(map[string]any)
		out[cm["id"].(string)] = cm["verdict"].(string)
	}
	return out
}

func TestGoodSitePassesEveryCheck(t *testing.T) {
	good := goodSite(t)
	h, gate := harness(t, good.Client().Transport.(*http.Transport).TLSClientConfig, hostPort(good))
	status, m := audit(t, h, good.URL+"/")
	if status != 200 {
		t.Fatalf("status %d %v", status, m)
	}
	v := verdicts(m)
	if len(v) != 21 || len(readiness.Checks) != 21 {
		t.Fatalf("%d checks", len(v))
	}
	for _, c := range readiness.Checks {
		if v[c.ID] != readiness.Pass {
			t.Errorf("%s: %s", c.ID, v[c.ID])
		}
	}
	if m["score"] != 100.0 || m["grade"] != "A" || len(m["fixes"].([]any)) != 0 {
		t.Errorf("score %v grade %v fixes %v", m["score"], m["grade"], m["fixes"])
	}
	pillars := m["pillars"].(map[string]any)
	for _, p := range []string{"access", "legibility", "transactability", "trust", "outcome"} {
		if pillars[p].(map[string]any)["score"] != 100.0 {
			t.Errorf("pillar %s %v", p, pillars[p])
		}
	}
	if md := m["report_markdown"].(string); !strings.Contains(md, "Score **100/100**, grade **A**") || !strings.Contains(md, "| openapi | transactability | pass |") {
		t.Errorf("markdown:\n%s", md)
	}
	if c, w := gate.Counts(); c != 1 || w != 0 {
		t.Errorf("charged %d waived %d", c, w)
	}
}

func TestBadSiteFailsEachCheck(t *testing.T) {
	bad, bare := badSite(t, false), badSite(t, true)
	h, _ := harness(t, nil, hostPort(bad), hostPort(bare))
	status, m := audit(t, h, bad.URL+"/")
	if status != 200 {
		t.Fatalf("status %d %v", status, m)
	}
	v := verdicts(m)
	want := map[string]string{"robots_txt": readiness.Pass}
	for _, c := range readiness.Checks {
		w, ok := want[c.ID]
		if !ok {
			w = readiness.Fail
		}
		if v[c.ID] != w {
			t.Errorf("%s: %s, want %s", c.ID, v[c.ID], w)
		}
	}
	if m["grade"] != "F" {
		t.Errorf("grade %v score %v", m["grade"], m["score"])
	}
	fixes := m["fixes"].([]any)
	if len(fixes) != 20 || fixes[0].(map[string]any)["priority"] != "high" || fixes[len(fixes)-1].(map[string]any)["priority"] != "low" {
		t.Errorf("fixes not by priority: %v", fixes)
	}
	_, m = audit(t, h, bare.URL+"/")
	if v := verdicts(m); v["robots_txt"] != readiness.Fail || v["robots_ai_agents"] != readiness.Warn {
		t.Errorf("without robots.txt: robots_txt %s robots_ai_agents %s", v["robots_txt"], v["robots_ai_agents"])
	}
}

// TestRefusedURLIs400NotCharged runs behind the challenge-only gate: a URL the egress guard
// refuses is a 400 naming url before any 402; a public one is the challenge.
func TestRefusedURLIs400NotCharged(t *testing.T) {
	h := harnessGate(t, nil, paywall.ChallengeOnly{})
	for _, target := range []string{"http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/", "http://127.0.0.1:9/", "http://[::1]/", "http://2130706433/", "ftp://example.com/"} {
		status, m := audit(t, h, target)
		if status != 400 || m["error"].(map[string]any)["param"] != "url" {
			t.Errorf("%s: %d %v", target, status, m)
		}
	}
	if status, m := audit(t, h, "https://example.com/"); status != 402 {
		t.Errorf("a public site: %d %v, want the 402 challenge", status, m)
	}
}

// TestUntrustedCertificateIsAFinding audits the good site without trusting its certificate:
// the report is still made, https and hsts fail (HSTS from an unverified answer counts for
// nothing), every other check passes.
func TestUntrustedCertificateIsAFinding(t *testing.T) {
	good := goodSite(t)
	h, _ := harness(t, nil, hostPort(good))
	status, m := audit(t, h, good.URL+"/")
	if status != 200 {
		t.Fatalf("status %d %v", status, m)
	}
	v := verdicts(m)
	for _, c := range readiness.Checks {
		want := readiness.Pass
		if c.ID == "https" || c.ID == "hsts" {
			want = readiness.Fail
		}
		if v[c.ID] != want {
			t.Errorf("%s: %s, want %s", c.ID, v[c.ID], want)
		}
	}
}
