// Package httpc is the one HTTP client under every connector: a deadline per attempt,
// retries with backoff for idempotent calls only, a token bucket per upstream, a circuit
// breaker, and a User-Agent that says who we are. It returns *upstream.Error for every failure.
package httpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/mail"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/internal/version"
)

// maxBody bounds what we read from an upstream; the largest legitimate answer is the
// transport.data.gouv.fr catalogue (a few MB).
const maxBody = 32 << 20

// Log keys.
const (
	keyUpstream = obs.KeyUpstream
	keyOp       = obs.KeyOp
	keyStatus   = obs.KeyStatus
	keyAttempt  = obs.KeyAttempt
	keyErr      = obs.KeyErr
)

// Options are shared by every client of one process.
type Options struct {
	Contact   string            // appears in the User-Agent
	Transport http.RoundTripper // nil means a tuned default
	Logger    *slog.Logger
	// Backoff is the first retry delay; later ones double, with jitter. Zero means 200ms.
	Backoff time.Duration
	// BreakerThreshold consecutive failures open the breaker for BreakerCooldown.
	BreakerThreshold int
	BreakerCooldown  time.Duration
}

// Client calls one upstream.
type Client struct {
	spec upstream.Spec
	base *url.URL
	// template is the base URL as configured when it holds "{name}" placeholders (a host per
	// language, a prefix per routing profile); each call fills them in (DoAt).
	template string
	hc       *http.Client
	ua       string
	contact  string
	log      *slog.Logger
	limit    *Bucket
	breaker  *breaker
	backoff  time.Duration
}

var defaultTransport = &http.Transport{
	Proxy:               nil, // upstream calls leave from the box itself, never via a buyer's proxy
	MaxIdleConnsPerHost: 8,
	IdleConnTimeout:     90 * time.Second,
	TLSHandshakeTimeout: 5 * time.Second,
	ForceAttemptHTTP2:   true,
}

// New builds the client of spec. The base URL must parse; it is checked at start-up.
func New(spec upstream.Spec, o Options) (*Client, error) {
	raw := strings.TrimRight(spec.BaseURL, "/")
	var template string
	if placeholder.MatchString(raw) {
		// Checked with every placeholder filled in; the calls fill them for real.
		template, raw = raw, placeholder.ReplaceAllString(raw, "x")
	}
	base, err := url.Parse(raw)
	if err != nil || base.Host == "" {
		return nil, fmt.Errorf("upstream %s: bad base_url %q", spec.Name, spec.BaseURL)
	}
	rt := o.Transport
	if rt == nil {
		rt = defaultTransport
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	contact := o.Contact
	if contact == "" {
		contact = upstream.DefaultConfig().Contact
	}
	if o.Backoff <= 0 {
		o.Backoff = 200 * time.Millisecond
	}
	if o.BreakerThreshold <= 0 {
		o.BreakerThreshold = 5
	}
	if o.BreakerCooldown <= 0 {
		o.BreakerCooldown = 30 * time.Second
	}
	if spec.Timeout <= 0 {
		spec.Timeout = 5 * time.Second
	}
	return &Client{
		spec:     spec,
		base:     base,
		template: template,
		hc:       &http.Client{Transport: rt},
		ua:       fmt.Sprintf("peage-appliance/%s (+%s)", version.Version, contact),
		contact:  contact,
		log:      log.With(keyUpstream, spec.Name),
		limit:    NewBucket(spec.RPS, spec.Burst),
		breaker:  newBreaker(o.BreakerThreshold, o.BreakerCooldown),
		backoff:  o.Backoff,
	}, nil
}

// Name is the upstream's registry name.
func (c *Client) Name() string { return c.spec.Name }

// Ready reports whether a credential the upstream needs is configured, and a contact e-mail
// address where the upstream requires one in the User-Agent.
func (c *Client) Ready() error {
	if err := c.spec.Ready(); err != nil {
		return err
	}
	if c.spec.NeedsContact {
		if a, err := mail.ParseAddress(c.contact); err != nil || a.Address != c.contact {
			return fmt.Errorf("%s: %w (set upstream.contact to an e-mail address: it goes into the User-Agent this upstream requires)", c.spec.Name, upstream.ErrNotConfigured)
		}
	}
	return nil
}

// Response is a successful (2xx) answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// GetJSON fetches path?query and decodes the JSON answer into out.
func (c *Client) GetJSON(ctx context.Context, path string, query url.Values, out any) error {
	r, err := c.Do(ctx, http.MethodGet, path, query, nil)
	if err != nil {
		return err
	}
	return c.decode("GET "+path, r.Body, out)
}

// PostJSON sends body as JSON and decodes the answer. It is never retried.
func (c *Client) PostJSON(ctx context.Context, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return &upstream.Error{Upstream: c.spec.Name, Op: "POST " + path, Err: err}
	}
	r, err := c.Do(ctx, http.MethodPost, path, nil, b)
	if err != nil {
		return err
	}
	return c.decode("POST "+path, r.Body, out)
}

