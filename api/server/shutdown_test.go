package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/server"
)

// TestShutdownStopsRunningWork: a handler running when the server shuts down sees its context
// end (cancelled, long before its own deadline), its caller gets a 503 saying so, and the call
// is not charged.
func TestShutdownStopsRunningWork(t *testing.T) {
	started, ended := make(chan struct{}), make(chan error, 1)
	cat, err := catalog.New([]catalog.Entry{{Method: "GET", Path: "/v1/test/long", Summary: "long", Kind: catalog.Paid,
		Price: 1_000, Timeout: 30 * time.Second,
		Handler: func(ctx context.Context, _ *catalog.Request) (any, error) {
			close(started)
			<-ctx.Done()
			ended <- ctx.Err()
			return nil, ctx.Err()
		}}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := server.DefaultConfig()
	cfg.Addr, cfg.BaseURL, cfg.FreePerMinute = ln.Addr().String(), "http://"+ln.Addr().String(), 0
	pay := paywall.DefaultConfig()
	pay.PayTo = apitest.TestPayTo
	gate := &apitest.RecordingGate{}
	srv := server.New(cfg, cat, server.Options{Gate: gate, Pay: pay})
	ctx, shutdown := context.WithCancel(context.Background())
	defer shutdown()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()

	type answer struct {
		status int
		code   string
		err    error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := http.Get(cfg.BaseURL + "/v1/test/long?x=1")
		if err != nil {
			answered <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		var body struct {
			Error struct{ Code string } `json:"error"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		answered <- answer{status: resp.StatusCode, code: body.Error.Code, err: err}
	}()
	<-started
	shutdown()
	if err := <-ended; !errors.Is(err, context.Canceled) {
		t.Errorf("the running handler's context ended with %v, want cancelled by the shutdown", err)
	}
	if a := <-answered; a.err != nil || a.status != http.StatusServiceUnavailable || a.code != "not_available" {
		t.Errorf("the caller got %d %q (%v), want 503 not_available", a.status, a.code, a.err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	gate.WantNotCharged(t, 1)
}
