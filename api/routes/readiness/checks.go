package readiness

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/peage/appliance/browserfarm/extract"
)

// Verdicts.
const (
	Pass = "pass"
	Warn = "warn"
	Fail = "fail"
)

// Pillars.
const (
	Access          = "access"
	Legibility      = "legibility"
	Transactability = "transactability"
	Trust           = "trust"
	Outcome         = "outcome"
)

// Check is one rule of the audit. Weight (1 to 3) is its share of its pillar's score and the
// priority of its fix: 3 high, 2 medium, 1 low. The table is the documentation: the route's
// answer and the README list these rules as written here.
type Check struct {
	ID     string
	Pillar string
	Weight int
	Rule   string
	Fix    string
	judge  func(s *site) (string, string) // verdict, evidence
}

// aiAgents are the crawlers and agents of AI providers a robots.txt may address.
var aiAgents = []string{"GPTBot", "ChatGPT-User", "OAI-SearchBot", "ClaudeBot", "Claude-User", "anthropic-ai",
	"PerplexityBot", "Google-Extended", "CCBot", "Applebot-Extended", "Meta-ExternalAgent"}

// Checks are the 21 read-only checks, in report order.
var Checks = []Check{
	{ID: "robots_txt", Pillar: Access, Weight: 2, Rule: "GET /robots.txt answers 200 with a text body.",
		Fix: "Publish /robots.txt (text/plain) stating what agents may read.", judge: robotsExists},
	{ID: "robots_ai_agents", Pillar: Access, Weight: 3,
		Rule: "robots.txt does not disallow the whole site (Disallow: /) to any AI agent (" + strings.Join(aiAgents, ", ") + ") nor to *; warn when it names none of them.",
		Fix:  "Allow AI user agents in robots.txt (no 'Disallow: /' in their groups or in '*').", judge: robotsAI},
	{ID: "home_ok", Pillar: Access, Weight: 3, Rule: "The page answers 200 after redirects.",
		Fix: "Make the page answer 200 to a plain GET without cookies.", judge: homeOK},
	{ID: "no_challenge", Pillar: Access, Weight: 3, Rule: "The page is not an anti-bot challenge or captcha interstitial.",
		Fix: "Let well-behaved agents through without a JavaScript or captcha challenge (verify them by user agent or Web Bot Auth instead).", judge: noChallenge},
	{ID: "response_time", Pillar: Access, Weight: 1, Rule: "The page is received within 1.5 s (pass) or 4 s (warn).",
		Fix: "Serve the page faster (cache, CDN): agents work under deadlines.", judge: responseTime},
	{ID: "llms_txt", Pillar: Legibility, Weight: 2, Rule: "GET /llms.txt answers 200 with a markdown text starting with a '# ' title.",
		Fix: "Publish /llms.txt: a markdown summary of the site with links to its key pages (llmstxt.org).", judge: llmsTxt},
	{ID: "sitemap", Pillar: Legibility, Weight: 2, Rule: "The sitemap named in robots.txt, or /sitemap.xml, is an XML urlset or sitemapindex.",
		Fix: "Publish /sitemap.xml and name it in robots.txt (Sitemap: …).", judge: sitemap},
	{ID: "renders_without_script", Pillar: Legibility, Weight: 3, Rule: "The HTML as served, before any script runs, holds at least 200 characters of visible text.",
		Fix: "Render the main content on the server: many agents do not run JavaScript.", judge: noScript},
	{ID: "title_description", Pillar: Legibility, Weight: 1, Rule: "The page has a <title> and a meta description.",
		Fix: "Give the page a <title> and a <meta name=\"description\">.", judge: titleDescription},
	{ID: "structured_data", Pillar: Legibility, Weight: 2, Rule: "The page has at least one JSON-LD block that parses and names a @type.",
		Fix: "Describe the page with schema.org JSON-LD (<script type=\"application/ld+json\">).", judge: structuredData},
	{ID: "lang", Pillar: Legibility, Weight: 1, Rule: "The <html> element declares its language (lang).",
		Fix: "Add lang=\"…\" to the <html> element.", judge: lang},
	{ID: "headings", Pillar: Legibility, Weight: 1, Rule: "The page has exactly one <h1> (warn when several).",
		Fix: "Give the page one <h1> naming its subject.", judge: headings},
	{ID: "openapi", Pillar: Transactability, Weight: 3, Rule: "An OpenAPI description is found at /openapi.json, /.well-known/openapi.json or a <link rel=\"service-desc\">, and is JSON with an openapi or swagger field.",
		Fix: "Publish the API's OpenAPI description at /openapi.json and link it (rel=\"service-desc\").", judge: openapi},
	{ID: "mcp", Pillar: Transactability, Weight: 2, Rule: "GET /.well-known/mcp answers 200 with JSON (an MCP server description).",
		Fix: "Expose an MCP server and describe it at /.well-known/mcp.", judge: wellKnownJSON("mcp", "")},
	{ID: "x402", Pillar: Transactability, Weight: 2, Rule: "GET /.well-known/x402 answers 200 with JSON (paid resources an agent can buy with x402).",
		Fix: "If agents may pay per call, list the paid resources at /.well-known/x402.", judge: wellKnownJSON("x402", "")},
	{ID: "agent_card", Pillar: Transactability, Weight: 2, Rule: "GET /.well-known/agent-card.json (or the older /.well-known/agent.json) answers JSON with a name (A2A agent card).",
		Fix: "Publish an A2A agent card at /.well-known/agent-card.json.", judge: wellKnownJSON("agent-card", "name")},
	{ID: "https", Pillar: Trust, Weight: 3, Rule: "The page is served over HTTPS with a certificate valid for the host.",
		Fix: "Serve the site over HTTPS with a valid certificate.", judge: https},
	{ID: "hsts", Pillar: Trust, Weight: 1, Rule: "The HTTPS answer carries Strict-Transport-Security.",
		Fix: "Send Strict-Transport-Security: max-age=31536000.", judge: hsts},
	{ID: "policies", Pillar: Trust, Weight: 1, Rule: "The page links to a contact, privacy, terms or legal page.",
		Fix: "Link your contact, terms and privacy pages from every page.", judge: policies},
	{ID: "canonical", Pillar: Outcome, Weight: 2, Rule: "The page names its canonical URL (<link rel=\"canonical\">) so an agent can cite it.",
		Fix: "Add <link rel=\"canonical\" href=\"…\">.", judge: canonical},
	{ID: "not_found_status", Pillar: Outcome, Weight: 2, Rule: "A page that does not exist answers 404 (or 410), not a soft 200, so an agent can tell a result from an error.",
		Fix: "Answer missing pages with HTTP 404.", judge: notFound},
}

