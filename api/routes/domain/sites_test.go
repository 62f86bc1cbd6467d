package domain_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

// sites is one HTTPS server choosing its certificate by SNI (a valid one from the test's own
// CA, an expired one from the same CA, a self-signed one) and one plain-HTTP server that
// redirects every request to HTTPS, as most sites do.
type sites struct {
	roots                 *x509.CertPool
	httpPort, httpsPort   int
	httpAddr, httpsAddr   string
	now                   time.Time
	validUntil, expiredAt time.Time
}

func key(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func issue(t *testing.T, tmpl, parent *x509.Certificate, pub *ecdsa.PublicKey, signer *ecdsa.PrivateKey) *x509.Certificate {
	t.Helper()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func startSites(t *testing.T, now time.Time) *sites {
	t.Helper()
	s := &sites{now: now, validUntil: now.Add(90*24*time.Hour + time.Hour), expiredAt: now.Add(-3*24*time.Hour - time.Hour)}
	caKey := key(t)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Test Root CA", Organization: []string{"peage tests"}},
		NotBefore: now.Add(-365 * 24 * time.Hour), NotAfter: now.Add(365 * 24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	ca := issue(t, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	s.roots = x509.NewCertPool()
	s.roots.AddCert(ca)

	leaf := func(serial int64, name string, notBefore, notAfter time.Time, selfSigned bool) tls.Certificate {
		k := key(t)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
			NotBefore: notBefore, NotAfter: notAfter, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
		parent, signer := ca, caKey
		if selfSigned {
			parent, signer = tmpl, k
		}
		c := issue(t, tmpl, parent, &k.PublicKey, signer)
		chain := [][]byte{c.Raw}
		if !selfSigned {
			chain = append(chain, ca.Raw)
		}
		return tls.Certificate{Certificate: chain, PrivateKey: k, Leaf: c}
	}
	certs := map[string]tls.Certificate{
		"valid.site.test":      leaf(2, "valid.site.test", now.Add(-24*time.Hour), s.validUntil, false),
		"expired.site.test":    leaf(3, "expired.site.test", now.Add(-90*24*time.Hour), s.expiredAt, false),
		"selfsigned.site.test": leaf(4, "selfsigned.site.test", now.Add(-24*time.Hour), s.validUntil, true),
	}

	secure := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS.ServerName == "valid.site.test" {
			w.Header().Set("Strict-Transport-Security", "max-age=63072000; includeSubDomains")
			w.Header().Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.Header().Set("Referrer-Policy", "strict-origin-when-cross-origin")
			if r.URL.Path == "/" {
				http.Redirect(w, r, "/home", http.StatusFound)
				return
			}
		}
		_, _ = w.Write([]byte("<html>ok</html>"))
	}))
	secure.TLS = &tls.Config{GetCertificate: func(h *tls.ClientHelloInfo) (*tls.Certificate, error) {
		c := certs[h.ServerName]
		return &c, nil
	}}
	secure.StartTLS()
	t.Cleanup(secure.Close)
	s.httpsAddr = secure.Listener.Addr().String()
	s.httpsPort = port(t, s.httpsAddr)

	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.Host)
		http.Redirect(w, r, "https://"+net.JoinHostPort(host, strconv.Itoa(s.httpsPort))+r.URL.Path, http.StatusMovedPermanently)
	}))
	t.Cleanup(plain.Close)
	s.httpAddr = plain.Listener.Addr().String()
	s.httpPort = port(t, s.httpAddr)
	return s
}

func port(t *testing.T, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(p)
	return n
}

// allow lists the site names on the test's ports for the egress guard.
func (s *sites) allow() []string {
	var out []string
	for _, name := range []string{"valid.site.test", "expired.site.test", "selfsigned.site.test"} {
		out = append(out, net.JoinHostPort(name, strconv.Itoa(s.httpPort)), net.JoinHostPort(name, strconv.Itoa(s.httpsPort)))
	}
	return out
}
