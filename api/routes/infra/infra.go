// Package infra implements the agent-infrastructure routes that live on the appliance's durable
// state: the webhook inbox (callbacks, hook, hook.events) and page publishing (publish, p).
//
// Decisions (also in docs/state.md):
//   - ids and keys are 128 bits from crypto/rand, as 32 lower-case hex characters;
//   - a delivery to a full inbox (100 events) answers 429 limit_exceeded with a message saying
//     the inbox is full and a new one is needed; an inbox never drains (reading does not delete),
//     so the refusal is final for that inbox. A body over 64 KiB answers 413 too_large;
//   - each inbox has its own byte quota (state.InboxQuotaBytes, 7 MiB: 100 full-size events
//     and their heads), reserved from the disk budget of all inboxes (inbox.budget_bytes) when
//     it is sold and given back when it expires, so what one inbox receives never takes
//     another's room. A delivery past its inbox's quota answers 429 limit_exceeded for that
//     inbox only. While the budget cannot reserve one more quota, /v1/callbacks answers 503
//     before any 402 (the stock is sold out, the inboxes sold keep their room). A delivery
//     past the budget itself (507 storage_full, with Retry-After) happens only when the budget
//     was lowered under inboxes already sold; nothing stored is ever evicted;
//   - each inbox takes at most DeliveryBurst deliveries at once and DeliveriesPerMinute after
//     that; more answer 429 busy with Retry-After for that inbox only, so one inbox cannot
//     drive the disk's writes at will (docs/inbox-quotas.md);
//   - an unknown inbox or page answers 404, an expired one 410 (for Options.Tombstone after its
//     expiry; then 404), a wrong events key 403 (checked before the expiry, in constant time);
//   - events_url long-polls for up to `wait` seconds (0 to 30, capped by the route's deadline)
//     when nothing follows the cursor `after`; each answer carries `next_after`, the cursor to
//     send next, so a reader never misses nor repeats an event;
//   - a stored body that no longer matches its checksum (or is gone) answers 500 naming the
//     event, never a wrong body;
//   - a captured event shows the query and the headers as objects (repeated names joined with
//     ", " for headers; the first value for the query, with the raw query_string beside it), and
//     the body parsed: JSON as JSON, a form as an object, UTF-8 text as a string, anything else
//     as base64;
//   - a published page is sanitised once, at publish time, and stored as the complete document
//     served; `bytes` is the size of that stored document.
package infra

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/internal/ratelimit"
	"github.com/peage/appliance/internal/state"
)

// Limits of the routes (spec: Limits). The parameter bounds (ttl_hours, ttl_days, the 200 KB
// page) are declared in the catalog and checked there, before any 402.
const (
	MaxEvents    = state.InboxMaxEvents    // events per inbox
	MaxBodyBytes = state.InboxMaxBodyBytes // bytes per captured body
	MaxWait      = 30 * time.Second        // longest long-poll

	// An inbox's delivery rate: a sender's burst (a payment provider posting an order's
	// events together) is taken whole, a flood is paced to one fsynced write per second per
	// inbox, so the disk writes one buyer can cause grow with the inboxes bought.
	DeliveryBurst       = 20
	DeliveriesPerMinute = 60
	// deliveryBuckets bounds the rate limiter's memory; only inboxes that exist get a bucket,
	// and the budget bounds how many exist (8 GiB / 7 MiB: 1,170), so none is forgotten early.
	deliveryBuckets = 1 << 16
)

// Routes holds the handlers' dependencies.
type Routes struct {
	store      *state.Store
	now        func() time.Time
	deliveries *ratelimit.Limiter // per inbox id
}

// With builds the routes on a store. now is the clock (nil: time.Now); give the store the same.
func With(store *state.Store, now func() time.Time) *Routes {
	if now == nil {
		now = time.Now
	}
	return &Routes{store: store, now: now, deliveries: ratelimit.New(ratelimit.Config{
		PerMinute: DeliveriesPerMinute, Burst: DeliveryBurst, MaxClients: deliveryBuckets}, now)}
}

