package hub_test

import (
	"crypto/x509"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/fleet/box"
	"github.com/peage/appliance/internal/fleet/fleettest"
	"github.com/peage/appliance/internal/fleet/hub"
)

// keptBundle is what a box's OnCA kept (its credentials file).
type keptBundle struct {
	mu   sync.Mutex
	pins []string
}

func (k *keptBundle) keep(bundle []byte) error {
	cas, err := fleet.CABundle(bundle)
	if err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.pins = fleet.CAPins(cas)
	return nil
}

func (k *keptBundle) get() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.pins
}

// TestCARotationKeepsBoxesLinked: the next CA is staged and every box comes to trust it beside
// the current one (handed on its CA subject, kept by OnCA, reported in its heartbeat); the
// switch waits for every enrolled box, then serves a certificate of the new CA without
// dropping the link, and the box's next link verifies it; retiring the old CA leaves the boxes
// trusting the new one alone. A box that is not there during the overlap holds the switch up
// until the operator forces it, and is then refused.
func TestCARotationKeepsBoxesLinked(t *testing.T) {
	dir := t.TempDir()
	h, log := startHub(t, filepath.Join(dir, "state"), filepath.Join(dir, "store"))
	creds, err := h.Enrol("box-a")
	if err != nil {
		t.Fatal(err)
	}
	absent, err := h.Enrol("box-b") // enrolled, but off during the rotation
	if err != nil {
		t.Fatal(err)
	}
	kept := &keptBundle{}
	b, err := box.Start(t.Context(), box.Config{Credentials: creds, Routes: map[string]box.Handler{"echo": echo},
		Heartbeat: 50 * time.Millisecond, Reconnect: 20 * time.Millisecond, OnCA: kept.keep})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	fleettest.WaitFor(t, "the leaf link", b.Connected)
	old := h.CA().Signing

	if err := h.SwitchCA(false); !errors.Is(err, hub.ErrNoStagedCA) {
		t.Fatalf("switch before staging: %v", err)
	}
	if err := h.StageCA(); err != nil {
		t.Fatal(err)
	}
	next := h.CA().Next
	both := slices.Sorted(slices.Values([]string{old, next}))
	fleettest.WaitFor(t, "box-a trusting both CAs", func() bool {
		return slices.Equal(h.CA().Boxes["box-a"], both) && slices.Equal(kept.get(), both)
	})
	var behind *hub.BoxesBehindError
	if err := h.SwitchCA(false); !errors.As(err, &behind) || !slices.Equal(behind.Boxes, []string{"box-b"}) {
		t.Fatalf("switch with box-b behind: %v", err)
	}
	link := leafID(t, h)
	if err := h.SwitchCA(true); err != nil {
		t.Fatal(err)
	}
	if st := h.CA(); st.Signing != next || st.Next != "" || fleet.CAPin(issuer(t, h)) != next {
		t.Fatalf("after the switch: %+v", st)
	}
	if got := leafID(t, h); got != link {
		t.Fatalf("the switch dropped box-a's link (%d, now %d)", link, got)
	}
	if err := h.Server().DisconnectClientByID(link); err != nil {
		t.Fatal(err)
	}
	fleettest.WaitFor(t, "box-a's next link, verifying the new CA", func() bool { id := leafID(t, h); return id != 0 && id != link })
	if got := call(t, h.Conn(), "box-a"); got != "echo:hi" {
		t.Fatalf("answer %q", got)
	}

	// box-b still trusts the old CA alone: refused at the handshake.
	refusedBefore := log.tlsFailures()
	late := startBox(t, absent)
	fleettest.WaitFor(t, "box-b's handshake refused", func() bool { return log.tlsFailures() > refusedBefore })
	if late.Connected() {
		t.Fatal("a box trusting only the old CA joined after the switch")
	}

	if err := h.RetireCA(); err != nil {
		t.Fatal(err)
	}
	fleettest.WaitFor(t, "box-a trusting the new CA alone", func() bool {
		return slices.Equal(h.CA().Boxes["box-a"], []string{next}) && slices.Equal(kept.get(), []string{next})
	})
}

func leafID(t *testing.T, h *hub.Hub) uint64 {
	t.Helper()
	leafz, err := h.Server().Leafz(nil)
	if err != nil || len(leafz.Leafs) != 1 {
		return 0
	}
	return leafz.Leafs[0].ID
}

// issuer is the CA that signed the hub's certificate now, as the trust bundle holds it.
func issuer(t *testing.T, h *hub.Hub) *x509.Certificate {
	t.Helper()
	creds, err := h.Enrol("probe")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = h.Revoke("probe") }()
	cas, err := fleet.CABundle([]byte(creds.CAPEM))
	if err != nil {
		t.Fatal(err)
	}
	for _, ca := range cas {
		if h.Certificate().CheckSignatureFrom(ca) == nil {
			return ca
		}
	}
	t.Fatal("no CA of the bundle signed the hub's certificate")
	return nil
}

// TestStagedCAOutlivesARestart: a hub restarted during the overlap still hands out both CAs
// and still knows which one it will switch to.
func TestStagedCAOutlivesARestart(t *testing.T) {
	dir := t.TempDir()
	state, store := filepath.Join(dir, "state"), filepath.Join(dir, "store")
	h, _ := startHub(t, state, store)
	if err := h.StageCA(); err != nil {
		t.Fatal(err)
	}
	before := h.CA()
	h.Close()
	h, _ = startHub(t, state, store)
	after := h.CA()
	if after.Signing != before.Signing || after.Next != before.Next || !slices.Equal(after.Trusted, before.Trusted) || len(after.Trusted) != 2 {
		t.Fatalf("before the restart %+v, after %+v", before, after)
	}
	creds, err := h.Enrol("box-a")
	if err != nil {
		t.Fatal(err)
	}
	if cas, err := fleet.CABundle([]byte(creds.CAPEM)); err != nil || !slices.Equal(fleet.CAPins(cas), before.Trusted) {
		t.Fatalf("a box enrolled after the restart trusts %v (%v), want %v", cas, err, before.Trusted)
	}
}
