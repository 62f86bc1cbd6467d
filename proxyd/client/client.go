// Package client is the API side's view of proxyd: the wire types of its admin API and a small
// client that speaks it over a Unix socket. It must not import goproxy, so the API process can
// sell and inspect packages without linking the proxy.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// Service is what the API needs from proxyd. *proxyd.Server implements it in process
// (`appliance dev`); *Client implements it over the admin socket (production).
type Service interface {
	// Sell checks the exit live through the proxy's own path, then issues a package of gb
	// gigabytes. An exit that is not live is an *Error with Code CodeExitDown: nothing issued.
	Sell(ctx context.Context, gb int) (*Sale, error)
	// Revoke ends a package at once (settlement failed after Sell) and closes its tunnels.
	Revoke(ctx context.Context, key string) error
	// Usage reports a key's meter; an unknown key is an *Error with Code CodeUnknownKey.
	Usage(ctx context.Context, key string) (*Usage, error)
	// Status reports the exit and whether the proxy port is reachable from outside.
	Status(ctx context.Context) (*Status, error)
}

// Exit describes the one residential exit as the echo service saw it.
type Exit struct {
	IP      string `json:"ip"`
	Country string `json:"country"`
	ASN     string `json:"asn"`
	Carrier string `json:"carrier"`
	Mobile  bool   `json:"mobile"`
	// Source is the echo endpoint that answered.
	Source    string    `json:"source"`
	CheckedAt time.Time `json:"checked_at"`
}

// Speed is what one measurement through the exit showed at sale time. DownBitsPerSec is 0 when
// no speed probe is configured; then only the round trip of the echo request was measured.
type Speed struct {
	DownBitsPerSec int64     `json:"down_bits_per_sec"`
	ProbeBytes     int64     `json:"probe_bytes"`
	RoundTripMS    int64     `json:"round_trip_ms"`
	Method         string    `json:"method"`
	MeasuredAt     time.Time `json:"measured_at"`
}

// Sale is a freshly issued package.
type Sale struct {
	Key       string    `json:"key"`
	GB        int       `json:"gb"`
	Bytes     int64     `json:"bytes"`
	ValidDays int       `json:"valid_days"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
	// ProxyHost and ProxyPort are the public address buyers connect to.
	ProxyHost string `json:"proxy_host"`
	ProxyPort int    `json:"proxy_port"`
	Exit      Exit   `json:"exit"`
	Speed     Speed  `json:"speed"`
	// Box is the fleet box that holds the package, when a fleet's gateway sold it.
	Box string `json:"box,omitempty"`
}

// Usage is a package's meter as proxyd holds it.
type Usage struct {
	Bytes     int64     `json:"bytes"`
	Used      int64     `json:"used"`
	Remaining int64     `json:"remaining"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
	// State is "valid", "exhausted", "expired" or "revoked".
	State   string `json:"state"`
	Tunnels int    `json:"open_tunnels"`
}

// Reachability says whether the proxy port answers from the internet.
type Reachability string

const (
	Reachable   Reachability = "yes"
	Unreachable Reachability = "no"
	Unknown     Reachability = "unknown"
)

// Status is the free health view of the proxy.
type Status struct {
	Live      bool         `json:"live"`
	Exit      *Exit        `json:"exit,omitempty"`
	Problem   string       `json:"problem,omitempty"`
	Reachable Reachability `json:"reachable"`
	// ReachableNote says why reachability is unknown, or which probe answered.
	ReachableNote string    `json:"reachable_note,omitempty"`
	ProxyHost     string    `json:"proxy_host"`
	ProxyPort     int       `json:"proxy_port"`
	CheckedAt     time.Time `json:"checked_at"`
}

