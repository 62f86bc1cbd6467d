package domain_test

import (
	"context"
	"encoding/json"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/routes/domain"
	"github.com/peage/appliance/api/upstream/resolver"
	"github.com/peage/appliance/api/upstream/resolver/resolvertest"
	"github.com/peage/appliance/internal/egress"
)

// zones serves the resolver connector's zone fixture.
func zones(t *testing.T) *resolvertest.Server {
	t.Helper()
	b, err := os.ReadFile("../../upstream/resolver/testdata/zones.db")
	if err != nil {
		t.Fatal(err)
	}
	return resolvertest.Start(t, string(b))
}

type setup struct {
	resolverAddr string
	gate         paywall.Gate // nil: the challenge-only gate of production without a facilitator
	sites        *sites
	timeout      time.Duration
}

// start serves the real catalog with this family bound through the real server.
func start(t *testing.T, s setup) *apitest.Harness {
	t.Helper()
	res, err := resolver.New(resolver.Config{Resolver: s.resolverAddr, Timeout: s.timeout})
	if err != nil {
		t.Fatal(err)
	}
	ecfg := egress.Config{Resolver: &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", s.resolverAddr)
	}}}
	deps := domain.Parts{Resolver: res}
	if s.sites != nil {
		ecfg.Allow = s.sites.allow()
		deps.Roots, deps.HTTPPort, deps.HTTPSPort = s.sites.roots, s.sites.httpPort, s.sites.httpsPort
		deps.Now = func() time.Time { return s.sites.now }
	}
	pol, err := egress.New(ecfg)
	if err != nil {
		t.Fatal(err)
	}
	deps.Egress = pol
	return apitest.StartFamily(t, catalog.DefaultNames(), domain.With(deps), apitest.Options{Gate: s.gate})
}

func call(t *testing.T, h *apitest.Harness, path string, q url.Values) (int, map[string]any) {
	t.Helper()
	st, b := h.Get(t, path, q)
	out, _ := apitest.Decode(t, b).(map[string]any)
	return st, out
}

func length(v any) int { l, _ := v.([]any); return len(l) }

