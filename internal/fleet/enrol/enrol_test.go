package enrol_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nkeys"

	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/fleet/box"
	"github.com/peage/appliance/internal/fleet/enrol"
	"github.com/peage/appliance/internal/fleet/fleettest"
	"github.com/peage/appliance/internal/fleet/hub"
	"github.com/peage/appliance/internal/testclock"
)

// counting is the hub as the route sees it, counting the redemptions that reach it.
type counting struct {
	*hub.Hub
	calls atomic.Int64
}

func (c *counting) Redeem(secret, box, pub, wgPub string) (fleet.Credentials, error) {
	c.calls.Add(1)
	return c.Hub.Redeem(secret, box, pub, wgPub)
}

type gateway struct {
	hub *counting
	url string
}

// startGateway runs a hub and its enrolment route on a TLS listener of loopback.
func startGateway(t *testing.T, lim enrol.Limits) gateway {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h, err := hub.Start(ctx, hub.Config{StateDir: filepath.Join(dir, "state"), StoreDir: filepath.Join(dir, "store"), LeafAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &counting{Hub: h}
	serveCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- enrol.Serve(serveCtx, ln, h.EnrolTLS(), enrol.Handler(c, lim, nil)) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return gateway{hub: c, url: "https://" + ln.Addr().String()}
}

func token(t *testing.T, h *hub.Hub, name string) fleet.EnrolToken {
	t.Helper()
	tok, _, err := h.NewToken(name, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	// What the operator copies is its text.
	parsed, err := fleet.ParseEnrolToken(tok.String())
	if err != nil {
		t.Fatal(err)
	}
	return parsed
}

// join redeems tok for box with a key made for the call.
func join(t *testing.T, url string, tok fleet.EnrolToken, box string) (fleet.Credentials, error) {
	t.Helper()
	seed, err := enrol.NewSeed()
	if err != nil {
		t.Fatal(err)
	}
	return enrol.Join(t.Context(), url, tok, box, seed, "")
}

func echo(_ context.Context, req []byte) ([]byte, error) { return req, nil }

// TestBoxJoinsWithItsToken: the box redeems its token over TLS (trusting the gateway by the
// token's pin alone), joins with the key it made, and the token does not work for another key.
func TestBoxJoinsWithItsToken(t *testing.T) {
	gw := startGateway(t, enrol.Limits{})
	tok := token(t, gw.hub.Hub, "line-1")
	seed, err := enrol.NewSeed()
	if err != nil {
		t.Fatal(err)
	}
	creds, err := enrol.Join(t.Context(), gw.url, tok, "line-1", seed, "")
	if err != nil {
		t.Fatal(err)
	}
	if creds.Seed != string(seed) {
		t.Fatal("the credentials do not carry the box's own seed")
	}
	// Its answer lost, the box asks again with the same key and gets the same credentials.
	again, err := enrol.Join(t.Context(), gw.url, tok, "line-1", seed, "")
	if err != nil || again != creds {
		t.Fatalf("asking again with the same key: %+v, %v", again, err)
	}
	b, err := box.Start(t.Context(), box.Config{Credentials: creds, Routes: map[string]box.Handler{"echo": echo},
		Heartbeat: 50 * time.Millisecond, Reconnect: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	fleettest.WaitFor(t, "the enrolled box's leaf link", b.Connected)

	_, err = join(t, gw.url, tok, "line-1")
	var refused *enrol.RefusedError
	if !errors.As(err, &refused) || refused.Status != http.StatusForbidden {
		t.Fatalf("second redemption: %v, want 403", err)
	}
	if !b.Connected() {
		t.Fatal("the refused second redemption cut the box")
	}
}

// TestGatewayOutsideThePinIsRefused: a box holding a token of one gateway refuses another
// server (a man in the middle with a certificate of its own CA) and sends it nothing.
func TestGatewayOutsideThePinIsRefused(t *testing.T) {
	real, impostor := startGateway(t, enrol.Limits{}), startGateway(t, enrol.Limits{})
	tok := token(t, real.hub.Hub, "line-1")
	_, err := join(t, impostor.url, tok, "line-1")
	if err == nil || !strings.Contains(err.Error(), "not from the fleet CA the token pins") {
		t.Fatalf("joined a gateway outside the pin: %v", err)
	}
	if n := impostor.hub.calls.Load(); n != 0 {
		t.Fatalf("the impostor received %d redemptions", n)
	}
	if _, err := join(t, real.url, tok, "line-1"); err != nil {
		t.Fatalf("the real gateway: %v", err)
	}
}

// TestRedemptionsAreRateLimited: past its burst a client is answered 429 without the hub
// being asked, even with a good token, until its rate allows again.
func TestRedemptionsAreRateLimited(t *testing.T) {
	clock := testclock.At(time.Now())
	gw := startGateway(t, enrol.Limits{PerMinute: 1, Burst: 2, Now: clock.Now})
	good := token(t, gw.hub.Hub, "line-1")
	forged := good
	forged.Secret = strings.Repeat("A", len(good.Secret))
	var statuses []int
	for _, tok := range []fleet.EnrolToken{forged, forged, forged, good} {
		_, err := join(t, gw.url, tok, "line-1")
		var refused *enrol.RefusedError
		if !errors.As(err, &refused) {
			t.Fatalf("attempt %d: %v, want a refusal", len(statuses)+1, err)
		}
		statuses = append(statuses, refused.Status)
	}
	want := []int{http.StatusForbidden, http.StatusForbidden, http.StatusTooManyRequests, http.StatusTooManyRequests}
	for i := range want {
		if statuses[i] != want[i] {
			t.Fatalf("statuses %v, want %v", statuses, want)
		}
	}
	if n := gw.hub.calls.Load(); n != 2 {
		t.Fatalf("the hub was asked %d times, want the 2 within the burst", n)
	}
	clock.Add(time.Minute)
	if _, err := join(t, gw.url, good, "line-1"); err != nil {
		t.Fatalf("a minute later, the good token: %v", err)
	}
}

// TestBadRequestNamesTheParameter: a malformed request is a 400 naming what is wrong, and
// spends no token.
func TestBadRequestNamesTheParameter(t *testing.T) {
	gw := startGateway(t, enrol.Limits{})
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	cases := []struct{ body, want string }{
		{`{"token":"x","box":"Line.1","nkey":"UA"}`, "box:"},
		{`{"token":"x","box":"line-1","nkey":"SUAFORGED"}`, "nkey:"},
		{`{"token":"x","box":"line-1","nkey":"` + pub + `","wireguard":"c2hvcnQ="}`, "wireguard:"},
		{`not json`, "body:"},
	}
	for _, c := range cases {
		resp, err := client.Post(gw.url+fleet.EnrolPath, "application/json", bytes.NewReader([]byte(c.body)))
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.HasPrefix(b.String(), c.want) {
			t.Errorf("%s: %d %q, want 400 %s...", c.body, resp.StatusCode, b.String(), c.want)
		}
	}
	if n := gw.hub.calls.Load(); n != 0 {
		t.Fatalf("bad requests reached the hub %d times", n)
	}
}