// Stats are the proxy's counters, for /metrics and the operator's dashboard (GET /stats of the
// admin API).
type Stats struct {
	TunnelsOpen   int64 `json:"tunnels_open"`
	TunnelsTotal  int64 `json:"tunnels_total"`
	RefusedAuth   int64 `json:"refused_auth"`
	RefusedPolicy int64 `json:"refused_policy"`
	RefusedPort   int64 `json:"refused_port"`
	RefusedBusy   int64 `json:"refused_busy"`
	RefusedEnded  int64 `json:"refused_ended"`
	DialFailed    int64 `json:"dial_failed"`
	BytesUp       int64 `json:"bytes_up"`
	BytesDown     int64 `json:"bytes_down"`
	// BytesKernel is the part of BytesUp+BytesDown copied by splice (zero-copy) windows.
	BytesKernel    int64 `json:"bytes_kernel"`
	Packages       int   `json:"packages"`
	PackagesActive int   `json:"packages_active"`
	// CopyPath is "splice" or "buffered"; CopyPathWhy is the measurement (or config) behind it.
	CopyPath    string `json:"copy_path"`
	CopyPathWhy string `json:"copy_path_why"`
	// Procs is the processors (GOMAXPROCS) proxyd runs Go code on: 1 wherever its meters'
	// fsyncs go through AIO (proxyd.TuneScheduler).
	Procs int `json:"procs"`
}

// Code classifies admin API failures.
type Code string

const (
	CodeExitDown    Code = "exit_down"
	CodeUnknownKey  Code = "unknown_key"
	CodeBadRequest  Code = "bad_request"
	CodeInternal    Code = "internal"
	CodeUnavailable Code = "unavailable"
	// CodeNoExit: no exit where the buyer asked (a fleet with no box in that country or ASN).
	CodeNoExit Code = "no_exit"
)

// Error is a typed admin API failure.
type Error struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return "proxyd: " + string(e.Code) + ": " + e.Message }

// IsCode reports whether err is an *Error with code c.
func IsCode(err error, c Code) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == c
}

// Client speaks the admin API over a Unix socket.
type Client struct {
	hc *http.Client
}

// New returns a client for the admin socket at path.
func New(path string) *Client {
	var d net.Dialer
	tr := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", path)
		},
		MaxIdleConns:    4,
		IdleConnTimeout: 30 * time.Second,
	}
	return &Client{hc: &http.Client{Transport: tr}}
}

// Close drops idle connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

var _ Service = (*Client)(nil)

// SellRequest is the body of POST /sell.
type SellRequest struct {
	GB int `json:"gb"`
}

// RevokeRequest is the body of POST /revoke.
type RevokeRequest struct {
	Key string `json:"key"`
}

// KeyHeader carries a package key to the admin API (never in a URL, so it stays out of logs).
const KeyHeader = "X-Proxy-Key"

func (c *Client) Sell(ctx context.Context, gb int) (*Sale, error) {
	var s Sale
	return &s, c.do(ctx, http.MethodPost, "/sell", SellRequest{GB: gb}, "", &s)
}

func (c *Client) Revoke(ctx context.Context, key string) error {
	return c.do(ctx, http.MethodPost, "/revoke", RevokeRequest{Key: key}, "", nil)
}

func (c *Client) Usage(ctx context.Context, key string) (*Usage, error) {
	var u Usage
	return &u, c.do(ctx, http.MethodGet, "/usage", nil, key, &u)
}

func (c *Client) Status(ctx context.Context) (*Status, error) {
	var s Status
	return &s, c.do(ctx, http.MethodGet, "/status", nil, "", &s)
}

// Stats reads the proxy's counters (GET /stats): tunnels, refusals, bytes, packages.
func (c *Client) Stats(ctx context.Context) (*Stats, error) {
	var s Stats
	return &s, c.do(ctx, http.MethodGet, "/stats", nil, "", &s)
}

// Alive reports whether the daemon answers its admin socket (GET /stats takes the meters'
// and packages' locks, and checks nothing over the network): the unit's liveness check.
func (c *Client) Alive(ctx context.Context) error {
	_, err := c.Stats(ctx)
	return err
}

func (c *Client) do(ctx context.Context, method, path string, in any, key string, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://proxyd"+path, body)
	if err != nil {
		return err
	}
	if key != "" {
		req.Header.Set(KeyHeader, key)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return &Error{Code: CodeUnavailable, Message: fmt.Sprintf("proxyd admin socket: %v", err)}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return &Error{Code: CodeUnavailable, Message: fmt.Sprintf("proxyd admin socket: %v", err)}
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error Error `json:"error"`
		}
		if json.Unmarshal(b, &e) == nil && e.Error.Code != "" {
			return &e.Error
		}
		return &Error{Code: CodeInternal, Message: fmt.Sprintf("proxyd answered %d", resp.StatusCode)}
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}