func TestDNS(t *testing.T) {
	srv := zones(t)
	gate := &apitest.RecordingGate{}
	h := start(t, setup{resolverAddr: srv.Addr, gate: gate})
	tests := []struct {
		domain string
		status int
		check  func(map[string]any) bool
	}{
		{"corp.test", 200, func(o map[string]any) bool {
			return apitest.At(o, "domain") == "corp.test" && apitest.At(o, "a", 0, "ip") == "192.0.2.10" && apitest.At(o, "a", 0, "ttl") == 300.0 &&
				apitest.At(o, "aaaa", 0, "ip") == "2001:db8::10" && length(o["mx"]) == 5 && apitest.At(o, "mx", 0, "exchange") == "mx1.corp.test" &&
				length(o["ns"]) == 2 && length(o["txt"]) == 16 && apitest.At(o, "soa", "serial") == 2026112201.0 &&
				apitest.At(o, "caa", 0, "tag") == "issue" && length(o["cname"]) == 0 &&
				apitest.At(o, "spf", "all") == "softfail" && apitest.At(o, "spf", "mechanisms", 2, "type") == "include" &&
				apitest.At(o, "spf", "mechanisms", 6, "qualifier") == "fail" && apitest.At(o, "spf", "lookups") == 6.0 &&
				apitest.At(o, "dmarc", "p") == "reject" && apitest.At(o, "dmarc", "sp") == "quarantine" && apitest.At(o, "dmarc", "pct") == 50.0 &&
				length(apitest.At(o, "dmarc", "rua")) == 2 && apitest.At(o, "dmarc", "source") == "_dmarc.corp.test" &&
				apitest.At(o, "dnssec_validated") == false && apitest.At(o, "resolver") == srv.Addr
		}},
		{"www.chain.test", 200, func(o map[string]any) bool {
			return length(o["cname"]) == 2 && apitest.At(o, "cname", 0, "target") == "www.chain.test.cdn.test" &&
				apitest.At(o, "cname", 1, "target") == "edge.cdn.test" && length(o["a"]) == 2 && length(o["aaaa"]) == 1 &&
				apitest.At(o, "soa") == nil && apitest.At(o, "spf", "present") == false
		}},
		{"shop.corp.test", 200, func(o map[string]any) bool { // no DMARC of its own: the organisational domain's
			return apitest.At(o, "dmarc", "source") == "_dmarc.corp.test" && apitest.At(o, "dmarc", "p") == "reject"
		}},
		{"twospf.test", 200, func(o map[string]any) bool {
			e, _ := apitest.At(o, "spf", "error").(string)
			de, _ := apitest.At(o, "dmarc", "error").(string)
			return strings.HasPrefix(e, "permerror: 2 SPF records") && length(apitest.At(o, "spf", "records")) == 2 &&
				apitest.At(o, "dmarc", "p") == "none" && strings.Contains(de, "p tag")
		}},
		{"nomail.test", 200, func(o map[string]any) bool {
			return apitest.At(o, "mx", 0, "exchange") == "." && apitest.At(o, "spf", "all") == "fail" && apitest.At(o, "dmarc", "p") == "reject"
		}},
		{"parked.test", 200, func(o map[string]any) bool {
			return length(o["a"]) == 1 && length(o["mx"]) == 0 && length(o["txt"]) == 0 && apitest.At(o, "dmarc", "present") == false
		}},
		{"Café.fr", 200, func(o map[string]any) bool {
			return apitest.At(o, "domain") == "xn--caf-dma.fr" && apitest.At(o, "domain_unicode") == "café.fr" && apitest.At(o, "spf", "all") == "fail"
		}},
		{"nowhere.test", 404, func(o map[string]any) bool { return apitest.At(o, "error", "code") == "not_found" }},
	}
	for _, tt := range tests {
		t.Run(tt.domain, func(t *testing.T) {
			code, out := call(t, h, "/v1/dns", url.Values{"domain": {tt.domain}})
			if code != tt.status || !tt.check(out) {
				b, _ := json.MarshalIndent(out, "", " ")
				t.Fatalf("%d %s", code, b)
			}
		})
	}
	if charged, waived := gate.Counts(); charged != 7 || waived != 1 {
		t.Fatalf("charged %d, waived %d: only the 404 is free", charged, waived)
	}
}

