package web_test

import (
	"bytes"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/routes/web"
	"github.com/peage/appliance/browserfarm/farmtest"
)

// TestErrorsChargeNothing: every outcome that is not the requested page is a non-2xx that
// names what happened, and the gate records no charge for it.
func TestErrorsChargeNothing(t *testing.T) {
	cases := []struct {
		name, path, page string
		params           map[string]any
		status           int
		code, mentions   string
	}{
		{"target_404", "/v1/extract", "/status/404", nil, 502, "upstream_failed", "HTTP 404"},
		{"target_500", "/v1/links", "/status/500", nil, 502, "upstream_failed", "HTTP 500"},
		{"json_not_html", "/v1/extract", "/data.json", nil, 400, "bad_param", "application/json"},
		{"pdf_not_html", "/v1/meta", "/file.pdf", nil, 400, "bad_param", "application/pdf"},
		{"challenge_403", "/v1/extract", "/challenge", nil, 502, "upstream_failed", "cloudflare"},
		{"unblock_challenge", "/v1/unblock", "/challenge", map[string]any{"format": "html"}, 502, "upstream_failed", "not bypassed"},
		{"unblock_captcha_wall", "/v1/unblock", "/challenge-soft", nil, 502, "upstream_failed", "recaptcha"},
		{"unblock_plain_challenge", "/v1/unblock", "/challenge", map[string]any{"render": false}, 502, "upstream_failed", "cloudflare"},
		{"redirect_to_private", "/v1/extract", "/redirect-to?u=" + url.QueryEscape("http://10.0.0.1/"), nil, 400, "bad_param", "private"},
		{"unblock_plain_redirect_to_metadata", "/v1/unblock", "/redirect-to?u=" + url.QueryEscape("http://169.254.169.254/"), map[string]any{"render": false}, 400, "bad_param", "metadata"},
		{"renderer_crash", "/v1/render", "/crash", nil, 502, "upstream_failed", "crashed"},
		{"enormous_page", "/v1/render", "/huge", nil, 413, "too_large", "limit"},
		{"navigates_to_error", "/v1/extract", "/navaway", nil, 502, "upstream_failed", "navigated by itself"},
		// The target's own script or refresh, after its page loaded, to an address the egress
		// policy refuses (a loopback port standing for the admin listener's): the proxy's
		// refusal page is not the answer, the URL is refused as a redirect to it would be.
		{"script_navigation_to_loopback", "/v1/extract", "/script-to?u=" + url.QueryEscape(env.Other.URL+"/"), nil, 400, "bad_param", "loopback"},
		{"script_navigation_to_metadata", "/v1/extract", "/script-to?u=" + url.QueryEscape("http://169.254.169.254/latest/meta-data/"), nil, 400, "bad_param", "metadata"},
		{"refresh_to_loopback", "/v1/render", "/refresh-to?u=" + url.QueryEscape(env.Other.URL+"/"), nil, 400, "bad_param", "loopback"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			params := map[string]any{"url": env.URL(c.page)}
			for k, v := range c.params {
				params[k] = v
			}
			a, gate := call(t, c.path, params)
			if a.status != c.status || a.errCode(t) != c.code {
				t.Fatalf("want %d %s, got %d %s", c.status, c.code, a.status, a.body)
			}
			if !strings.Contains(a.errMessage(t), c.mentions) {
				t.Errorf("message %q does not mention %q", a.errMessage(t), c.mentions)
			}
			if charged, _ := gate.Counts(); charged != 0 {
				t.Error("a failed call was charged")
			}
		})
	}
}

// TestForbiddenURL: a URL the egress policy refuses answers 400 before any 402.
func TestForbiddenURL(t *testing.T) {
	for _, u := range []string{"http://127.0.0.1:1/", "http://169.254.169.254/", "http://0x7f000001/", "http://[::ffff:192.168.0.1]/"} {
		t.Run(u, func(t *testing.T) {
			a, gate := call(t, "/v1/extract", map[string]any{"url": u})
			if a.status != 400 || a.errCode(t) != "bad_param" || !strings.Contains(a.errMessage(t), "egress") {
				t.Fatalf("got %d %s", a.status, a.body)
			}
			if charged, _ := gate.Counts(); charged != 0 {
				t.Error("a refused URL was charged")
			}
		})
	}
}

