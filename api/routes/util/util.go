// Package util serves the utility routes that need no upstream service: the appliance itself
// probes the user's target, always through the egress guard.
package util

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/internal/egress"
	"github.com/peage/appliance/internal/version"
)

// Routes holds the collaborators of the utility family.
type Routes struct {
	policy *egress.Policy
	client *http.Client // never follows redirects by itself: each hop is checked and recorded
}

func With(policy *egress.Policy) *Routes {
	return &Routes{policy: policy, client: &http.Client{
		Transport:     policy.Transport(),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Bind attaches the family's handlers.
func (r *Routes) Bind(c *catalog.Catalog) error {
	for id, h := range map[string]catalog.Handler{"url.unwrap": r.unwrap, "x402.inspect": r.inspect} {
		if err := c.Bind(id, h, nil); err != nil {
			return err
		}
	}
	return nil
}

const (
	maxHops      = 10
	hopTimeout   = 8 * time.Second
	maxBodyPeek  = 64 << 10
	userAgent    = "peage-appliance (+url inspection; no payment is ever sent)"
	targetSource = "target"
)

// Hop is one step of a redirect chain. Status is null for a hop that got no answer (blocked,
// unreachable), Location for the last hop, which redirects nowhere: both are there, as the
// spec names them.
type Hop struct {
	URL      string  `json:"url"`
	Status   *int    `json:"status"`
	Location *string `json:"location"`
	Via      string  `json:"via,omitempty"` // "header" or "meta-refresh"
	Blocked  string  `json:"blocked,omitempty"`
}

// fetch performs one request through the egress guard and returns the response with at most
// maxBodyPeek bytes of body read. A non-empty origin is sent as the request's Origin, as a
// browser script's request carries it (servers may answer CORS headers only then).
func (r *Routes) fetch(ctx context.Context, method, target, origin string, body io.Reader) (*http.Response, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, hopTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("User-Agent", userAgent+" "+version.Version)
	req.Header.Set("Accept", "application/json, text/html;q=0.9, */*;q=0.5")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	peek, _ := io.ReadAll(io.LimitReader(resp.Body, maxBodyPeek))
	return resp, peek, nil
}

// targetError maps a failure to reach the user's target: a refused address is the caller's
// mistake (400 naming the parameter); anything else is the target failing (502/504).
func targetError(param string, err error) error {
	var b *egress.Blocked
	if errors.As(err, &b) {
		return apierr.BadParam(param, "%s", b.Error())
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Timeout() {
		return apierr.Upstream(targetSource, context.DeadlineExceeded, "the target did not answer within %s", hopTimeout)
	}
	return apierr.Upstream(targetSource, err, "the target could not be reached: %s", shortErr(err))
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

var metaRefresh = regexp.MustCompile(`(?is)<meta[^>]+http-equiv\s*=\s*["']?refresh["']?[^>]*content\s*=\s*["']\s*\d+\s*;\s*url\s*=\s*['"]?([^"'>\s]+)`)

func (r *Routes) unwrap(ctx context.Context, req *catalog.Request) (any, error) {
	start := req.Args.Str("url")
	current := start
	var chain []Hop
	seen := map[string]bool{}
	loop, stopped := false, ""
	finalStatus := 0
	for len(chain) <= maxHops {
		if seen[current] {
			loop = true
			break
		}
		seen[current] = true
		resp, peek, err := r.fetch(ctx, http.MethodHead, current, "", nil)
		if err == nil && (resp.StatusCode == http.StatusMethodNotAllowed || resp.StatusCode == http.StatusNotImplemented || resp.StatusCode == http.StatusForbidden) {
			resp, peek, err = r.fetch(ctx, http.MethodGet, current, "", nil)
		}
		if err != nil {
			if len(chain) == 0 {
				return nil, targetError("url", err)
			}
			hop := Hop{URL: current}
			if egress.IsBlocked(err) {
				hop.Blocked = err.Error()
			} else {
				hop.Blocked = "unreachable: " + shortErr(err)
			}
			chain = append(chain, hop)
			stopped = hop.Blocked
			break
		}
		status := resp.StatusCode
		hop := Hop{URL: current, Status: &status}
		finalStatus = resp.StatusCode
		next := ""
		if loc := resp.Header.Get("Location"); resp.StatusCode >= 300 && resp.StatusCode < 400 && loc != "" {
			next, hop.Via = loc, "header"
		} else if resp.StatusCode == http.StatusOK && strings.Contains(resp.Header.Get("Content-Type"), "html") {
			if len(peek) == 0 { // a HEAD has no body: look at the page itself
				if _, body, err := r.fetch(ctx, http.MethodGet, current, "", nil); err == nil {
					peek = body
				}
			}
			if m := metaRefresh.FindSubmatch(peek); m != nil {
				next, hop.Via = string(m[1]), "meta-refresh"
			}
		}
		if next == "" {
			chain = append(chain, hop)
			break
		}
		abs, err := resolveRef(current, next)
		if err != nil {
			hop.Location = &next
			chain = append(chain, hop)
			stopped = "invalid redirect target"
			break
		}
		hop.Location = &abs
		chain = append(chain, hop)
		current = abs
	}
	if len(chain) > maxHops {
		stopped = fmt.Sprintf("more than %d redirects", maxHops)
	}
	final := chain[len(chain)-1].URL
	out := map[string]any{
		"url":            start,
		"final_url":      final,
		"final_status":   finalStatus,
		"hops":           len(chain) - 1,
		"domain_changed": host(start) != host(final),
		"loop":           loop,
		"chain":          chain,
	}
	if stopped != "" {
		out["stopped"] = stopped
	}
	return out, nil
}

func resolveRef(base, ref string) (string, error) {
	b, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	r, err := url.Parse(ref)
	if err != nil {
		return "", err
	}
	u := b.ResolveReference(r)
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("scheme %q", u.Scheme)
	}
	return u.String(), nil
}

func host(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
}