func TestEmail(t *testing.T) {
	srv := zones(t)
	h := start(t, setup{resolverAddr: srv.Addr, gate: &apitest.RecordingGate{}})
	validate := []struct {
		email    string
		valid    bool
		fallback string
		nullMX   bool
		reason   string
	}{
		{"contact@corp.test", true, "", false, "MX records"},
		{"jean@café.fr", true, "", false, "MX records"},
		{"x@parked.test", true, "a", false, "RFC 5321"},
		{"x@nomail.test", false, "", true, "null MX"},
		{"x@nowhere.test", false, "", false, "NXDOMAIN"},
		{"x@chain.test", true, "a", false, "no MX"},
	}
	for _, tt := range validate {
		t.Run("validate "+tt.email, func(t *testing.T) {
			code, o := call(t, h, "/v1/email/validate", url.Values{"email": {tt.email}})
			reason, _ := o["reason"].(string)
			fb, _ := o["mx_fallback"].(string)
			if code != 200 || o["email"] != tt.email || o["valid"] != tt.valid || fb != tt.fallback || o["null_mx"] != tt.nullMX ||
				!strings.Contains(reason, tt.reason) || o["mx"] == nil || (tt.nullMX && length(o["mx"]) != 0) {
				t.Fatalf("%d %v", code, o)
			}
		})
	}

	verify := []struct {
		email   string
		verdict string
		reason  string
		check   func(map[string]any) bool
	}{
		{"jean.dupont@corp.test", "LIKELY", "no risk rule fired", func(o map[string]any) bool {
			return apitest.At(o, "checks", "mx_present") == true && apitest.At(o, "checks", "spf_present") == true &&
				apitest.At(o, "checks", "dmarc_policy") == "reject" && apitest.At(o, "checks", "disposable_domain") == false &&
				apitest.At(o, "role_address") == false && apitest.At(o, "mailbox_probed") == false
		}},
		{"info@corp.test", "RISKY", "role address", func(o map[string]any) bool { return apitest.At(o, "role_address") == true }},
		{"someone@mailinator.com", "RISKY", "disposable-mail domain (mailinator.com)", func(o map[string]any) bool {
			return apitest.At(o, "checks", "disposable_domain") == true && apitest.At(o, "checks", "dmarc_policy") == nil
		}},
		{"jean@gmial.com", "RISKY", "typo of gmail.com", func(o map[string]any) bool {
			return apitest.At(o, "suggestion") == "jean@gmail.com" && apitest.At(o, "checks", "typo_of") == "gmail.com"
		}},
		{"x@parked.test", "RISKY", "no MX record", func(o map[string]any) bool {
			return apitest.At(o, "checks", "a_fallback") == true && length(o["reasons"]) == 2 // and neither SPF nor DMARC
		}},
		{"x@twospf.test", "LIKELY", "no risk rule fired", func(o map[string]any) bool { // DMARC usable as p=none, SPF broken
			return apitest.At(o, "checks", "spf_present") == false && apitest.At(o, "checks", "spf_error") != nil
		}},
		{"x@nomail.test", "NO", "null MX", func(o map[string]any) bool { return apitest.At(o, "checks", "null_mx") == true }},
		{"x@nowhere.test", "NO", "NXDOMAIN", func(o map[string]any) bool { return apitest.At(o, "checks", "domain_exists") == false }},
		{"jean@café.fr", "LIKELY", "", func(o map[string]any) bool { return apitest.At(o, "domain") == "xn--caf-dma.fr" }},
		{"x@shop.corp.test", "LIKELY", "", func(o map[string]any) bool { return apitest.At(o, "checks", "dmarc_policy") == "reject" }},
	}
	for _, tt := range verify {
		t.Run("verify "+tt.email, func(t *testing.T) {
			code, o := call(t, h, "/v1/email/verify", url.Values{"email": {tt.email}})
			reasons, _ := json.Marshal(o["reasons"])
			if code != 200 || o["deliverable"] != tt.verdict || !strings.Contains(string(reasons), tt.reason) || !tt.check(o) {
				b, _ := json.MarshalIndent(o, "", " ")
				t.Fatalf("%d %s", code, b)
			}
		})
	}
}

// TestBadParamsBeforePayment uses the production gate without a facilitator: a valid call
// gets the 402 challenge, a bad one a 400 naming the parameter, and the resolver is never
// asked about a bad one.
func TestBadParamsBeforePayment(t *testing.T) {
	srv := zones(t)
	h := start(t, setup{resolverAddr: srv.Addr})
	tests := []struct {
		path, param, value string
		status             int
	}{
		{"/v1/dns", "domain", "-bad.com", 400},
		{"/v1/dns", "domain", "under_score.com", 400},
		{"/v1/dns", "domain", "localhost", 400},
		{"/v1/dns", "domain", "192.0.2.1", 400},
		{"/v1/dns", "domain", "", 400},
		{"/v1/domain/health", "domain", "exa mple.com", 400},
		{"/v1/email/validate", "email", "not-an-address", 400},
		{"/v1/email/verify", "email", "Jean <jean@corp.test>", 400},
		{"/v1/email/verify", "email", "jean@-corp.test", 400},
		{"/v1/dns", "domain", "пример.рф", 402},
		{"/v1/email/verify", "email", "jean@corp.test", 402},
		{"/v1/domain/health", "domain", "corp.test", 402},
	}
	for _, tt := range tests {
		t.Run(tt.path+" "+tt.value, func(t *testing.T) {
			code, o := call(t, h, tt.path, url.Values{tt.param: {tt.value}})
			if code != tt.status || (code == 400 && apitest.At(o, "error", "param") != tt.param) {
				t.Fatalf("%d %v", code, o)
			}
		})
	}
	if n := srv.Queries.Load(); n != 0 {
		t.Fatalf("the resolver was asked %d questions before any payment", n)
	}
}