// Bind attaches the handlers to their catalog entries by ID.
func (r *Routes) Bind(c *catalog.Catalog) error {
	for id, h := range map[string]catalog.Handler{
		"callbacks":   r.Callbacks,
		"hook":        r.Hook,
		"hook.events": r.HookEvents,
		"publish":     r.Publish,
		"p":           r.Page,
	} {
		var ready func() error
		if id == "callbacks" {
			ready = r.inboxRoom
		}
		if err := c.Bind(id, h, ready); err != nil {
			return err
		}
	}
	return nil
}

// inboxRoom keeps inbox sales at 503, before any 402, while the inbox budget cannot reserve
// one more inbox's quota: an inbox sold then could not be sure of its room.
func (r *Routes) inboxRoom() error {
	if !r.store.InboxRoom() {
		return errSoldOut
	}
	return nil
}

var errSoldOut = errors.New("the appliance's inbox storage is fully reserved until older inboxes expire")

func newID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand: " + err.Error()) // never happens on Linux
	}
	return hex.EncodeToString(b[:])
}

var idRx = regexp.MustCompile(`^[0-9a-f]{32}$`)

func ts(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// ---- webhook inbox -------------------------------------------------------------------------

// InboxLimits is the limits object of an inbox.
type InboxLimits struct {
	MaxEvents    int `json:"max_events"`
	MaxBodyBytes int `json:"max_body_bytes"`
	// MaxBytes is the inbox's quota: its events' bodies (in whole 4 KiB blocks), heads and
	// queries together.
	MaxBytes            int64 `json:"max_bytes"`
	DeliveriesPerMinute int   `json:"max_deliveries_per_minute"`
	DeliveryBurst       int   `json:"max_delivery_burst"`
}

func (r *Routes) limits() InboxLimits {
	return InboxLimits{MaxEvents: MaxEvents, MaxBodyBytes: MaxBodyBytes, MaxBytes: r.store.InboxQuota(),
		DeliveriesPerMinute: DeliveriesPerMinute, DeliveryBurst: DeliveryBurst}
}

// InboxResult is the answer of POST /v1/callbacks (spec resource "Webhook inbox").
type InboxResult struct {
	ID          string      `json:"id"`
	CallbackURL string      `json:"callback_url"`
	EventsURL   string      `json:"events_url"`
	ExpiresAt   string      `json:"expires_at"`
	Label       string      `json:"label,omitempty"`
	TTLHours    int64       `json:"ttl_hours"`
	Limits      InboxLimits `json:"limits"`

	revoke func() error
}

// Revoke ends the inbox: the payment gate calls it when the payment does not arrive.
func (r *InboxResult) Revoke(context.Context) error { return r.revoke() }

// Callbacks creates an inbox (POST /v1/callbacks).
func (r *Routes) Callbacks(ctx context.Context, req *catalog.Request) (any, error) {
	hours := req.Args.Int("ttl_hours") // 1 to 24, default 24: the catalog validated it
	now := r.now()
	in := state.Inbox{ID: newID(), Key: newID(), Label: req.Args.Str("label"), CreatedAt: now,
		ExpiresAt: now.Add(time.Duration(hours) * time.Hour).Truncate(time.Second)}
	if err := r.store.CreateInbox(in); err != nil {
		if errors.Is(err, state.ErrBudget) { // the last quota went to a concurrent sale
			return nil, apierr.Unavailable("%s", errSoldOut.Error())
		}
		return nil, fmt.Errorf("create inbox: %w", err)
	}
	base := strings.TrimRight(req.BaseURL, "/")
	return &InboxResult{
		ID: in.ID, CallbackURL: base + "/hook/" + in.ID,
		EventsURL: base + "/hook/" + in.ID + "/events?key=" + in.Key,
		ExpiresAt: ts(in.ExpiresAt), Label: in.Label, TTLHours: hours,
		Limits: r.limits(),
		revoke: func() error { return r.store.RevokeInbox(in.ID) },
	}, nil
}

// DeliveryResult answers a request captured at callback_url.
type DeliveryResult struct {
	OK         bool   `json:"ok"`
	Inbox      string `json:"inbox"`
	Seq        uint64 `json:"seq"`
	ReceivedAt string `json:"received_at"`
}

// Hook captures any request to {base_url}/hook/<id>.
func (r *Routes) Hook(ctx context.Context, req *catalog.Request) (any, error) {
	id := req.PathID
	if !idRx.MatchString(id) {
		return nil, apierr.NotFound("no inbox %s", id)
	}
	if len(req.Body) > MaxBodyBytes {
		return nil, apierr.TooLarge("the body is %d bytes; an inbox keeps bodies of at most %d bytes", len(req.Body), MaxBodyBytes)
	}
	// Only an inbox that exists gets a bucket: unknown ids cost the limiter nothing.
	if _, ok := r.store.Inbox(id); ok {
		if ok, wait := r.deliveries.Take(id); !ok {
			return nil, apierr.Busy(wait.Round(time.Second)+time.Second,
				"inbox %s takes at most %d deliveries at once and %d per minute; this delivery was not stored, retry later",
				id, DeliveryBurst, DeliveriesPerMinute)
		}
	}
	ct := req.Header.Get("Content-Type")
	ev := state.Event{Inbox: id, Method: req.Method, Query: req.Query, Header: req.Header, ContentType: ct,
		Kind: bodyKind(ct, req.Body), Body: req.Body}
	ev, err := r.store.AddEvent(ctx, ev)
	switch {
	case errors.Is(err, state.ErrNotFound):
		return nil, apierr.NotFound("no inbox %s", id)
	case errors.Is(err, state.ErrExpired):
		return nil, apierr.Gone("inbox %s has expired", id)
	case errors.Is(err, state.ErrBudget):
		return nil, &apierr.Error{Code: apierr.CodeStorageFull, RetryAfter: 5 * time.Minute,
			Message: fmt.Sprintf("the appliance's inbox storage is full: this delivery to inbox %s was not stored; retry later, space frees as older inboxes expire", id)}
	case errors.Is(err, state.ErrInboxQuota):
		used := int64(0)
		if in, ok := r.store.Inbox(id); ok {
			used = in.Used
		}
		return nil, &apierr.Error{Code: apierr.CodeLimitExceeded,
			Message: fmt.Sprintf("inbox %s is full: its events hold %d of its %d bytes, too few for this delivery; a smaller one may fit, or create a new inbox with POST /v1/callbacks",
				id, used, r.store.InboxQuota())}
	case errors.Is(err, state.ErrFull):
		return nil, &apierr.Error{Code: apierr.CodeLimitExceeded,
			Message: fmt.Sprintf("inbox %s is full: it holds its maximum of %d events; create a new inbox with POST /v1/callbacks", id, MaxEvents)}
	case err != nil:
		return nil, fmt.Errorf("store event: %w", err)
	}
	return &DeliveryResult{OK: true, Inbox: id, Seq: ev.Seq, ReceivedAt: ts(ev.ReceivedAt)}, nil
}

// bodyKind classifies a body at delivery: json, form, text, binary or empty.
func bodyKind(ct string, body []byte) string {
	if len(bytes.TrimSpace(body)) == 0 {
		return "empty"
	}
	mt, _, _ := mime.ParseMediaType(ct)
	switch {
	case mt == "application/x-www-form-urlencoded":
		if _, err := url.ParseQuery(string(body)); err == nil {
			return "form"
		}
	case mt == "multipart/form-data":
		if _, err := parseMultipart(ct, body); err == nil {
			return "form"
		}
	}
	jsonType := mt == "application/json" || strings.HasSuffix(mt, "+json")
	if !jsonType && (mt == "" || mt == "text/plain") {
		// Senders often post JSON as text/plain or without a type: take an object or array.
		t := bytes.TrimSpace(body)
		jsonType = t[0] == '{' || t[0] == '['
	}
	if jsonType && json.Valid(body) {
		return "json"
	}
	if utf8.Valid(body) {
		return "text"
	}
	return "binary"
}

func parseMultipart(ct string, body []byte) (map[string]any, error) {
	_, params, err := mime.ParseMediaType(ct)
	if err != nil || params["boundary"] == "" {
		return nil, errors.New("no boundary")
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	out := map[string]any{}
	for {
		p, err := mr.NextPart()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		var b bytes.Buffer
		if _, err := b.ReadFrom(p); err != nil {
			return nil, err
		}
		name := p.FormName()
		if p.FileName() != "" {
			f := map[string]any{"filename": p.FileName(), "content_type": p.Header.Get("Content-Type"), "bytes": b.Len()}
			if utf8.Valid(b.Bytes()) {
				f["text"] = b.String()
			} else {
				f["base64"] = base64.StdEncoding.EncodeToString(b.Bytes())
			}
			out[name] = f
		} else if _, dup := out[name]; !dup {
			out[name] = b.String()
		}
	}
}

// EventView is a captured event as events_url shows it.
type EventView struct {
	Seq         uint64            `json:"seq"`
	ReceivedAt  string            `json:"received_at"`
	Method      string            `json:"method"`
	Query       map[string]string `json:"query"`
	QueryString string            `json:"query_string,omitempty"`
	Headers     map[string]string `json:"headers"`
	ContentType string            `json:"content_type,omitempty"`
	BodyType    string            `json:"body_type"` // json, form, text, binary or empty
	Body        any               `json:"body,omitempty"`
	BodyBase64  string            `json:"body_base64,omitempty"` // binary bodies
	Bytes       int               `json:"bytes"`
}

// EventsResult is the answer of events_url.
type EventsResult struct {
	ID        string      `json:"id"`
	Events    []EventView `json:"events"`
	Count     int         `json:"count"`      // events in this answer
	Total     int         `json:"total"`      // events stored in the inbox
	NextAfter uint64      `json:"next_after"` // send as after= to get what follows
	ExpiresAt string      `json:"expires_at"`
	Limits    InboxLimits `json:"limits"`
}

// HookEvents reads an inbox's events ({base_url}/hook/<id>/events?key=&after=&wait=).
func (r *Routes) HookEvents(ctx context.Context, req *catalog.Request) (any, error) {
	id := req.PathID
	if !idRx.MatchString(id) {
		return nil, apierr.NotFound("no inbox %s", id)
	}
	in, ok := r.store.Inbox(id)
	if !ok {
		return nil, apierr.NotFound("no inbox %s", id)
	}
	key := req.Args.Str("key")
	if subtle.ConstantTimeCompare([]byte(key), []byte(in.Key)) != 1 {
		return nil, apierr.Forbidden("wrong key for inbox %s; use the events_url returned by POST /v1/callbacks", id)
	}
	if in.Expired(r.now()) {
		return nil, apierr.Gone("inbox %s expired at %s", id, ts(in.ExpiresAt))
	}
	after := req.Args.Int("after")
	wait := time.Duration(req.Args.Int("wait")) * time.Second
	wait = min(max(wait, 0), MaxWait)
	if dl, ok := ctx.Deadline(); ok {
		// Answer (empty) a little before the route's deadline rather than time out.
		wait = min(wait, time.Until(dl)-500*time.Millisecond)
	}
	in, evs, err := r.store.WaitEvents(ctx, id, uint64(after), MaxEvents, wait)
	if err != nil {
		if errors.Is(err, state.ErrNotFound) {
			return nil, apierr.NotFound("no inbox %s", id)
		}
		if be, ok := errors.AsType[*state.BodyError](err); ok {
			// Said plainly rather than served wrong: the reader can step over the event.
			return nil, &apierr.Error{Code: apierr.CodeInternal, Cause: err,
				Message: fmt.Sprintf("event %d of inbox %s cannot be served: its stored body is damaged or lost on the appliance's disk; read the events after it with after=%d", be.Seq, id, be.Seq)}
		}
		return nil, err
	}
	if in.Expired(r.now()) && len(evs) == 0 {
		return nil, apierr.Gone("inbox %s expired at %s", id, ts(in.ExpiresAt))
	}
	res := &EventsResult{ID: id, Events: make([]EventView, 0, len(evs)), Total: in.Events, NextAfter: uint64(after),
		ExpiresAt: ts(in.ExpiresAt), Limits: r.limits()}
	for _, ev := range evs {
		res.Events = append(res.Events, view(ev))
		res.NextAfter = ev.Seq
	}
	res.Count = len(res.Events)
	return res, nil
}

func view(ev state.Event) EventView {
	v := EventView{Seq: ev.Seq, ReceivedAt: ev.ReceivedAt.UTC().Format(time.RFC3339Nano), Method: ev.Method,
		Query: map[string]string{}, Headers: map[string]string{}, ContentType: ev.ContentType,
		BodyType: ev.Kind, Bytes: len(ev.Body)}
	var qs []string
	for _, kv := range ev.Query {
		if _, dup := v.Query[kv[0]]; !dup {
			v.Query[kv[0]] = kv[1]
		}
		qs = append(qs, url.QueryEscape(kv[0])+"="+url.QueryEscape(kv[1]))
	}
	v.QueryString = strings.Join(qs, "&")
	names := make([]string, 0, len(ev.Header))
	for k := range ev.Header {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v.Headers[k] = strings.Join(ev.Header[k], ", ")
	}
	switch ev.Kind {
	case "json":
		v.Body = json.RawMessage(ev.Body)
	case "form":
		if f, err := parseMultipart(ev.ContentType, ev.Body); err == nil {
			v.Body = f
		} else if q, err := url.ParseQuery(string(ev.Body)); err == nil {
			m := map[string]string{}
			for k, vals := range q {
				m[k] = vals[0]
			}
			v.Body = m
		} else {
			v.Body = string(ev.Body)
		}
	case "text":
		v.Body = string(ev.Body)
	case "binary":
		v.BodyBase64 = base64.StdEncoding.EncodeToString(ev.Body)
	}
	return v
}

// ---- published pages -----------------------------------------------------------------------

// PageResult is the answer of POST /v1/publish (spec resource "Published page").
type PageResult struct {
	ID        string `json:"id"`
	URL       string `json:"url"`
	Title     string `json:"title"`
	Bytes     int    `json:"bytes"`
	ExpiresAt string `json:"expires_at"`
	TTLDays   int64  `json:"ttl_days"`

	revoke func() error
}

// Revoke takes the page down: the payment gate calls it when the payment does not arrive.
func (r *PageResult) Revoke(context.Context) error { return r.revoke() }

// Publish sanitises and stores a page (POST /v1/publish).
func (r *Routes) Publish(ctx context.Context, req *catalog.Request) (any, error) {
	// The catalog validated html (non-empty, at most 200 KB) and ttl_days (1 to 30, default 7).
	src, title, days := req.Args.Str("html"), req.Args.Str("title"), req.Args.Int("ttl_days")
	doc := SanitizePage(src, title)
	now := r.now()
	p := state.Page{ID: newID(), Title: title, HTML: doc, CreatedAt: now,
		ExpiresAt: now.Add(time.Duration(days) * 24 * time.Hour).Truncate(time.Second)}
	if err := r.store.PutPage(p); err != nil {
		return nil, fmt.Errorf("store page: %w", err)
	}
	return &PageResult{ID: p.ID, URL: strings.TrimRight(req.BaseURL, "/") + "/p/" + p.ID, Title: title,
		Bytes: len(doc), ExpiresAt: ts(p.ExpiresAt), TTLDays: days, revoke: func() error { return r.store.RevokePage(p.ID) }}, nil
}

// PageHeaders are the response headers of a served page.
var PageHeaders = map[string]string{
	"Content-Security-Policy":      pageCSP,
	"X-Robots-Tag":                 "noindex, nofollow, noarchive",
	"X-Content-Type-Options":       "nosniff",
	"Referrer-Policy":              "no-referrer",
	"Cross-Origin-Resource-Policy": "same-origin",
	"Cache-Control":                "public, max-age=300",
}

// Page serves {base_url}/p/<id>.
func (r *Routes) Page(ctx context.Context, req *catalog.Request) (any, error) {
	id := req.PathID
	if !idRx.MatchString(id) {
		return nil, apierr.NotFound("no page %s", id)
	}
	p, ok := r.store.Page(id)
	if !ok {
		return nil, apierr.NotFound("no page %s", id)
	}
	if p.Expired(r.now()) {
		return nil, apierr.Gone("page %s expired at %s", id, ts(p.ExpiresAt))
	}
	h := make(map[string]string, len(PageHeaders)+1)
	for k, v := range PageHeaders {
		h[k] = v
	}
	if left := p.ExpiresAt.Sub(r.now()); left < 5*time.Minute {
		h["Cache-Control"] = "public, max-age=" + strconv.Itoa(int(left.Seconds()))
	}
	return &catalog.Raw{ContentType: "text/html; charset=utf-8", Header: h, Body: []byte(p.HTML)}, nil
}
