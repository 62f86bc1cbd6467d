package extract

import (
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/nyaruka/phonenumbers"
)

// Phone is a phone number the page shows, parsed and validated by libphonenumber's metadata.
type Phone struct {
	E164          string `json:"e164"`
	International string `json:"international"`
	Raw           string `json:"raw"`
	Region        string `json:"region"`
	Type          string `json:"type"`
	Source        string `json:"source"` // "tel-link" or "text"
}

// Social is a profile link on a known network.
type Social struct {
	Network string `json:"network"`
	URL     string `json:"url"`
}

// Contacts is what a page shows to reach its owner.
type Contacts struct {
	Emails []string `json:"emails"`
	Phones []Phone  `json:"phones"`
	Social []Social `json:"social"`
}

var (
	emailRx = regexp.MustCompile(`[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,24}`)
	// phoneCandidate finds digit runs that could be phone numbers; every candidate is then
	// parsed and validated by libphonenumber, which is what decides.
	phoneCandidate = regexp.MustCompile(`(?:\+|00)?\(?\d[\d\s().\-/]{6,18}\d`)
)

var socialHosts = []struct{ host, network string }{
	{"linkedin.com", "linkedin"}, {"x.com", "x"}, {"twitter.com", "x"}, {"facebook.com", "facebook"},
	{"instagram.com", "instagram"}, {"youtube.com", "youtube"}, {"tiktok.com", "tiktok"},
	{"github.com", "github"}, {"mastodon.social", "mastodon"}, {"bsky.app", "bluesky"},
	{"pinterest.com", "pinterest"}, {"threads.net", "threads"}, {"wa.me", "whatsapp"}, {"t.me", "telegram"},
}

// FindContacts collects e-mail addresses (mailto links and the visible text), phone numbers
// (tel links and the visible text, default region for national writings) and social
// profiles. text must be the page's visible text, so hidden elements are not reported.
func FindContacts(doc *goquery.Document, text, pageURL, region string) Contacts {
	c := Contacts{Emails: []string{}, Phones: []Phone{}, Social: []Social{}}
	seenMail := map[string]bool{}
	addMail := func(s string) {
		s = strings.Trim(strings.ToLower(strings.TrimSpace(s)), ".")
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s || seenMail[s] {
			return
		}
		seenMail[s] = true
		c.Emails = append(c.Emails, s)
	}
	seenPhone := map[string]bool{}
	addPhone := func(raw, source string) {
		num, err := phonenumbers.Parse(raw, region)
		if err != nil || !phonenumbers.IsValidNumber(num) {
			return
		}
		e164 := phonenumbers.Format(num, phonenumbers.E164)
		if seenPhone[e164] {
			return
		}
		seenPhone[e164] = true
		c.Phones = append(c.Phones, Phone{E164: e164, International: phonenumbers.Format(num, phonenumbers.INTERNATIONAL),
			Raw: strings.TrimSpace(raw), Region: phonenumbers.GetRegionCodeForNumber(num),
			Type: numberType(phonenumbers.GetNumberType(num)), Source: source})
	}
	base := baseURL(doc, pageURL)
	doc.Find("a[href]").Each(func(_ int, a *goquery.Selection) {
		href := strings.TrimSpace(a.AttrOr("href", ""))
		low := strings.ToLower(href)
		switch {
		case strings.HasPrefix(low, "mailto:"):
			addr, _, _ := strings.Cut(href[len("mailto:"):], "?")
			if u, err := url.PathUnescape(addr); err == nil {
				addr = u
			}
			for _, one := range strings.Split(addr, ",") {
				addMail(one)
			}
		case strings.HasPrefix(low, "tel:"):
			if u, err := url.PathUnescape(href[len("tel:"):]); err == nil {
				addPhone(u, "tel-link")
			}
		default:
			abs := Resolve(base, href)
			u, err := url.Parse(abs)
			if abs == "" || err != nil {
				return
			}
			host := strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
			host = strings.TrimPrefix(host, "m.")
			for _, s := range socialHosts {
				if (host == s.host || strings.HasSuffix(host, "."+s.host)) && strings.Trim(u.Path, "/") != "" {
					if !slices.ContainsFunc(c.Social, func(x Social) bool { return x.URL == abs }) {
						c.Social = append(c.Social, Social{Network: s.network, URL: abs})
					}
					return
				}
			}
		}
	})
	for _, m := range emailRx.FindAllString(text, -1) {
		addMail(m)
	}
	for _, m := range phoneCandidate.FindAllString(text, -1) {
		addPhone(m, "text")
	}
	return c
}

func numberType(t phonenumbers.PhoneNumberType) string {
	switch t {
	case phonenumbers.FIXED_LINE:
		return "fixed_line"
	case phonenumbers.MOBILE:
		return "mobile"
	case phonenumbers.FIXED_LINE_OR_MOBILE:
		return "fixed_line_or_mobile"
	case phonenumbers.TOLL_FREE:
		return "toll_free"
	case phonenumbers.PREMIUM_RATE:
		return "premium_rate"
	case phonenumbers.SHARED_COST:
		return "shared_cost"
	case phonenumbers.VOIP:
		return "voip"
	case phonenumbers.PERSONAL_NUMBER:
		return "personal"
	case phonenumbers.UAN:
		return "uan"
	}
	return "unknown"
}
