// Package client is the small HTTP client of the settle facilitator that the API (and anything
// else outside settle) uses. It speaks JSON over a Unix socket or to a URL, and deliberately
// imports nothing from go-ethereum: only the settle daemon touches the chain.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/x402"
)

// Client talks to one facilitator.
type Client struct {
	base string
	hc   *http.Client
	// fresh sends /settle to a URL on a connection of its own: an error after a fresh dial
	// means the facilitator got the request (its outcome is unknown), and a failed dial that it
	// never did; a pooled connection the facilitator dropped would blur the two.
	fresh *http.Client
}

// New makes a client for addr: "unix:/run/peage-settle/settle.sock" (or a bare absolute socket path),
// or an http(s) URL of a facilitator.
func New(addr string) (*Client, error) {
	path, isUnix := strings.CutPrefix(addr, "unix:")
	if !isUnix && strings.HasPrefix(addr, "/") {
		path, isUnix = addr, true
	}
	if isUnix {
		path = strings.TrimPrefix(path, "//")
		return &Client{base: "http://settle", hc: &http.Client{Transport: &unixTransport{path: path}}}, nil
	}
	if !strings.HasPrefix(addr, "http://") && !strings.HasPrefix(addr, "https://") {
		return nil, fmt.Errorf("settle client: address %q is neither unix:PATH nor an http(s) URL", addr)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	once := http.DefaultTransport.(*http.Transport).Clone()
	once.DisableKeepAlives = true
	return &Client{base: strings.TrimRight(addr, "/"), hc: &http.Client{Transport: tr}, fresh: &http.Client{Transport: once}}, nil
}

// Error is a facilitator answer other than 200.
type Error struct {
	Status  int
	Message string
}

// HTTPStatus lets callers tell a verdict (4xx) from a failure worth retrying (5xx).
func (e *Error) HTTPStatus() int { return e.Status }

func (e *Error) Error() string {
	return fmt.Sprintf("facilitator answered %d: %s", e.Status, e.Message)
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.hc
	if path == "/settle" && c.fresh != nil {
		hc = c.fresh
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("facilitator %s: %w", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("facilitator %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(b, &e)
		return &Error{Status: resp.StatusCode, Message: e.Error}
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("facilitator %s: bad answer: %w", path, err)
	}
	return nil
}

// Verify calls POST /verify.
func (c *Client) Verify(ctx context.Context, req *x402.FacilitatorRequest) (x402.VerifyResponse, error) {
	var out x402.VerifyResponse
	return out, c.do(ctx, http.MethodPost, "/verify", req, &out)
}

// Settle calls POST /settle.
func (c *Client) Settle(ctx context.Context, req *x402.FacilitatorRequest) (x402.SettlementResponse, error) {
	var out x402.SettlementResponse
	return out, c.do(ctx, http.MethodPost, "/settle", req, &out)
}

// Supported calls GET /supported.
func (c *Client) Supported(ctx context.Context) (x402.SupportedResponse, error) {
	var out x402.SupportedResponse
	return out, c.do(ctx, http.MethodGet, "/supported", nil, &out)
}

// Reserve verifies a payment and holds its nonce for one request.
func (c *Client) Reserve(ctx context.Context, req *x402.ReserveRequest) (x402.ReserveResponse, error) {
	var out x402.ReserveResponse
	return out, c.do(ctx, http.MethodPost, "/reserve", req, &out)
}

// BatchReserve verifies a batch-settlement payment and holds its channel for one request.
func (c *Client) BatchReserve(ctx context.Context, req *x402.BatchRequest) (x402.BatchReserveResponse, error) {
	var out x402.BatchReserveResponse
	return out, c.do(ctx, http.MethodPost, "/batch/reserve", req, &out)
}

// BatchRelease frees a held channel unchanged (the work failed).
func (c *Client) BatchRelease(ctx context.Context, id string) error {
	var out struct{}
	return c.do(ctx, http.MethodPost, "/batch/release", x402.ReleaseRequest{ID: id}, &out)
}

// BatchComplete commits the charge of a held request after its work succeeded (the same
// request again answers the same result: it is safe to retry).
func (c *Client) BatchComplete(ctx context.Context, req *x402.BatchCompleteRequest) (x402.BatchSettleResponse, error) {
	var out x402.BatchSettleResponse
	return out, c.do(ctx, http.MethodPost, "/batch/complete", req, &out)
}

// Release gives a reservation back (the work failed; nothing is charged).
func (c *Client) Release(ctx context.Context, id string) error {
	var out struct{}
	return c.do(ctx, http.MethodPost, "/release", x402.ReleaseRequest{ID: id}, &out)
}

// Complete settles a reservation whose work succeeded (x402.ModeSync or x402.ModeOptimistic).
func (c *Client) Complete(ctx context.Context, id, mode string) (x402.SettlementResponse, error) {
	var out x402.SettlementResponse
	return out, c.do(ctx, http.MethodPost, "/complete", x402.CompleteRequest{ID: id, Mode: mode, Box: x402.BoxOf(ctx)}, &out)
}

// Abort tells the facilitator a completed call's result was not delivered, and answers the
// payment's receipt as it then stands.
func (c *Client) Abort(ctx context.Context, id string) (x402.SettlementResponse, error) {
	var out x402.SettlementResponse
	return out, c.do(ctx, http.MethodPost, "/abort", x402.AbortRequest{ID: id}, &out)
}

// Payments reads the most recently updated payments, newest first.
func (c *Client) Payments(ctx context.Context, limit int) ([]ledger.Summary, error) {
	var out []ledger.Summary
	return out, c.do(ctx, http.MethodGet, "/payments?limit="+strconv.Itoa(limit), nil, &out)
}

// Payment reads one payment's status; an unknown one is an *Error with Status 404.
func (c *Client) Payment(ctx context.Context, payer, nonce string) (ledger.Summary, error) {
	var out ledger.Summary
	q := url.Values{"payer": {payer}, "nonce": {nonce}}
	return out, c.do(ctx, http.MethodGet, "/payment?"+q.Encode(), nil, &out)
}

// PaymentByIdentifier reads the payment holding a payment identifier's hash.
func (c *Client) PaymentByIdentifier(ctx context.Context, identifierHash string) (ledger.Summary, error) {
	var out ledger.Summary
	return out, c.do(ctx, http.MethodGet, "/payment?"+url.Values{"identifier_hash": {identifierHash}}.Encode(), nil, &out)
}

// KeepReceipt stores the signed extensions of a delivered payment's answer with it.
func (c *Client) KeepReceipt(ctx context.Context, id string, receipt json.RawMessage) error {
	return c.do(ctx, http.MethodPost, "/payment/receipt", x402.KeepReceiptRequest{ID: id, Receipt: receipt}, &struct{}{})
}

// KeepVoucherReceipt records a delivered batch-settlement voucher with its answer's signed
// extensions.
func (c *Client) KeepVoucherReceipt(ctx context.Context, req x402.KeepVoucherReceiptRequest) error {
	return c.do(ctx, http.MethodPost, "/voucher/receipt", req, &struct{}{})
}

// Revenue reads settled revenue by UTC day and route.
func (c *Client) Revenue(ctx context.Context) ([]ledger.RevenueRow, error) {
	var out []ledger.RevenueRow
	return out, c.do(ctx, http.MethodGet, "/revenue", nil, &out)
}

// Stats reads the payments by status, the oldest owed and the gas spent.
func (c *Client) Stats(ctx context.Context) (ledger.Stats, error) {
	var out ledger.Stats
	return out, c.do(ctx, http.MethodGet, "/stats", nil, &out)
}

// Channels reads the batch-settlement channels, their totals, the gas per paid call and the
// claimer.
func (c *Client) Channels(ctx context.Context) (ledger.ChannelsReport, error) {
	var out ledger.ChannelsReport
	return out, c.do(ctx, http.MethodGet, "/channels", nil, &out)
}
