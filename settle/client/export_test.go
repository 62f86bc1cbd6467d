package client

import (
	"context"
	"net"
	"net/http"
	"time"
)

// NewOverNetHTTP is New for a Unix socket with net/http's Transport, as the client had it
// before its own transport: the benchmark's baseline.
func NewOverNetHTTP(path string) *Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		},
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
	}
	return &Client{base: "http://settle", hc: &http.Client{Transport: tr}}
}