func robotsExists(s *site) (string, string) {
	r := s.get(pRobots)
	if r.status == 200 && !r.isHTML() {
		return Pass, "robots.txt found"
	}
	return Fail, r.describe("/robots.txt")
}

// robotsGroups parses robots.txt into user-agent groups and their disallow rules.
func robotsGroups(body string) map[string][]string {
	groups := map[string][]string{}
	var agents []string
	inRules := false
	for _, line := range strings.Split(body, "\n") {
		line, _, _ = strings.Cut(line, "#")
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		switch k {
		case "user-agent":
			if inRules {
				agents, inRules = nil, false
			}
			agents = append(agents, strings.ToLower(v))
			for _, a := range agents {
				if _, ok := groups[a]; !ok {
					groups[a] = []string{}
				}
			}
		case "disallow", "allow":
			inRules = true
			if k == "disallow" {
				for _, a := range agents {
					groups[a] = append(groups[a], v)
				}
			}
		}
	}
	return groups
}

func robotsAI(s *site) (string, string) {
	r := s.get(pRobots)
	if r.status != 200 {
		return Warn, "no robots.txt: nothing is disallowed, but nothing is said to AI agents either"
	}
	groups := robotsGroups(string(r.body))
	var blocked, named []string
	for _, a := range append([]string{"*"}, aiAgents...) {
		rules, ok := groups[strings.ToLower(a)]
		if !ok {
			continue
		}
		if a != "*" {
			named = append(named, a)
		}
		for _, d := range rules {
			if d == "/" || d == "/*" {
				blocked = append(blocked, a)
				break
			}
		}
	}
	switch {
	case len(blocked) > 0:
		return Fail, "Disallow: / for " + strings.Join(blocked, ", ")
	case len(named) == 0:
		return Warn, "robots.txt names no AI agent"
	default:
		return Pass, "allowed: " + strings.Join(named, ", ")
	}
}

