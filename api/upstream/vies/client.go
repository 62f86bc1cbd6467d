// Package vies is the connector of the European Commission's VIES REST API.
package vies

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
)

// Name is the registry name.
const Name = "vies"

// Client checks VAT numbers.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

func (c *Client) Ready() error { return c.h.Ready() }

// Result is the normalised answer. GET answers isValid and POST answers valid: both land in Valid.
type Result struct {
	Valid       bool
	Name        string // "" when VIES has none ("---")
	Address     string
	RequestDate string
	VATNumber   string
}

type wire struct {
	IsValid     *bool  `json:"isValid"` // GET /ms/{cc}/vat/{n}
	Valid       *bool  `json:"valid"`   // POST /check-vat-number
	UserError   string `json:"userError"`
	Name        string `json:"name"`
	Address     string `json:"address"`
	RequestDate string `json:"requestDate"`
	VATNumber   string `json:"vatNumber"`
	// Error envelope of the REST API (e.g. 400/500 bodies).
	ActionSucceed *bool `json:"actionSucceed"`
	ErrorWrappers []struct {
		Error string `json:"error"`
	} `json:"errorWrappers"`
}

// transient userError values: they mean "unknown", never "invalid".
var transient = map[string]bool{
	"GLOBAL_MAX_CONCURRENT_REQ": true, "MS_MAX_CONCURRENT_REQ": true, "MS_UNAVAILABLE": true,
	"SERVICE_UNAVAILABLE": true, "TIMEOUT": true,
}

// Check validates cc+number with the GET endpoint (retried when it fails transiently).
func (c *Client) Check(ctx context.Context, cc, number string) (*Result, error) {
	var w wire
	op := "/ms/" + url.PathEscape(cc) + "/vat/" + url.PathEscape(number)
	if err := c.h.GetJSON(ctx, op, nil, &w); err != nil {
		return nil, err
	}
	return c.result("GET "+op, w)
}

// CheckPost validates with the POST endpoint; it is not retried.
func (c *Client) CheckPost(ctx context.Context, cc, number string) (*Result, error) {
	var w wire
	if err := c.h.PostJSON(ctx, "/check-vat-number", map[string]string{"countryCode": cc, "vatNumber": number}, &w); err != nil {
		return nil, err
	}
	return c.result("POST /check-vat-number", w)
}

func (c *Client) result(op string, w wire) (*Result, error) {
	code := w.UserError
	if code == "" && len(w.ErrorWrappers) > 0 {
		// POST /check-vat-number answers its errors (HTTP 200) as
		// {"actionSucceed": false, "errorWrappers": [{"error": "INVALID_INPUT"}]}.
		code = w.ErrorWrappers[0].Error
	}
	if transient[code] {
		return nil, &upstream.Error{Upstream: Name, Op: op, Status: http.StatusOK, Retryable: true, Reason: code, Err: errors.New("VIES: " + code)}
	}
	if code == "INVALID_INPUT" {
		return nil, &upstream.Error{Upstream: Name, Op: op, Status: http.StatusBadRequest, Err: errors.New("VIES: INVALID_INPUT")}
	}
	if code != "" && code != "VALID" && code != "INVALID" {
		// Any other code is VIES refusing to answer (IP_BLOCKED comes with isValid false):
		// the number's validity is unknown, never "invalid".
		return nil, &upstream.Error{Upstream: Name, Op: op, Status: http.StatusOK, Reason: code, Err: errors.New("VIES: " + code)}
	}
	var valid *bool
	switch {
	case w.IsValid != nil:
		valid = w.IsValid
	case w.Valid != nil:
		valid = w.Valid
	default:
		msg := "VIES answer without a validity field"
		if len(w.ErrorWrappers) > 0 {
			msg = "VIES: " + w.ErrorWrappers[0].Error
		}
		return nil, &upstream.Error{Upstream: Name, Op: op, Status: http.StatusOK, Retryable: true, Err: errors.New(msg)}
	}
	clean := func(s string) string {
		if s == "---" {
			return ""
		}
		return s
	}
	return &Result{Valid: *valid, Name: clean(w.Name), Address: clean(w.Address), RequestDate: w.RequestDate, VATNumber: w.VATNumber}, nil
}
