package extract

import (
	"strings"
)

// Challenge describes an anti-bot wall detected on a page.
type Challenge struct {
	Vendor string `json:"vendor"`
	Signal string `json:"signal"`
}

var challengeMarkers = []struct{ vendor, needle string }{
	{"cloudflare", "/cdn-cgi/challenge-platform/"},
	{"cloudflare", "challenges.cloudflare.com/turnstile"},
	{"cloudflare", "cf-browser-verification"},
	{"cloudflare", `id="challenge-running"`},
	{"datadome", "captcha-delivery.com"},
	{"perimeterx", "px-captcha"},
	{"perimeterx", "/_px/"},
	{"akamai", "_abck"},
	{"imperva", "/_incapsula_resource"},
	{"kasada", "ips.js?"},
	{"recaptcha", "www.google.com/recaptcha/"},
	{"recaptcha", `class="g-recaptcha"`},
	{"hcaptcha", "hcaptcha.com/1/api.js"},
	{"hcaptcha", `class="h-captcha"`},
	{"aws-waf", "awswaf.com"},
}

var challengeTitles = []struct{ vendor, title string }{
	{"cloudflare", "just a moment..."},
	{"cloudflare", "attention required! | cloudflare"},
	{"cloudflare", "un instant…"},
	{"generic", "access denied"},
	{"generic", "are you a robot?"},
	{"generic", "pardon our interruption"},
	{"generic", "robot check"},
	{"generic", "human verification"},
	{"generic", "vérification de sécurité"},
}

// DetectChallenge reports a captcha or bot-challenge page. It looks at the response header
// Cloudflare sets on challenges, the page title, and the scripts and widgets of the known
// vendors. A page that merely embeds a captcha in a form among real content is a wall only
// when the page has little else to read (visible text under 400 characters).
func DetectChallenge(status int, header map[string]string, title, html, text string) *Challenge {
	if strings.EqualFold(header["cf-mitigated"], "challenge") {
		return &Challenge{Vendor: "cloudflare", Signal: "cf-mitigated: challenge header"}
	}
	lt := strings.ToLower(strings.TrimSpace(title))
	for _, c := range challengeTitles {
		if lt == c.title {
			return &Challenge{Vendor: c.vendor, Signal: "title " + title}
		}
	}
	thin := len([]rune(strings.TrimSpace(text))) < 400
	blockedStatus := status == 403 || status == 429 || status == 503
	if !thin && !blockedStatus {
		return nil
	}
	for _, m := range challengeMarkers {
		if strings.Contains(html, m.needle) {
			return &Challenge{Vendor: m.vendor, Signal: "page contains " + m.needle}
		}
	}
	return nil
}
