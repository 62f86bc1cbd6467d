// Package chainrpc is the chain-data connector of the chain routes (upstream name "base-rpc"):
// JSON-RPC over HTTP through go-ethereum's rpc and abi packages, against the endpoints of
// [chain] rpc (Base mainnet in production, the embedded chain in `appliance dev`), tried in
// order: the next one takes a request the previous could not answer. Every
// question a route asks is one HTTP request: its calls go out as one JSON-RPC batch, so a
// balance of ten tokens costs one round trip, and a token bucket per endpoint keeps the request
// rate within what public endpoints tolerate. Results are plain Go values (strings, *big.Int): the rest of
// the API never links go-ethereum. Failures are *upstream.Error.
package chainrpc

import (
	"context"
	"errors"
	"fmt"
	"github.com/peage/appliance/api/upstream/httpc"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/peage/appliance/api/upstream"
)

// Name is the upstream name the catalog entries carry.
const Name = "base-rpc"

// ENSName is the upstream name of the ENS chain's client (NewENS).
const ENSName = "eth-rpc"

// ErrNotConfigured is the reason the routes are unavailable without [chain] rpc.
var ErrNotConfigured = errors.New("no chain RPC endpoint configured (chain.rpc)")

// Client asks the configured JSON-RPC endpoints; it is safe for concurrent use.
type Client struct {
	name     string // the upstream name its failures carry
	eps      []endpoint
	usdc     common.Address
	maxBatch int
	chainID  atomic.Uint64 // 0 until ChainID has asked
}

type endpoint struct {
	rpc  *rpc.Client
	host string // for messages: the endpoint's host only, since provider URLs carry keys
}

// New builds a client for cfg.RPC. It does not contact the endpoints: a chain that is down at
// start is reported per call (502), not as a configuration error.
func New(cfg Config) (*Client, error) {
	if cfg.RPC == "" {
		return nil, ErrNotConfigured
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Client{name: Name, usdc: common.HexToAddress(cfg.USDC), maxBatch: cfg.MaxBatch}
	for _, raw := range cfg.Endpoints() {
		u, _ := url.Parse(raw)
		hc := &http.Client{
			Timeout:   cfg.Timeout,
			Transport: &limited{next: http.DefaultTransport, b: httpc.NewBucket(cfg.RatePerSecond, cfg.Burst)},
		}
		r, err := rpc.DialOptions(context.Background(), raw, rpc.WithHTTPClient(hc))
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("chain.rpc: %w", err)
		}
		c.eps = append(c.eps, endpoint{rpc: r, host: u.Host})
	}
	return c, nil
}

// ErrNoENS is the reason /v1/chain/ens is unavailable without chain.ens_rpc.
var ErrNoENS = errors.New("no Ethereum mainnet endpoint for ENS configured (chain.ens_rpc)")

// NewENS builds the client of the ENS chain (Ethereum mainnet) from chain.ens_rpc, with the
// same limits as the main endpoints.
func NewENS(cfg Config) (*Client, error) {
	if cfg.ENSRPC == "" {
		return nil, ErrNoENS
	}
	cfg.RPC = cfg.ENSRPC
	c, err := New(cfg)
	if err == nil {
		c.name = ENSName
	}
	return c, err
}

// Close releases the client's connections.
func (c *Client) Close() {
	for _, e := range c.eps {
		e.rpc.Close()
	}
}

// Endpoint names the endpoints by host, safe to show.
func (c *Client) Endpoint() string {
	hosts := make([]string, len(c.eps))
	for i, e := range c.eps {
		hosts[i] = e.host
	}
	return strings.Join(hosts, ", ")
}

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
		if err := c.send(ctx, op, part); err != nil {
			return nil, err
		}
	}
	errs := make([]error, len(calls))
	for i, e := range elems {
		errs[i] = e.Error
	}
	return errs, nil
}

// send tries the endpoints in order until one answers the batch. A request that failed before
// any answer (unreachable, slow, 429, 5xx, throttled here) leaves the elements untouched, so
// the next endpoint gets the same batch; the call's own deadline ends the tries.
func (c *Client) send(ctx context.Context, op string, part []rpc.BatchElem) error {
	var last error
	for _, e := range c.eps {
		err := e.rpc.BatchCallContext(ctx, part)
		if err == nil {
			return nil
		}
		last = c.fail(op, err)
		var ue *upstream.Error
		if !errors.As(last, &ue) || !ue.Retryable || ctx.Err() != nil {
			break
		}
	}
	return last
}

// fail wraps a failure of the whole request as the connector's error, keeping the endpoint's
// HTTP status; the edge maps it (upstream.Error.APIError), naming the endpoint by its host.
func (c *Client) fail(op string, err error) error {
	// Any failure without an HTTP answer (refused, reset, DNS) is worth the next endpoint.
	ue := &upstream.Error{Upstream: c.name, Display: c.display(), Op: op, Err: err, Retryable: true}
	var he rpc.HTTPError
	if errors.As(err, &he) {
		ue.Status = he.StatusCode
		ue.Retryable = he.StatusCode == http.StatusTooManyRequests || he.StatusCode >= 500
		ue.Err = fmt.Errorf("%s", strings.TrimSpace(he.Status))
		if he.StatusCode == http.StatusTooManyRequests {
			// The operator's own endpoint rate-limiting the appliance: the appliance is busy
			// (429, retry in a moment), not failing.
			ue.Err = fmt.Errorf("%w: %s", upstream.ErrThrottled, strings.TrimSpace(he.Status))
		}
	}
	if errors.Is(err, httpc.ErrWouldMissDeadline) {
		ue.Err = upstream.ErrThrottled
		ue.Retryable = true
	}
	if d := deadlineOf(err); d != nil {
		ue.Err = d
	}
	return ue
}

// deadlineOf recovers a deadline hidden in the HTTP client's error text, so that a slow endpoint is
// reported as a timeout (504) rather than a failure (502).
func deadlineOf(err error) error {
	if errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "Client.Timeout exceeded") {
		return fmt.Errorf("%w: %v", context.DeadlineExceeded, err)
	}
	return nil
}

// callErr reports a failed element of a batch: the endpoint's own error (a revert, an
// unknown method) is its Reason, shown to the caller as it was before the edge mapped it.
func (c *Client) callErr(op string, err error) error {
	return &upstream.Error{Upstream: c.name, Display: c.display(), Op: op, Err: err, Reason: err.Error()}
}

// display names the endpoints in a failure's message, by host (provider URLs carry keys).
func (c *Client) display() string { return "the chain endpoint " + c.Endpoint() }

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
