package domain

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/compute/mailauth"
	"github.com/peage/appliance/api/upstream/resolver"
	"github.com/peage/appliance/internal/egress"
	"github.com/peage/appliance/internal/fanout"
	"github.com/peage/appliance/internal/version"
)

// Health is the /v1/domain/health result. A site that is down is a finding, not a failure:
// its TLS or HTTP section then says why, and problems lists it.
type Health struct {
	Domain   string     `json:"domain"`
	DNS      HealthDNS  `json:"dns"`
	TLS      TLSReport  `json:"tls"`
	HTTP     HTTPReport `json:"http"`
	Problems []string   `json:"problems"`
}

// HealthDNS is the part of the domain's DNS that bears on its health.
type HealthDNS struct {
	A     []resolver.Addr  `json:"a"`
	AAAA  []resolver.Addr  `json:"aaaa"`
	CNAME []resolver.Alias `json:"cname"`
	MX    []resolver.MX    `json:"mx"`
	NS    []resolver.Host  `json:"ns"`
	CAA   []resolver.CAA   `json:"caa"`
	SPF   mailauth.SPF     `json:"spf"`
	// SPFEvaluation walks the includes and the redirect, as receivers do, to count the
	// lookups against RFC 7208's limit of 10; null when there is no usable SPF record.
	SPFEvaluation   *SPFExpansion  `json:"spf_evaluation"`
	DMARC           mailauth.DMARC `json:"dmarc"`
	DNSSECValidated bool           `json:"dnssec_validated"`
}

// TLSReport describes the certificate served on the HTTPS port for the domain's name. What
// no certificate told (the port is closed, the handshake failed) is null, never left out: the
// spec names issuer, expiry, days_left and authorized.
type TLSReport struct {
	Reachable bool    `json:"reachable"`
	Error     string  `json:"error,omitempty"`
	Version   *string `json:"version"`
	Issuer    *string `json:"issuer"`
	Subject   *string `json:"subject"`
	// Names are the certificate's DNS names (subject alternative names).
	Names     []string   `json:"names"`
	NotBefore *time.Time `json:"not_before"`
	Expiry    *time.Time `json:"expiry"`
	DaysLeft  *int       `json:"days_left"` // negative once expired
	// Authorized is true when the chain the server sent verifies, today, up to a trusted root
	// for this very name; AuthorizationError says why not.
	Authorized         bool   `json:"authorized"`
	AuthorizationError string `json:"authorization_error,omitempty"`
}

// HTTPReport follows the redirects from http://<domain>/ and reads the final answer's headers.
type HTTPReport struct {
	FinalStatus   int    `json:"final_status"`
	FinalURL      string `json:"final_url,omitempty"`
	RedirectChain []Hop  `json:"redirect_chain"`
	// HTTPSRedirect is true when the plain-HTTP address ends on an https:// page.
	HTTPSRedirect   bool               `json:"https_redirect"`
	SecurityHeaders map[string]*string `json:"security_headers"` // null when not sent
	MissingHeaders  []string           `json:"missing_headers"`
	Error           string             `json:"error,omitempty"`
}

// Hop is one request of the chain.
type Hop struct {
	URL      string `json:"url"`
	Status   int    `json:"status,omitempty"`
	Location string `json:"location,omitempty"`
	Error    string `json:"error,omitempty"`
}

const (
	maxHops     = 10
	hopTimeout  = 8 * time.Second
	maxBodyPeek = 64 << 10
	expirySoon  = 14 // days
	healthAgent = "peage-appliance (+domain health check)"
)

// securityHeaders are read from the final answer, in this order.
var securityHeaders = []string{"strict-transport-security", "content-security-policy", "x-frame-options",
	"x-content-type-options", "referrer-policy", "permissions-policy", "cross-origin-opener-policy"}

func tlsConfig(roots *x509.CertPool) *tls.Config {
	return &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
}

func (r *Routes) health(ctx context.Context, req *catalog.Request) (any, error) {
	name, err := domainArg(req)
	if err != nil {
		return nil, err
	}
	var (
		tlsRep  TLSReport
		httpRep HTTPReport
	)
	// The probes start at once for latency, and stop as soon as the DNS answer makes the
	// call fail: nobody waits for a site's timeouts to learn that the resolver is down.
	probeCtx, stopProbes := context.WithCancel(ctx)
	defer stopProbes()
	probed := make(chan []error, 1)
	go func() {
		probed <- fanout.Go(probeCtx, nil,
			func(ctx context.Context) (err error) { tlsRep, err = r.probeTLS(ctx, name); return },
			func(ctx context.Context) (err error) { httpRep, err = r.probeHTTP(ctx, name); return })
	}()
	dnsRep, err := r.healthDNS(ctx, name)
	if err != nil {
		stopProbes()
		<-probed
		return nil, err
	}
	errs := <-probed
	errTLS, errHTTP := errs[0], errs[1]
	// A domain that resolves to a refused address (loopback, private, metadata...) is the
	// caller's mistake: a 400 naming the parameter, never a probe of the box's neighbours.
	for _, err := range []error{errTLS, errHTTP} {
		var b *egress.Blocked
		if errors.As(err, &b) {
			return nil, apierr.BadParam("domain", "%s", b.Error())
		}
	}
	out := Health{Domain: name, DNS: dnsRep, TLS: tlsRep, HTTP: httpRep}
	out.Problems = problems(out, r.d.Now())
	return out, nil
}