func homeOK(s *site) (string, string) {
	r := s.get(pHome)
	if r.status == 200 {
		return Pass, fmt.Sprintf("200 from %s", r.finalURL)
	}
	return Fail, r.describe(s.page)
}

func noChallenge(s *site) (string, string) {
	r := s.get(pHome)
	if r.err != nil {
		return Fail, r.describe(s.page)
	}
	doc := s.doc()
	title := ""
	if doc != nil {
		title = strings.TrimSpace(doc.Find("title").First().Text())
	}
	lower := make(map[string]string, len(r.header))
	for k := range r.header {
		lower[strings.ToLower(k)] = r.header.Get(k)
	}
	if ch := extract.DetectChallenge(r.status, lower, title, string(r.body), s.text()); ch != nil {
		return Fail, fmt.Sprintf("%s challenge (%s)", ch.Vendor, ch.Signal)
	}
	return Pass, "no challenge"
}

func responseTime(s *site) (string, string) {
	r := s.get(pHome)
	if r.err != nil {
		return Fail, r.describe(s.page)
	}
	ms := r.elapsed.Milliseconds()
	switch {
	case ms <= 1500:
		return Pass, fmt.Sprintf("%d ms", ms)
	case ms <= 4000:
		return Warn, fmt.Sprintf("%d ms", ms)
	default:
		return Fail, fmt.Sprintf("%d ms", ms)
	}
}

func llmsTxt(s *site) (string, string) {
	r := s.get(pLLMs)
	if r.status != 200 || r.isHTML() {
		return Fail, r.describe("/llms.txt")
	}
	if !strings.HasPrefix(strings.TrimSpace(string(r.body)), "# ") {
		return Warn, "llms.txt does not start with a '# ' title"
	}
	return Pass, "llms.txt found"
}

var sitemapLine = regexp.MustCompile(`(?im)^\s*sitemap:\s*(\S+)`)

func sitemap(s *site) (string, string) {
	r := s.get(pSitemap)
	body := string(r.body)
	if r.status == 200 && (strings.Contains(body, "<urlset") || strings.Contains(body, "<sitemapindex")) {
		return Pass, "sitemap at " + r.finalURL
	}
	return Fail, r.describe("the sitemap")
}

func noScript(s *site) (string, string) {
	n := len([]rune(s.text()))
	if n >= 200 {
		return Pass, fmt.Sprintf("%d characters of text without script", n)
	}
	return Fail, fmt.Sprintf("only %d characters of text before scripts run", n)
}

func titleDescription(s *site) (string, string) {
	doc := s.doc()
	if doc == nil {
		return Fail, "no HTML page"
	}
	t := strings.TrimSpace(doc.Find("title").First().Text())
	d, _ := doc.Find(`meta[name="description" i]`).First().Attr("content")
	switch {
	case t != "" && strings.TrimSpace(d) != "":
		return Pass, "title and description present"
	case t != "":
		return Warn, "title present, no meta description"
	default:
		return Fail, "no <title>"
	}
}

func structuredData(s *site) (string, string) {
	doc := s.doc()
	if doc == nil {
		return Fail, "no HTML page"
	}
	found, broken := 0, 0
	doc.Find(`script[type="application/ld+json"]`).Each(func(_ int, sel *goquery.Selection) {
		var v any
		if err := json.Unmarshal([]byte(sel.Text()), &v); err != nil {
			broken++
			return
		}
		if strings.Contains(sel.Text(), `"@type"`) {
			found++
		}
	})
	switch {
	case found > 0:
		return Pass, fmt.Sprintf("%d JSON-LD block(s)", found)
	case broken > 0:
		return Fail, fmt.Sprintf("%d JSON-LD block(s) that do not parse", broken)
	default:
		return Fail, "no JSON-LD"
	}
}

