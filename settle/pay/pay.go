// Package pay is a paying x402 client: it sends a request, and when the answer is 402 it signs
// the exact/EIP-3009 authorization the challenge asks for and sends the request again with it.
// `appliance pay` is this package on the command line; an agent written in Go can import it.
package pay

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/peage/appliance/settle/exact"
	"github.com/peage/appliance/settle/x402"
)

// Client pays for HTTP calls with one key.
type Client struct {
	Key  *ecdsa.PrivateKey
	HTTP *http.Client // nil: a client with a 2-minute timeout
	// MaxAmount refuses challenges asking more than this many atomic units (0: no limit).
	MaxAmount uint64
	Now       func() time.Time
}

// Result is the final answer of a call.
type Result struct {
	Status  int
	Header  http.Header
	Body    []byte
	Paid    *x402.PaymentRequirements // what was paid, nil when no payment was asked
	Receipt *x402.SettlementResponse  // decoded PAYMENT-RESPONSE, when the server sent one
}

// ErrTooExpensive is a challenge above MaxAmount.
var ErrTooExpensive = errors.New("pay: the price is above the limit")

// Request describes a call: GET sends params as the query, POST as a JSON object body.
type Request struct {
	Method string
	URL    string
	Params map[string]string
}

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return &http.Client{Timeout: 2 * time.Minute}
}

func (r Request) build(ctx context.Context) (*http.Request, error) {
	method := strings.ToUpper(r.Method)
	if method == "" {
		method = http.MethodGet
	}
	u, err := url.Parse(r.URL)
	if err != nil {
		return nil, err
	}
	var body io.Reader
	if method == http.MethodGet || method == http.MethodHead {
		q := u.Query()
		for k, v := range r.Params {
			q.Set(k, v)
		}
		u.RawQuery = q.Encode()
	} else if len(r.Params) > 0 {
		b, err := json.Marshal(r.Params)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	return req, nil
}

// Do performs the call, paying once if the server asks for it.
func (c *Client) Do(ctx context.Context, r Request) (*Result, error) {
	first, err := c.send(ctx, r, "", "")
	if err != nil || first.Status != http.StatusPaymentRequired {
		return first, err
	}
	reqs, resource, v1, err := challenge(first)
	if err != nil {
		return first, err
	}
	if c.MaxAmount > 0 {
		if amt, err := strconv.ParseUint(reqs.Amount, 10, 64); err != nil || amt > c.MaxAmount {
			return first, fmt.Errorf("%w: %s atomic units asked, limit %d", ErrTooExpensive, reqs.Amount, c.MaxAmount)
		}
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	version, header := 2, x402.HeaderPaymentSignature
	if v1 {
		version, header = 1, x402.HeaderXPayment
	}
	p, err := exact.NewPayload(c.Key, version, reqs, resource, now())
	if err != nil {
		return first, err
	}
	if !v1 {
		echoExtensions(p, first)
	}
	if !v1 && advertisesIdentifier(first) {
		// A retry of this very payment (same header) then gets the stored answer, not a refusal.
		x402.SetPaymentIdentifier(p, x402.NewPaymentIdentifier())
	}
	enc, err := x402.Encode(p)
	if err != nil {
		return first, err
	}
	res, err := c.send(ctx, r, header, enc)
	if err != nil {
		return nil, err
	}
	res.Paid = reqs
	return res, nil
}

func (c *Client) send(ctx context.Context, r Request, header, value string) (*Result, error) {
	req, err := r.build(ctx)
	if err != nil {
		return nil, err
	}
	if header != "" {
		req.Header.Set(header, value)
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	res := &Result{Status: resp.StatusCode, Header: resp.Header, Body: body}
	for _, h := range []string{x402.HeaderPaymentResponse, x402.HeaderXPaymentResponse} {
		if v := resp.Header.Get(h); v != "" {
			if s, err := x402.DecodeSettlement(v); err == nil {
				res.Receipt = s
			}
			break
		}
	}
	return res, nil
}

// echoExtensions copies the 402's extensions into the payload, as the official clients do: a
// facilitator implementing an extension reads its declaration there (the bazaar extension's,
// to catalogue the route).
func echoExtensions(p *x402.PaymentPayload, res *Result) {
	pr, err := x402.DecodeRequired(res.Header.Get(x402.HeaderPaymentRequired))
	if err != nil || len(pr.Extensions) == 0 {
		return
	}
	if p.Extensions == nil {
		p.Extensions = map[string]any{}
	}
	for k, v := range pr.Extensions {
		if _, set := p.Extensions[k]; !set {
			p.Extensions[k] = v
		}
	}
}

func advertisesIdentifier(res *Result) bool {
	pr, err := x402.DecodeRequired(res.Header.Get(x402.HeaderPaymentRequired))
	return err == nil && pr.Extensions[x402.ExtPaymentIdentifier] != nil
}

// challenge picks the exact/EVM requirement of a 402: the v2 header first, else the v1 body.
func challenge(res *Result) (*x402.PaymentRequirements, *x402.ResourceInfo, bool, error) {
	if h := res.Header.Get(x402.HeaderPaymentRequired); h != "" {
		pr, err := x402.DecodeRequired(h)
		if err != nil {
			return nil, nil, false, err
		}
		for i := range pr.Accepts {
			if pr.Accepts[i].Scheme == x402.SchemeExact && strings.HasPrefix(x402.CAIP2(pr.Accepts[i].Network), "eip155:") {
				res := pr.Resource
				return &pr.Accepts[i], &res, false, nil
			}
		}
		return nil, nil, false, errors.New("pay: the challenge offers no exact EVM payment")
	}
	var v1 struct {
		X402Version int                   `json:"x402Version"`
		Accepts     []x402.RequirementsV1 `json:"accepts"`
	}
	if err := json.Unmarshal(res.Body, &v1); err != nil || v1.X402Version != 1 {
		return nil, nil, false, errors.New("pay: 402 without a PAYMENT-REQUIRED header or a v1 body")
	}
	for _, a := range v1.Accepts {
		if a.Scheme == x402.SchemeExact {
			return &x402.PaymentRequirements{Scheme: a.Scheme, Network: x402.CAIP2(a.Network), Amount: a.MaxAmountRequired,
				Asset: a.Asset, PayTo: a.PayTo, MaxTimeoutSeconds: a.MaxTimeoutSeconds, Extra: a.Extra}, nil, true, nil
		}
	}
	return nil, nil, false, errors.New("pay: the challenge offers no exact payment")
}
