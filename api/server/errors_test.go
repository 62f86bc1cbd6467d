package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/browserfarm/farmerr"
)

// typedErrors are the failures a handler returns as its collaborators made them, and what the
// edge answers for each: the handler maps nothing itself.
var typedErrors = []struct {
	name       string
	err        error
	status     int
	code       string
	upstream   string // the upstream the body names, for 502 and 504
	param      string
	retryAfter bool
}{
	{name: "upstream_5xx", err: &upstream.Error{Upstream: "ademe", Op: "GET /x", Status: 500}, status: 502, code: "upstream_failed", upstream: "ademe"},
	{name: "upstream_429", err: &upstream.Error{Upstream: "ademe", Op: "GET /x", Status: 429}, status: 502, code: "upstream_failed", upstream: "ademe"},
	{name: "upstream_unreachable", err: &upstream.Error{Upstream: "ademe", Op: "GET /x", Err: errors.New("connection refused")}, status: 502, code: "upstream_failed", upstream: "ademe"},
	{name: "upstream_wrapped", err: fmt.Errorf("reading the list: %w", &upstream.Error{Upstream: "bodacc", Op: "GET /x", Status: 503}), status: 502, code: "upstream_failed", upstream: "bodacc"},
	{name: "upstream_bad_answer", err: upstream.BadAnswer("dvf", "GET /x", 200, "results", errors.New("not a list")), status: 502, code: "upstream_failed", upstream: "dvf"},
	{name: "upstream_deadline", err: &upstream.Error{Upstream: "ademe", Op: "GET /x", Err: context.DeadlineExceeded}, status: 504, code: "timeout", upstream: "ademe"},
	{name: "upstream_circuit_open", err: &upstream.Error{Upstream: "ademe", Op: "GET /x", Err: upstream.ErrCircuitOpen}, status: 502, code: "upstream_failed", upstream: "ademe"},
	{name: "upstream_throttled_here", err: &upstream.Error{Upstream: "ademe", Op: "GET /x", Err: upstream.ErrThrottled}, status: 429, code: "busy", retryAfter: true},
	{name: "upstream_free_share_used", err: &upstream.Error{Upstream: "ademe", Op: "GET /x", Err: upstream.ErrFreeShare}, status: 429, code: "busy", retryAfter: true},
	{name: "upstream_not_configured", err: fmt.Errorf("twilio: %w (set the key)", upstream.ErrNotConfigured), status: 503, code: "not_available"},
	{name: "handler_bad_param", err: apierr.BadParam("q", "q is too short"), status: 400, code: "bad_param", param: "q"},
	{name: "handler_not_found", err: apierr.NotFound("no such company"), status: 404, code: "not_found"},
	{name: "farm_refused_url", err: &farmerr.Error{Kind: farmerr.Refused, Message: "url host x.invalid does not exist (DNS)"}, status: 400, code: "bad_param", param: "url"},
	{name: "farm_busy", err: &farmerr.Error{Kind: farmerr.Busy, RetryAfter: 3 * time.Second, Message: "all 2 browsers are busy"}, status: 429, code: "busy", retryAfter: true},
	{name: "farm_unavailable", err: farmerr.New(farmerr.Unavailable, "the browser pool is starting"), status: 503, code: "not_available"},
	{name: "farm_page_failed", err: farmerr.Page(farmerr.TargetParty, errors.New("net::ERR_CONNECTION_REFUSED"), "the page could not be loaded"), status: 502, code: "upstream_failed", upstream: "target"},
	{name: "farm_site_failed", err: fmt.Errorf("place page: %w", &farmerr.Error{Kind: farmerr.PageFailed, Party: "maps", Message: "the maps answered a captcha"}), status: 502, code: "upstream_failed", upstream: "maps"},
	{name: "farm_page_timeout", err: farmerr.Page(farmerr.TargetParty, context.DeadlineExceeded, "the page did not finish"), status: 504, code: "timeout", upstream: "target"},
	{name: "farm_too_large", err: farmerr.New(farmerr.TooLarge, "the page's rendered HTML is over the limit"), status: 413, code: "too_large"},
	{name: "farm_site_not_found", err: farmerr.New(farmerr.NotFound, "the marketplace has no such product"), status: 404, code: "not_found"},
	{name: "reworded_farm_error", err: &apierr.Reworded{Prefix: "the agent could not answer: ", Err: farmerr.Page(farmerr.TargetParty, nil, "the page sent no document")}, status: 502, code: "upstream_failed", upstream: "target"},
	{name: "deadline", err: fmt.Errorf("waiting: %w", context.DeadlineExceeded), status: 504, code: "timeout"},
	{name: "unknown", err: errors.New("a bug"), status: 500, code: "internal"},
}

// TestTypedErrorsMappedAtTheEdge walks the typed errors a handler may return through the real
// server: each answers its status and the one error body, and none is charged. An upstream's
// or the farm's failure that no handler converted is never a 500, over HTTP or through
// Invoke (MCP's way in).
func TestTypedErrorsMappedAtTheEdge(t *testing.T) {
	entries := make([]catalog.Entry, len(typedErrors))
	for i, c := range typedErrors {
		entries[i] = catalog.Entry{Method: "GET", Path: "/v1/test/" + c.name, Summary: c.name, Kind: catalog.Paid,
			Price: 1_000, Timeout: time.Second,
			Handler: func(context.Context, *catalog.Request) (any, error) { return nil, c.err }}
	}
	cat, err := catalog.New(entries)
	if err != nil {
		t.Fatal(err)
	}
	gate := &apitest.RecordingGate{}
	h := apitest.Start(t, cat, apitest.Options{Gate: gate})
	for _, c := range typedErrors {
		t.Run(c.name, func(t *testing.T) {
			resp, b := call(t, h, "GET", "/v1/test/"+c.name, map[string]any{"x": "1"})
			var body struct {
				Error struct {
					Code, Message, Param, Upstream string
				} `json:"error"`
			}
			if err := json.Unmarshal(b, &body); err != nil || resp.StatusCode != c.status || body.Error.Code != c.code {
				t.Fatalf("= %d %s, want %d %s", resp.StatusCode, b, c.status, c.code)
			}
			if body.Error.Upstream != c.upstream || body.Error.Param != c.param || body.Error.Message == "" {
				t.Errorf("body %s: want upstream %q, param %q and a message", b, c.upstream, c.param)
			}
			if got := resp.Header.Get("Retry-After") != ""; got != c.retryAfter {
				t.Errorf("Retry-After %q, want one: %v", resp.Header.Get("Retry-After"), c.retryAfter)
			}
			if resp.StatusCode == http.StatusInternalServerError && body.Error.Message != "internal error" {
				t.Errorf("a 500 shows its cause: %s", b)
			}
			e := cat.ByPath("/v1/test/" + c.name)
			_, _, err := h.Server.Invoke(context.Background(), e, map[string]any{"x": "1"}, &catalog.Request{Route: e, Method: "GET", Path: e.Path, Header: http.Header{}, ClientIP: "127.0.0.1"})
			if ae := apierr.From(err); ae.Status() != c.status || ae.Code != apierr.Code(c.code) {
				t.Errorf("Invoke: %v, want %d %s", err, c.status, c.code)
			}
		})
	}
	gate.WantNotCharged(t, 2*len(typedErrors))
}