func (c *Client) decode(op string, body []byte, out any) error {
	if err := json.Unmarshal(body, out); err != nil {
		return upstream.BadAnswer(c.spec.Name, op, http.StatusOK, FieldOf(err), err)
	}
	return nil
}

// FieldOf is the path of the JSON field a decoding error is about ("" when the body as a
// whole is not JSON), for connectors that decode by themselves.
func FieldOf(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return te.Field
	}
	return ""
}

// placeholder is a "{name}" in a base URL template.
var placeholder = regexp.MustCompile(`\{[a-z]+\}`)

// placeholderValue is what may fill a placeholder: a host label or a path segment.
var placeholderValue = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// Templated reports whether the base URL has "{name}" placeholders that calls fill (DoAt).
func (c *Client) Templated() bool { return c.template != "" }

// GetJSONAt is GetJSON against the base URL with its placeholders filled from vars.
func (c *Client) GetJSONAt(ctx context.Context, vars map[string]string, path string, query url.Values, out any) error {
	r, err := c.DoAt(ctx, vars, http.MethodGet, path, query, nil)
	if err != nil {
		return err
	}
	return c.decode("GET "+path, r.Body, out)
}

// DoAt is Do against the base URL with its "{name}" placeholders filled from vars: one
// upstream served under several hosts or prefixes (a wiki per language, a routing server per
// profile) keeps one rate limit and one breaker. A base without placeholders ignores vars.
func (c *Client) DoAt(ctx context.Context, vars map[string]string, method, path string, query url.Values, body []byte) (*Response, error) {
	if c.template == "" {
		return c.Do(ctx, method, path, query, body)
	}
	var bad error
	raw := placeholder.ReplaceAllStringFunc(c.template, func(p string) string {
		v, ok := vars[p[1:len(p)-1]]
		if !ok || !placeholderValue.MatchString(v) {
			bad = fmt.Errorf("no valid value for %s (got %q)", p, v)
		}
		return v
	})
	base, err := url.Parse(raw)
	if bad != nil || err != nil {
		return nil, &upstream.Error{Upstream: c.spec.Name, Op: method + " " + path, Err: errors.Join(bad, err)}
	}
	return c.do(ctx, base, Call{Method: method, Path: path, Query: query, Body: body})
}

// Call is one request with what Do cannot say: its own headers, a body that is not JSON
// (a form, a multipart upload) and per-call HTTP Basic credentials (Twilio, Reddit's token).
type Call struct {
	Method      string
	Path        string
	Query       url.Values
	Body        []byte
	ContentType string      // of Body; "" means application/json when there is a body
	Header      http.Header // added to every attempt
	BasicUser   string      // HTTP Basic credentials, when BasicUser is set
	BasicPass   string
}

// Do performs one logical call. GET and HEAD are retried on 429, 5xx and transport errors;
// anything else is tried once. A non-2xx answer comes back as *upstream.Error with Status
// and the answer's Body.
func (c *Client) Do(ctx context.Context, method, path string, query url.Values, body []byte) (*Response, error) {
	return c.Send(ctx, Call{Method: method, Path: path, Query: query, Body: body})
}

// Send performs call with the same retries, limits and errors as Do.
func (c *Client) Send(ctx context.Context, call Call) (*Response, error) {
	return c.do(ctx, c.base, call)
}