func TestResolverDownIsNotCharged(t *testing.T) {
	// Addresses are taken inside each subtest: a silent resolver opened earlier could otherwise
	// be given the very port the unreachable one just released.
	tests := []struct {
		name   string
		addr   func(testing.TB) string
		status int
		code   string
	}{
		{"unreachable", resolvertest.Unreachable, 502, "upstream_failed"},
		{"silent", resolvertest.Silent, 504, "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gate := &apitest.RecordingGate{}
			addr := tt.addr(t)
			h := start(t, setup{resolverAddr: addr, gate: gate, timeout: 300 * time.Millisecond})
			for _, c := range []struct{ path, param, value string }{
				{"/v1/dns", "domain", "corp.test"}, {"/v1/email/validate", "email", "a@corp.test"},
				{"/v1/email/verify", "email", "a@corp.test"}, {"/v1/domain/health", "domain", "corp.test"},
			} {
				code, o := call(t, h, c.path, url.Values{c.param: {c.value}})
				msg, _ := apitest.At(o, "error", "message").(string)
				if code != tt.status || apitest.At(o, "error", "code") != tt.code || apitest.At(o, "error", "upstream") != "dns" || !strings.Contains(msg, addr) {
					t.Fatalf("%s: %d %v", c.path, code, o)
				}
			}
			if charged, waived := gate.Counts(); charged != 0 || waived != 4 {
				t.Fatalf("charged %d, waived %d", charged, waived)
			}
		})
	}
}

func TestUnavailableWithoutResolver(t *testing.T) {
	h := apitest.StartFamily(t, catalog.DefaultNames(), domain.With(domain.Parts{ResolverErr: os.ErrNotExist}), apitest.Options{})
	if code, o := call(t, h, "/v1/dns", url.Values{"domain": {"corp.test"}}); code != 503 {
		t.Fatalf("%d %v", code, o)
	}
}