func TestScreenshot(t *testing.T) {
	cases := []struct {
		name      string
		fullPage  bool
		height    string
		truncated string
	}{
		{"viewport", false, "800", ""},
		{"full_page_capped", true, "15000", "true"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, _ := call(t, "/v1/screenshot", map[string]any{"url": env.URL("/tall"), "fullPage": c.fullPage})
			if a.status != 200 || a.header.Get("Content-Type") != "image/png" || !bytes.HasPrefix(a.body, []byte("\x89PNG")) {
				t.Fatalf("got %d %s", a.status, a.header.Get("Content-Type"))
			}
			if a.header.Get("X-Screenshot-Height") != c.height || a.header.Get("X-Screenshot-Truncated") != c.truncated || a.header.Get("X-Page-Height") != "30000" {
				t.Errorf("headers %v", a.header)
			}
		})
	}
}

func TestPDF(t *testing.T) {
	a, _ := call(t, "/v1/pdf", map[string]any{"url": env.URL("/article")})
	if a.status != 200 || a.header.Get("Content-Type") != "application/pdf" || !bytes.HasPrefix(a.body, []byte("%PDF-")) {
		t.Fatalf("got %d %s", a.status, a.header.Get("Content-Type"))
	}
	// A4 is 8.27 x 11.69 in; Chromium rounds to device pixels, giving 595.92 x 841.92 pt.
	box := regexp.MustCompile(`/MediaBox \[0 0 (59[45]\.\d+) (84[12]\.\d+)\]`).FindSubmatch(a.body)
	if box == nil {
		t.Error("the PDF has no A4 MediaBox")
	}
}

func TestChanged(t *testing.T) {
	first, _ := call(t, "/v1/web/changed", map[string]any{"url": env.URL("/counter?v=1")})
	sum, _ := first.json(t)["content_sha256"].(string)
	if first.status != 200 || len(sum) != 64 {
		t.Fatalf("got %d %s", first.status, first.body)
	}
	cases := []struct {
		name, base, page string
		changed          bool
	}{
		{"same_content", "/counter?v=1", "/counter?v=1", false},
		{"new_content", "/counter?v=1", "/counter?v=2", true},
		{"only_boilerplate_changed", "/boilerplate?b=1&v=1", "/boilerplate?b=2&v=1", false},
		{"article_changed", "/boilerplate?b=1&v=1", "/boilerplate?b=1&v=2", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base, _ := call(t, "/v1/web/changed", map[string]any{"url": env.URL(c.base)})
			since, _ := base.json(t)["content_sha256"].(string)
			a, _ := call(t, "/v1/web/changed", map[string]any{"url": env.URL(c.page), "since_sha256": since})
			if got := a.json(t)["changed"]; got != c.changed {
				t.Errorf("changed = %v, want %v: %s", got, c.changed, a.body)
			}
		})
	}
}

// TestFormsNotSubmitted: reading forms never submits them (the page's submit handler would
// change the title).
func TestFormsNotSubmitted(t *testing.T) {
	a, _ := call(t, "/v1/unblock", map[string]any{"url": env.URL("/forms"), "format": "html"})
	if a.status != 200 || strings.Contains(a.json(t)["title"].(string), "SUBMITTED") {
		t.Fatalf("got %d %s", a.status, a.body)
	}
}

// TestPoolDown: with the browser pool stopped, the routes answer 503 before asking for
// payment, and nothing is charged.
func TestPoolDown(t *testing.T) {
	small, err := farmtest.Start(1, 1)
	if err != nil {
		t.Fatal(err)
	}
	c, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	if err := web.With(small.Farm, small.Policy).Bind(c); err != nil {
		t.Fatal(err)
	}
	small.Close()
	h := apitest.Start(t, c, apitest.Options{CheckShapes: true})
	resp, err := h.Client.Post(h.BaseURL+"/v1/extract", "application/json", strings.NewReader(`{"url":"https://example.com/"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Payment-Required") != "" {
		t.Errorf("want 503 without a payment challenge, got %d %v", resp.StatusCode, resp.Header)
	}
}
