// Package chainrpc is the chain-data connector of the chain routes (upstream name "base-rpc"):
// JSON-RPC over HTTP through go-ethereum's rpc and abi packages, against the endpoint of
// [chain] rpc (Base mainnet in production, the embedded chain in `appliance dev`). Every
// question a route asks is one HTTP request: its calls go out as one JSON-RPC batch, so a
// balance of ten tokens costs one round trip, and a token bucket keeps the request rate within
// what public endpoints tolerate. Results are plain Go values (strings, *big.Int): the rest of
// the API never links go-ethereum. Failures are *upstream.Error.
package chainrpc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/peage/appliance/api/upstream"
)

// Name is the upstream name the catalog entries carry.
const Name = "base-rpc"

// ErrNotConfigured is the reason the routes are unavailable without [chain] rpc.
var ErrNotConfigured = errors.New("no chain RPC endpoint configured (chain.rpc)")

// Client asks one JSON-RPC endpoint; it is safe for concurrent use.
type Client struct {
	rpc      *rpc.Client
	usdc     common.Address
	maxBatch int
	host     string // for messages: the endpoint's host only, since provider URLs carry keys
}

// New builds a client for cfg.RPC. It does not contact the endpoint: a chain that is down at
// start is reported per call (502), not as a configuration error.
func New(cfg Config) (*Client, error) {
	if cfg.RPC == "" {
		return nil, ErrNotConfigured
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	u, _ := url.Parse(cfg.RPC)
	hc := &http.Client{
		Timeout:   cfg.Timeout,
		Transport: &limited{next: http.DefaultTransport, b: newBucket(cfg.RatePerSecond, cfg.Burst)},
	}
	c, err := rpc.DialOptions(context.Background(), cfg.RPC, rpc.WithHTTPClient(hc))
	if err != nil {
		return nil, fmt.Errorf("chain.rpc: %w", err)
	}
	return &Client{rpc: c, usdc: common.HexToAddress(cfg.USDC), host: u.Host, maxBatch: cfg.MaxBatch}, nil
}

// Close releases the client's connections.
func (c *Client) Close() { c.rpc.Close() }

// Endpoint is the endpoint's host, safe to show.
func (c *Client) Endpoint() string { return c.host }

// USDC is the address of the chain's USDC, EIP-55 form.
func (c *Client) USDC() string { return c.usdc.Hex() }

// call is one element of a batch; out receives its decoded result.
type call struct {
	method string
	args   []any
	out    any
}

// batch sends calls as one JSON-RPC batch (one HTTP request; more only past chain.max_batch
// calls) and returns the per-call errors. The returned error is the transport's: no answer.
func (c *Client) batch(ctx context.Context, op string, calls []call) ([]error, error) {
	elems := make([]rpc.BatchElem, len(calls))
	for i, k := range calls {
		elems[i] = rpc.BatchElem{Method: k.method, Args: k.args, Result: k.out}
	}
	for part := range slices.Chunk(elems, c.maxBatch) {
		if err := c.rpc.BatchCallContext(ctx, part); err != nil {
			return nil, c.fail(op, err)
		}
	}
	errs := make([]error, len(calls))
	for i, e := range elems {
		errs[i] = e.Error
	}
	return errs, nil
}

// fail wraps a failure of the whole request as the connector's error, keeping the endpoint's
// HTTP status (429 is its rate limit) for the route to map.
func (c *Client) fail(op string, err error) error {
	ue := &upstream.Error{Upstream: Name, Op: op, Err: err}
	var he rpc.HTTPError
	if errors.As(err, &he) {
		ue.Status = he.StatusCode
		ue.Retryable = he.StatusCode == http.StatusTooManyRequests || he.StatusCode >= 500
		ue.Err = fmt.Errorf("%s", strings.TrimSpace(he.Status))
	}
	if errors.Is(err, errThrottled) {
		ue.Err = upstream.ErrThrottled
		ue.Retryable = true
	}
	if ctxErr := ctx(err); ctxErr != nil {
		ue.Err = ctxErr
	}
	return ue
}

// ctx recovers a deadline hidden in the HTTP client's error text, so that a slow endpoint is
// reported as a timeout (504) rather than a failure (502).
func ctx(err error) error {
	if errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "Client.Timeout exceeded") {
		return fmt.Errorf("%w: %v", context.DeadlineExceeded, err)
	}
	return nil
}

// callErr reports a failed element of a batch.
func (c *Client) callErr(op string, err error) error {
	return &upstream.Error{Upstream: Name, Op: op, Err: err}
}

// ChainName is the network name of a chain id, as the routes report it.
func ChainName(id uint64) string {
	switch id {
	case 8453:
		return "base"
	case 84532:
		return "base-sepolia"
	case 1:
		return "ethereum"
	case 1337:
		return "dev" // the embedded chain of appliance dev and the tests
	}
	return fmt.Sprintf("eip155:%d", id)
}