func TestHealth(t *testing.T) {
	srv := zones(t)
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	s := startSites(t, now)
	gate := &apitest.RecordingGate{}
	h := start(t, setup{resolverAddr: srv.Addr, gate: gate, sites: s})
	httpsBase := func(name string) string { return "https://" + name + ":" + itoa(s.httpsPort) }
	tests := []struct {
		domain string
		status int
		check  func(map[string]any) bool
	}{
		{"valid.site.test", 200, func(o map[string]any) bool {
			return apitest.At(o, "tls", "authorized") == true && apitest.At(o, "tls", "days_left") == 90.0 &&
				apitest.At(o, "tls", "issuer") == "CN=Test Root CA,O=peage tests" && apitest.At(o, "tls", "expiry") == s.validUntil.UTC().Format(time.RFC3339) &&
				apitest.At(o, "http", "final_status") == 200.0 && apitest.At(o, "http", "https_redirect") == true &&
				length(apitest.At(o, "http", "redirect_chain")) == 3 && apitest.At(o, "http", "redirect_chain", 0, "status") == 301.0 &&
				apitest.At(o, "http", "redirect_chain", 1, "location") == httpsBase("valid.site.test")+"/home" &&
				apitest.At(o, "http", "final_url") == httpsBase("valid.site.test")+"/home" &&
				apitest.At(o, "http", "security_headers", "strict-transport-security") == "max-age=63072000; includeSubDomains" &&
				apitest.At(o, "http", "security_headers", "x-frame-options") == nil &&
				!contains(apitest.At(o, "http", "missing_headers"), "x-frame-options") && // CSP frame-ancestors stands for it
				contains(apitest.At(o, "http", "missing_headers"), "permissions-policy") &&
				apitest.At(o, "dns", "a", 0, "ip") == "127.0.0.1" && apitest.At(o, "dns", "mx", 0, "exchange") == "mx1.corp.test" &&
				apitest.At(o, "dns", "spf_evaluation", "lookups") == 4.0 && apitest.At(o, "dns", "spf_evaluation", "within_limit") == true &&
				apitest.At(o, "dns", "dmarc", "p") == "quarantine" && !contains(o["problems"], "no DMARC policy: anyone can send mail in the domain's name")
		}},
		{"expired.site.test", 200, func(o map[string]any) bool {
			e, _ := apitest.At(o, "tls", "authorization_error").(string)
			return apitest.At(o, "tls", "reachable") == true && apitest.At(o, "tls", "authorized") == false && apitest.At(o, "tls", "days_left") == -4.0 &&
				strings.Contains(e, "expired") && contains(o["problems"], "the certificate expired 3 days ago") &&
				apitest.At(o, "http", "redirect_chain", 1, "error") != nil && apitest.At(o, "http", "final_status") == 0.0 &&
				apitest.At(o, "dns", "spf_evaluation", "lookups") == 12.0 && apitest.At(o, "dns", "spf_evaluation", "within_limit") == false && // the redirect, then toomany.test's 11
				contains(o["problems"], "SPF: permerror: the evaluation needs more than 10 DNS lookups") &&
				contains(o["problems"], "no DMARC policy: anyone can send mail in the domain's name")
		}},
		{"selfsigned.site.test", 200, func(o map[string]any) bool {
			e, _ := apitest.At(o, "tls", "authorization_error").(string)
			return apitest.At(o, "tls", "authorized") == false && apitest.At(o, "tls", "issuer") == "CN=selfsigned.site.test" &&
				strings.Contains(e, "unknown authority") && apitest.At(o, "tls", "days_left") == 90.0
		}},
		{"brokeninc.test", 200, func(o map[string]any) bool { // mail only: no address, so no site; an SPF include gone
			tlsErr, _ := apitest.At(o, "tls", "error").(string)
			return apitest.At(o, "tls", "reachable") == false && strings.HasPrefix(tlsErr, "no TLS connection") &&
				apitest.At(o, "http", "final_status") == 0.0 && length(apitest.At(o, "http", "redirect_chain")) == 2 &&
				apitest.At(o, "dns", "spf_evaluation", "error") == "permerror: retired-esp.test publishes no SPF record" &&
				contains(o["problems"], "SPF: permerror: retired-esp.test publishes no SPF record")
		}},
		{"private.site.test", 400, func(o map[string]any) bool {
			m, _ := apitest.At(o, "error", "message").(string)
			return apitest.At(o, "error", "param") == "domain" && strings.Contains(m, "private")
		}},
		{"nowhere.test", 404, func(o map[string]any) bool { return apitest.At(o, "error", "code") == "not_found" }},
	}
	for _, tt := range tests {
		t.Run(tt.domain, func(t *testing.T) {
			code, o := call(t, h, "/v1/domain/health", url.Values{"domain": {tt.domain}})
			if code != tt.status || !tt.check(o) {
				b, _ := json.MarshalIndent(o, "", " ")
				t.Fatalf("%d %s", code, b)
			}
		})
	}
	if charged, waived := gate.Counts(); charged != 4 || waived != 2 {
		t.Fatalf("charged %d, waived %d", charged, waived)
	}
}

func contains(list any, s string) bool {
	l, _ := list.([]any)
	for _, v := range l {
		if v == s {
			return true
		}
	}
	return false
}

func itoa(n int) string { return strconv.Itoa(n) }