// healthDNS reads the records, the DMARC policy and the SPF evaluation; a resolver failure
// or a name that does not exist fails the call.
func (r *Routes) healthDNS(ctx context.Context, name string) (HealthDNS, error) {
	var (
		recs  *resolver.Records
		dmarc mailauth.DMARC
	)
	errs := fanout.Go(ctx, nil,
		func(ctx context.Context) (err error) {
			recs, err = r.d.Resolver.Records(ctx, name, dns.TypeA, dns.TypeAAAA, dns.TypeCNAME, dns.TypeMX, dns.TypeNS, dns.TypeCAA, dns.TypeTXT)
			return
		},
		func(ctx context.Context) (err error) { dmarc, err = r.lookupDMARC(ctx, name); return })
	if err := firstErr(errs...); err != nil {
		return HealthDNS{}, err
	}
	if !recs.Exists {
		return HealthDNS{}, notFound(name)
	}
	out := HealthDNS{
		A: orEmpty(recs.A), AAAA: orEmpty(recs.AAAA), CNAME: orEmpty(recs.CNAME), MX: orEmpty(recs.MX),
		NS: orEmpty(recs.NS), CAA: orEmpty(recs.CAA), SPF: mailauth.ParseSPF(texts(recs.TXT)), DMARC: dmarc,
		DNSSECValidated: recs.AD,
	}
	if out.SPF.Present && out.SPF.Error == "" {
		x, err := r.expandSPF(ctx, out.SPF)
		if err != nil {
			return HealthDNS{}, err
		}
		out.SPFEvaluation = &x
	}
	return out, nil
}

func hostPort(name string, port int) string {
	return net.JoinHostPort(name, strconv.Itoa(port))
}

func (r *Routes) siteURL(scheme, name string) string {
	port, def := r.d.HTTPSPort, 443
	if scheme == "http" {
		port, def = r.d.HTTPPort, 80
	}
	if port == def {
		return scheme + "://" + name + "/"
	}
	return scheme + "://" + hostPort(name, port) + "/"
}

// probeTLS connects to the HTTPS port through the egress guard and describes the certificate.
// The handshake itself accepts any certificate, so that an expired or self-signed one can
// still be described; whether it is trustworthy is decided right after, by x509 verification
// against the roots for this name. Nothing is sent over the connection.
func (r *Routes) probeTLS(ctx context.Context, name string) (TLSReport, error) {
	ctx, cancel := context.WithTimeout(ctx, hopTimeout)
	defer cancel()
	conn, err := r.d.Egress.DialContext(ctx, "tcp", hostPort(name, r.d.HTTPSPort))
	if err != nil {
		if egress.IsBlocked(err) {
			return TLSReport{}, err
		}
		return TLSReport{Error: "no TLS connection: " + shortErr(err)}, nil
	}
	defer conn.Close()
	tc := tls.Client(conn, &tls.Config{ServerName: name, InsecureSkipVerify: true, MinVersion: tls.VersionTLS10}) //nolint:gosec // verified below, see the comment above
	if err := tc.HandshakeContext(ctx); err != nil {
		return TLSReport{Error: "TLS handshake failed: " + shortErr(err)}, nil
	}
	st := tc.ConnectionState()
	if len(st.PeerCertificates) == 0 {
		return TLSReport{Reachable: true, Error: "the server sent no certificate"}, nil
	}
	leaf := st.PeerCertificates[0]
	now := r.d.Now()
	days := int(math.Floor(leaf.NotAfter.Sub(now).Hours() / 24))
	notBefore, expiry := leaf.NotBefore.UTC(), leaf.NotAfter.UTC()
	version, issuer, subject := tls.VersionName(st.Version), leaf.Issuer.String(), leaf.Subject.String()
	rep := TLSReport{Reachable: true, Version: &version, Issuer: &issuer,
		Subject: &subject, Names: leaf.DNSNames, NotBefore: &notBefore, Expiry: &expiry, DaysLeft: &days}
	inter := x509.NewCertPool()
	for _, c := range st.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: r.d.Roots, Intermediates: inter, CurrentTime: now}); err != nil {
		rep.AuthorizationError = err.Error()
	} else {
		rep.Authorized = true
	}
	return rep, nil
}

