// Package domain serves the DNS, e-mail and domain-health routes: /v1/dns,
// /v1/email/validate, /v1/email/verify and /v1/domain/health. Records come from the configured
// recursive resolver (api/upstream/resolver); the TLS and HTTP probes of domain/health dial the
// user's domain through the egress guard only. No mailbox is ever probed.
package domain

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/compute/dnsname"
	"github.com/peage/appliance/api/upstream/resolver"
	"github.com/peage/appliance/internal/egress"
)

// Parts are the family's collaborators.
type Parts struct {
	// Resolver answers the DNS questions; nil leaves every route of the family unavailable
	// (503 before any 402) with ResolverErr as the reason.
	Resolver    *resolver.Client
	ResolverErr error
	// Egress dials the user's domain for the TLS and HTTP probes of domain/health.
	Egress *egress.Policy
	// Roots verifies certificates; nil means the system's roots.
	Roots *x509.CertPool
	// HTTPPort and HTTPSPort are 80 and 443 unless a test serves elsewhere.
	HTTPPort, HTTPSPort int
	Now                 func() time.Time
}

// Routes holds the family's handlers.
type Routes struct {
	d    Parts
	http *http.Client // never follows redirects by itself: each hop is recorded
}

// With builds the family.
func With(d Parts) *Routes {
	if d.HTTPPort == 0 {
		d.HTTPPort = 80
	}
	if d.HTTPSPort == 0 {
		d.HTTPSPort = 443
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	r := &Routes{d: d}
	if d.Egress != nil {
		t := d.Egress.Transport()
		t.TLSClientConfig = tlsConfig(d.Roots)
		r.http = &http.Client{Transport: t, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	return r
}

// Bind attaches the handlers; each route is ready only when a resolver is configured, and
// domain/health also needs the egress guard.
func (r *Routes) Bind(c *catalog.Catalog) error {
	// The catalog may import only the standard library, so the exact IDNA2008 check of domain
	// names (and of e-mail domains, which go through it) is installed here, where the routes
	// that take them are compiled in. It runs before any 402 like every format check.
	if err := c.RefineFormat("domain", dnsname.Check); err != nil {
		return err
	}
	ready := func() error {
		if r.d.Resolver == nil {
			if r.d.ResolverErr != nil {
				return fmt.Errorf("no DNS resolver: %w", r.d.ResolverErr)
			}
			return errors.New("no DNS resolver configured")
		}
		return nil
	}
	healthReady := func() error {
		if r.http == nil {
			return errors.New("no egress guard")
		}
		return ready()
	}
	for _, b := range []struct {
		id    string
		h     catalog.Handler
		ready func() error
	}{
		{"dns", r.dns, ready},
		{"email.validate", r.validate, ready},
		{"email.verify", r.verify, ready},
		{"domain.health", r.health, healthReady},
	} {
		if err := c.Bind(b.id, b.h, b.ready); err != nil {
			return err
		}
	}
	return nil
}

// domainArg returns the ASCII form of the validated domain parameter.
func domainArg(req *catalog.Request) (ascii string, err error) {
	ascii, err = dnsname.ToASCII(req.Args.Str("domain"))
	if err != nil {
		return "", apierr.BadParam("domain", "domain %s", err.Error())
	}
	return ascii, nil
}

func notFound(name string) error {
	return apierr.NotFound("%s does not exist in the DNS (NXDOMAIN)", name)
}

// orEmpty keeps list fields as [] rather than null, so every answer has the same shape.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