func lang(s *site) (string, string) {
	doc := s.doc()
	if doc == nil {
		return Fail, "no HTML page"
	}
	if l, _ := doc.Find("html").First().Attr("lang"); strings.TrimSpace(l) != "" {
		return Pass, "lang=" + l
	}
	return Fail, "no lang attribute"
}

func headings(s *site) (string, string) {
	doc := s.doc()
	if doc == nil {
		return Fail, "no HTML page"
	}
	switch n := doc.Find("h1").Length(); {
	case n == 1:
		return Pass, "one <h1>"
	case n > 1:
		return Warn, fmt.Sprintf("%d <h1>", n)
	default:
		return Fail, "no <h1>"
	}
}

func openapi(s *site) (string, string) {
	for _, p := range []string{pOpenAPI, pOpenAPIWK, pServiceDesc} {
		r := s.get(p)
		if r.status != 200 {
			continue
		}
		var v map[string]any
		if json.Unmarshal(r.body, &v) == nil && (v["openapi"] != nil || v["swagger"] != nil) {
			return Pass, "OpenAPI at " + r.finalURL
		}
	}
	return Fail, "no OpenAPI description at /openapi.json, /.well-known/openapi.json or rel=service-desc"
}

// wellKnownJSON passes when /.well-known/<name> (agent-card: also agent.json) is a JSON object,
// with field when one is named.
func wellKnownJSON(name, field string) func(*site) (string, string) {
	return func(s *site) (string, string) {
		paths := []string{"/.well-known/" + name}
		if name == "agent-card" {
			paths = []string{pAgentCard, pAgentJSON}
		}
		for _, p := range paths {
			r := s.get(p)
			if r.status != 200 {
				continue
			}
			var v map[string]any
			if err := json.Unmarshal(r.body, &v); err != nil {
				return Fail, p + " is not JSON"
			}
			if field != "" && v[field] == nil {
				return Warn, p + " has no " + field
			}
			return Pass, p + " found"
		}
		return Fail, s.get(paths[0]).describe(paths[0])
	}
}

func https(s *site) (string, string) {
	r := s.get(pHome)
	if !strings.HasPrefix(r.finalURL, "https://") && !strings.HasPrefix(s.page, "https://") {
		return Fail, "served over plain HTTP"
	}
	if s.certErr != nil {
		return Fail, "certificate: " + s.certErr.Error()
	}
	if r.err != nil {
		return Fail, "TLS: " + r.err.Error()
	}
	return Pass, "valid certificate"
}

func hsts(s *site) (string, string) {
	r := s.get(pHome)
	if r.err == nil && s.certErr == nil && strings.HasPrefix(r.finalURL, "https://") && r.header.Get("Strict-Transport-Security") != "" {
		return Pass, r.header.Get("Strict-Transport-Security")
	}
	return Fail, "no Strict-Transport-Security"
}

var policyLink = regexp.MustCompile(`(?i)contact|privacy|terms|legal|mentions|impressum|confidentialit|cgu|cgv`)

func policies(s *site) (string, string) {
	doc := s.doc()
	if doc == nil {
		return Fail, "no HTML page"
	}
	var hit string
	doc.Find("a[href]").EachWithBreak(func(_ int, a *goquery.Selection) bool {
		h, _ := a.Attr("href")
		if policyLink.MatchString(h) || policyLink.MatchString(a.Text()) {
			hit = h
			return false
		}
		return true
	})
	if hit != "" {
		return Pass, "link to " + hit
	}
	return Fail, "no contact, terms or privacy link"
}

func canonical(s *site) (string, string) {
	doc := s.doc()
	if doc == nil {
		return Fail, "no HTML page"
	}
	if h, ok := doc.Find(`link[rel="canonical" i]`).First().Attr("href"); ok && strings.TrimSpace(h) != "" {
		return Pass, h
	}
	return Fail, "no canonical link"
}

func notFound(s *site) (string, string) {
	r := s.get(pMissing)
	switch {
	case r.status == 404 || r.status == 410:
		return Pass, fmt.Sprintf("%d for a missing page", r.status)
	case r.err != nil:
		return Fail, r.describe("a missing page")
	default:
		return Fail, fmt.Sprintf("a missing page answers %d", r.status)
	}
}