// probeHTTP follows the redirect chain from http://<domain>/ (or from https:// when nothing
// answers plain HTTP), each hop through the egress guard.
func (r *Routes) probeHTTP(ctx context.Context, name string) (HTTPReport, error) {
	rep := HTTPReport{RedirectChain: []Hop{}, MissingHeaders: []string{}}
	cur, seen := r.siteURL("http", name), map[string]bool{}
	var final *http.Response
	for len(rep.RedirectChain) <= maxHops {
		if seen[cur] {
			rep.Error = "redirect loop at " + cur
			break
		}
		seen[cur] = true
		resp, err := r.get(ctx, cur)
		if err != nil {
			if len(rep.RedirectChain) == 0 && egress.IsBlocked(err) {
				return rep, err
			}
			rep.RedirectChain = append(rep.RedirectChain, Hop{URL: cur, Error: shortErr(err)})
			if len(rep.RedirectChain) == 1 && strings.HasPrefix(cur, "http:") {
				cur = r.siteURL("https", name)
				continue
			}
			rep.Error = "the chain stopped at " + cur
			break
		}
		hop := Hop{URL: cur, Status: resp.StatusCode}
		if loc := resp.Header.Get("Location"); resp.StatusCode >= 300 && resp.StatusCode < 400 && loc != "" {
			next, err := resolveRef(cur, loc)
			hop.Location = loc
			rep.RedirectChain = append(rep.RedirectChain, hop)
			if err != nil {
				rep.Error = "invalid redirect target " + loc
				break
			}
			hop.Location = next
			rep.RedirectChain[len(rep.RedirectChain)-1] = hop
			cur = next
			continue
		}
		rep.RedirectChain = append(rep.RedirectChain, hop)
		final = resp
		break
	}
	if final == nil {
		if rep.Error == "" {
			rep.Error = fmt.Sprintf("more than %d redirects", maxHops)
		}
		return rep, nil
	}
	rep.FinalStatus, rep.FinalURL = final.StatusCode, final.Request.URL.String()
	rep.HTTPSRedirect = strings.HasPrefix(rep.RedirectChain[0].URL, "http:") && final.Request.URL.Scheme == "https"
	rep.SecurityHeaders = map[string]*string{}
	// CSP frame-ancestors supersedes X-Frame-Options (CSP level 2), so either one will do.
	framing := strings.Contains(strings.ToLower(final.Header.Get("Content-Security-Policy")), "frame-ancestors")
	for _, h := range securityHeaders {
		if v := final.Header.Get(h); v != "" {
			rep.SecurityHeaders[h] = &v
			continue
		}
		rep.SecurityHeaders[h] = nil
		if h != "x-frame-options" || !framing {
			rep.MissingHeaders = append(rep.MissingHeaders, h)
		}
	}
	return rep, nil
}

// get performs one GET and closes its body after at most maxBodyPeek bytes, so that the
// connection can be reused and a huge page costs nothing.
func (r *Routes) get(ctx context.Context, target string) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(ctx, hopTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", healthAgent+" "+version.Version)
	resp, err := r.http.Do(req)
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBodyPeek))
	resp.Body.Close()
	return resp, nil
}

func resolveRef(base, ref string) (string, error) {
	b, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	u, err := b.Parse(ref)
	if err != nil {
		return "", err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("scheme %q", u.Scheme)
	}
	return u.String(), nil
}

func shortErr(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	s := err.Error()
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// problems lists, in plain words, what a site owner should fix.
func problems(h Health, now time.Time) []string {
	out := []string{}
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	switch t := h.TLS; {
	case !t.Reachable:
		add("no HTTPS: %s", t.Error)
	case !t.Authorized:
		add("the certificate is not trusted for %s: %s", h.Domain, t.AuthorizationError)
	}
	if exp := h.TLS.Expiry; exp != nil && exp.Before(now) {
		add("the certificate expired %d days ago", int(now.Sub(*exp).Hours()/24))
	} else if d := h.TLS.DaysLeft; d != nil && *d < expirySoon {
		add("the certificate expires in %d days", *d)
	}
	if h.HTTP.Error != "" {
		add("HTTP: %s", h.HTTP.Error)
	}
	if h.HTTP.FinalStatus >= 400 {
		add("the site answers status %d", h.HTTP.FinalStatus)
	}
	if h.HTTP.FinalStatus != 0 && !h.HTTP.HTTPSRedirect && strings.HasPrefix(h.HTTP.FinalURL, "http:") {
		add("plain HTTP is not redirected to HTTPS")
	}
	for _, m := range h.HTTP.MissingHeaders {
		add("missing security header %s", m)
	}
	if h.DNS.SPF.Error != "" {
		add("SPF: %s", h.DNS.SPF.Error)
	} else if x := h.DNS.SPFEvaluation; x != nil && x.Error != "" {
		add("SPF: %s", x.Error)
	}
	if h.DNS.DMARC.Error != "" {
		add("DMARC: %s", h.DNS.DMARC.Error)
	} else if !h.DNS.DMARC.Present {
		add("no DMARC policy: anyone can send mail in the domain's name")
	}
	return out
}
