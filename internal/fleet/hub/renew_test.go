package hub_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/peage/appliance/internal/fleet/fleettest"
	"github.com/peage/appliance/internal/fleet/hub"
	"github.com/peage/appliance/internal/testclock"
)

// TestCertificateRenewsWithoutDroppingBoxes: once the hub's certificate is within RenewBefore
// of its end, the hub issues another from the same CA; the box's link stays up (same
// connection), and its next link is served the new certificate and verifies it with the CA it
// enrolled with.
func TestCertificateRenewsWithoutDroppingBoxes(t *testing.T) {
	dir := t.TempDir()
	// Issued at the clock's time, valid an hour; 45 minutes on it is due (20 minutes before
	// its end), and the next one, issued then, is already valid in real time.
	clock := testclock.At(time.Now())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h, err := hub.Start(ctx, hub.Config{StateDir: filepath.Join(dir, "state"), StoreDir: filepath.Join(dir, "store"),
		LeafAddr: "127.0.0.1:0", Now: clock.Now,
		CertValidity: time.Hour, RenewBefore: 20 * time.Minute, RenewCheck: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	creds, err := h.Enrol("box-a")
	if err != nil {
		t.Fatal(err)
	}
	first := h.Certificate()

	var mu sync.Mutex
	var served []*x509.Certificate
	leaf := rawLeaf(t, creds, func(cs tls.ConnectionState) error {
		mu.Lock()
		defer mu.Unlock()
		served = append(served, cs.PeerCertificates[0])
		return nil
	})
	linkID := func() uint64 {
		leafz, err := h.Server().Leafz(nil)
		if err != nil || len(leafz.Leafs) != 1 {
			return 0
		}
		return leafz.Leafs[0].ID
	}
	var link uint64
	fleettest.WaitFor(t, "the box's link", func() bool { link = linkID(); return link != 0 })

	clock.Add(45 * time.Minute)
	fleettest.WaitFor(t, "the renewed certificate", func() bool { return h.Certificate().SerialNumber.Cmp(first.SerialNumber) != 0 })
	renewed := h.Certificate()
	if !renewed.NotAfter.After(first.NotAfter) || renewed.Issuer.String() != first.Issuer.String() ||
		string(renewed.AuthorityKeyId) != string(first.AuthorityKeyId) {
		t.Fatalf("renewed certificate: until %v by %v, the first until %v by %v", renewed.NotAfter, renewed.Issuer, first.NotAfter, first.Issuer)
	}
	if got := linkID(); got != link || leaf.NumLeafNodes() != 1 {
		t.Fatalf("the box's link %d became %d: renewal dropped it", link, got)
	}

	// The box's next link gets the new certificate and verifies it with its enrolment CA.
	if err := h.Server().DisconnectClientByID(link); err != nil {
		t.Fatal(err)
	}
	fleettest.WaitFor(t, "the box's next link", func() bool { id := linkID(); return id != 0 && id != link })
	mu.Lock()
	defer mu.Unlock()
	if last := served[len(served)-1]; last.SerialNumber.Cmp(renewed.SerialNumber) != 0 {
		t.Fatalf("the next link was served serial %v, want the renewed %v", last.SerialNumber, renewed.SerialNumber)
	}
	if served[0].SerialNumber.Cmp(first.SerialNumber) != 0 {
		t.Fatalf("the first link was served serial %v, want %v", served[0].SerialNumber, first.SerialNumber)
	}
}
