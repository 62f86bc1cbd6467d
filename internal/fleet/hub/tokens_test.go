package hub_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/fleet/fleettest"
	"github.com/peage/appliance/internal/fleet/hub"
	"github.com/peage/appliance/internal/testclock"
)

func startHubAt(t *testing.T, dir string, clock *testclock.Clock) *hub.Hub {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h, err := hub.Start(ctx, hub.Config{StateDir: filepath.Join(dir, "state"), StoreDir: filepath.Join(dir, "store"),
		LeafAddr: "127.0.0.1:0", Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return h
}

// boxKey is what a box makes for itself before it redeems a token.
func boxKey(t *testing.T) (seed, pub string) {
	t.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	s, _ := kp.Seed()
	p, _ := kp.PublicKey()
	return string(s), p
}

// TestTokenEnrolsOnce: a token enrols the box it was made for, once, with the key the box
// made; the box joins with that key, and the hub never held the seed nor keeps the secret.
func TestTokenEnrolsOnce(t *testing.T) {
	dir := t.TempDir()
	clock := testclock.At(time.Now())
	h := startHubAt(t, dir, clock)
	tok, _, err := h.NewToken("box-a", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	saved, err := os.ReadFile(filepath.Join(dir, "state", "fleet-tokens.json"))
	if err != nil || strings.Contains(string(saved), tok.Secret) || !strings.Contains(string(saved), "box-a") {
		t.Fatalf("the hub keeps the token as %q (%v); want its hash only", saved, err)
	}
	// A restarted hub still knows the pending token.
	h.Close()
	h = startHubAt(t, dir, clock)

	seed, pub := boxKey(t)
	creds, err := h.Redeem(tok.Secret, "box-a", pub, "")
	if err != nil {
		t.Fatal(err)
	}
	if creds.Seed != "" || creds.Box != "box-a" || creds.LeafURL != h.LeafURL() || creds.CAPEM == "" {
		t.Fatalf("credentials %+v", creds)
	}
	creds.Seed = seed
	b := startBox(t, creds)
	fleettest.WaitFor(t, "the leaf link of the enrolled key", b.Connected)
	if got := call(t, h.Conn(), "box-a"); got != "echo:hi" {
		t.Fatalf("answer %q", got)
	}
	_, pub2 := boxKey(t)
	if _, err := h.Redeem(tok.Secret, "box-a", pub2, ""); !errors.Is(err, hub.ErrTokenRefused) {
		t.Fatalf("second redemption: %v, want refused", err)
	}
	if !b.Connected() {
		t.Fatal("a refused second redemption replaced the box's key")
	}
	// The box asking again with its own key (its first answer lost) is answered again; once
	// it is revoked, not any more.
	again, err := h.Redeem(tok.Secret, "box-a", pub, "")
	if want := (fleet.Credentials{Box: creds.Box, LeafURL: creds.LeafURL, CAPEM: creds.CAPEM}); err != nil || again != want {
		t.Fatalf("the same key again: %+v, %v; want %+v", again, err, want)
	}
	if err := h.Revoke("box-a"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Redeem(tok.Secret, "box-a", pub, ""); !errors.Is(err, hub.ErrTokenRefused) {
		t.Fatalf("the same key after revocation: %v, want refused", err)
	}
}

// TestTokenRefusals: every token that should not enrol is refused and enrols nothing.
func TestTokenRefusals(t *testing.T) {
	cases := []struct {
		name   string
		redeem func(h *hub.Hub, clock *testclock.Clock, tok fleet.EnrolToken, pub string) error
		want   error
	}{
		{"expired", func(h *hub.Hub, clock *testclock.Clock, tok fleet.EnrolToken, pub string) error {
			clock.Add(time.Hour)
			_, err := h.Redeem(tok.Secret, "box-a", pub, "")
			return err
		}, hub.ErrTokenRefused},
		{"forged", func(h *hub.Hub, _ *testclock.Clock, _ fleet.EnrolToken, pub string) error {
			forged, _, err := h.NewToken("box-z", time.Hour)
			if err != nil {
				return err
			}
			forged.Secret = strings.Repeat("A", len(forged.Secret))
			_, err = h.Redeem(forged.Secret, "box-a", pub, "")
			return err
		}, hub.ErrTokenRefused},
		{"made for another box, then for its own", func(h *hub.Hub, _ *testclock.Clock, tok fleet.EnrolToken, pub string) error {
			if _, err := h.Redeem(tok.Secret, "box-b", pub, ""); !errors.Is(err, hub.ErrTokenRefused) {
				return errors.New("box-b enrolled with box-a's token")
			}
			_, err := h.Redeem(tok.Secret, "box-a", pub, "") // spent by the wrong name's attempt
			return err
		}, hub.ErrTokenRefused},
		{"another box's key", func(h *hub.Hub, _ *testclock.Clock, tok fleet.EnrolToken, _ string) error {
			other, _, err := h.NewToken("box-b", time.Hour)
			if err != nil {
				return err
			}
			_, pubB := boxKey(t)
			if _, err := h.Redeem(other.Secret, "box-b", pubB, ""); err != nil {
				return err
			}
			_, err = h.Redeem(tok.Secret, "box-a", pubB, "")
			return err
		}, hub.ErrKeyInUse},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clock := testclock.At(time.Now())
			h := startHubAt(t, t.TempDir(), clock)
			tok, _, err := h.NewToken("box-a", time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			_, pub := boxKey(t)
			if err := c.redeem(h, clock, tok, pub); !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			for _, b := range h.Enrolled() {
				if b == "box-a" {
					t.Fatal("box-a was enrolled")
				}
			}
		})
	}
}

// TestBoxKeyOnAClientConnectionIsRefused: an enrolled box's key opens only a leaf link; on a
// client connection (which would skip the leaf's permissions as the hub applies them) the hub
// refuses it.
func TestBoxKeyOnAClientConnectionIsRefused(t *testing.T) {
	dir := t.TempDir()
	h, log := startHub(t, filepath.Join(dir, "state"), filepath.Join(dir, "store"))
	creds, err := h.Enrol("box-a")
	if err != nil {
		t.Fatal(err)
	}
	kp, err := nkeys.FromSeed([]byte(creds.Seed))
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	nc, err := nats.Connect("", nats.InProcessServer(h.Server()), nats.Nkey(pub, kp.Sign),
		nats.NoReconnect(), nats.Timeout(2*time.Second))
	if err == nil {
		nc.Close()
		t.Fatal("the box's key opened a client connection")
	}
	fleettest.WaitFor(t, "the hub's refusal", func() bool { return log.refusals() >= 1 })
}