func (c *Client) do(ctx context.Context, baseURL *url.URL, call Call) (*Response, error) {
	method, path, query := call.Method, call.Path, call.Query
	op := method + " " + path
	fail := func(status int, retryable bool, err error) *upstream.Error {
		return &upstream.Error{Upstream: c.spec.Name, Op: op, Status: status, Retryable: retryable, Err: err}
	}
	u := *baseURL
	u.Path = baseURL.Path + path
	if p, err := url.PathUnescape(path); err == nil && p != path {
		// An escaped path (a title holding "/" sent as %2F) goes out as written.
		u.Path, u.RawPath = baseURL.Path+p, baseURL.EscapedPath()+path
	}
	q := url.Values{}
	for k, v := range query {
		q[k] = v
	}
	if c.spec.Key != "" && c.spec.KeyParam != "" {
		q.Set(c.spec.KeyParam, c.spec.Key)
	}
	u.RawQuery = q.Encode()

	attempts := 1
	if method == http.MethodGet || method == http.MethodHead {
		attempts += c.spec.Retries
	}
	var last *upstream.Error
	for attempt := 1; attempt <= attempts; attempt++ {
		if !c.breaker.allow() {
			return nil, fail(0, true, upstream.ErrCircuitOpen)
		}
		if err := c.limit.Wait(ctx); err != nil {
			c.breaker.release()
			switch {
			case ctx.Err() != nil:
				return nil, fail(0, true, ctx.Err())
			case errors.Is(err, ErrFreeShare):
				return nil, fail(0, true, upstream.ErrFreeShare)
			}
			return nil, fail(0, true, upstream.ErrThrottled)
		}
		resp, err := c.once(ctx, call, u.String())
		switch {
		case err != nil:
			c.breaker.record(false)
			last = fail(0, true, err)
		case resp.Status >= 200 && resp.Status < 300:
			c.breaker.record(true)
			return resp, nil
		default:
			retryable := resp.Status == 429 || resp.Status >= 500
			// Client errors prove the upstream is up: they do not count against the breaker.
			c.breaker.record(!retryable)
			last = fail(resp.Status, retryable, errors.New(snippet(resp.Body)))
			last.Body = resp.Body
			if !retryable {
				return nil, last
			}
			d, ok := c.delay(attempt, resp.Header)
			if !ok {
				return nil, last // the upstream asked for a longer pause than a call can wait
			}
			if attempt < attempts && !c.sleep(ctx, d) {
				return nil, last
			}
			c.log.LogAttrs(ctx, slog.LevelWarn, "upstream retryable status", slog.String(keyOp, op), slog.Int(keyStatus, resp.Status), slog.Int(keyAttempt, attempt))
			continue
		}
		if ctx.Err() != nil {
			return nil, last
		}
		c.log.LogAttrs(ctx, slog.LevelWarn, "upstream transport error", slog.String(keyOp, op), slog.Int(keyAttempt, attempt), slog.String(keyErr, err.Error()))
		if d, _ := c.delay(attempt, nil); attempt < attempts && !c.sleep(ctx, d) {
			return nil, last
		}
	}
	return nil, last
}

func (c *Client) once(ctx context.Context, call Call, target string) (*Response, error) {
	actx, cancel := context.WithTimeout(ctx, c.spec.Timeout)
	defer cancel()
	var rd io.Reader
	if call.Body != nil {
		rd = bytes.NewReader(call.Body)
	}
	req, err := http.NewRequestWithContext(actx, call.Method, target, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", c.ua)
	req.Header.Set("Accept", "application/json, text/csv;q=0.9, */*;q=0.1")
	if call.Body != nil {
		ct := call.ContentType
		if ct == "" {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
	}
	for k, vs := range call.Header {
		req.Header[k] = vs
	}
	if call.BasicUser != "" {
		req.SetBasicAuth(call.BasicUser, call.BasicPass)
	}
	if c.spec.Key != "" && c.spec.KeyHeader != "" {
		req.Header.Set(c.spec.KeyHeader, c.spec.Key)
	}
	if c.spec.Key != "" && c.spec.KeyBearer {
		req.Header.Set("Authorization", "Bearer "+c.spec.Key)
	}
	if c.spec.Key != "" && c.spec.KeyBasic {
		req.SetBasicAuth(c.spec.Key, "")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if len(b) > maxBody {
		return nil, fmt.Errorf("answer larger than %d bytes", maxBody)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// maxRetryAfter is the longest Retry-After we wait inside a call; a longer one ends the call.
const maxRetryAfter = 5 * time.Second

// delay is the wait before retry n: the upstream's Retry-After when it sends one (ok is false
// when it is too long to wait), otherwise exponential backoff with jitter.
func (c *Client) delay(n int, h http.Header) (time.Duration, bool) {
	if h != nil && h.Get("Retry-After") != "" {
		if s, err := strconv.Atoi(h.Get("Retry-After")); err == nil && s >= 0 {
			d := time.Duration(s) * time.Second
			return d, d <= maxRetryAfter
		}
		if t, err := http.ParseTime(h.Get("Retry-After")); err == nil {
			d := time.Until(t)
			return max(d, 0), d <= maxRetryAfter
		}
	}
	d := c.backoff << (n - 1)
	return d/2 + rand.N(d/2+1), true
}

// sleep waits d unless the caller's deadline would pass first: retrying past the
// deadline only burns the upstream's quota.
func (c *Client) sleep(ctx context.Context, d time.Duration) bool {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	if s == "" {
		s = "empty body"
	}
	return s
}
