package dispatch_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/fleet/box"
	"github.com/peage/appliance/internal/fleet/dispatch"
	"github.com/peage/appliance/internal/fleet/fleettest"
	"github.com/peage/appliance/internal/fleet/hub"
	"github.com/peage/appliance/internal/fleet/registry"
	"github.com/peage/appliance/internal/freeport"
	"github.com/peage/appliance/internal/obs"
)

// A gateway may join a NATS deployment its operator runs (here a nats-server configured as
// such a deployment would be: JetStream, nkey users, a TLS leaf listener) instead of embedding
// one; the registry, the dispatch and the boxes work the same, enrolment is the operator's.
func TestJoinAnExistingDeployment(t *testing.T) {
	gatewayKey, _ := nkeys.CreateUser()
	gatewayPub, _ := gatewayKey.PublicKey()
	boxKey, _ := nkeys.CreateUser()
	boxPub, _ := boxKey.PublicKey()
	boxSeed, _ := boxKey.Seed()
	serverTLS, caPEM := testCA(t)

	clientAddr, leafAddr := freeport.Addr(t), freeport.Addr(t)
	clientHost, clientPort := splitAddr(t, clientAddr)
	leafHost, leafPort := splitAddr(t, leafAddr)
	srv, err := server.NewServer(&server.Options{
		Host: clientHost, Port: clientPort, NoSigs: true, NoLog: true,
		JetStream: true, StoreDir: t.TempDir(),
		Nkeys: []*server.NkeyUser{
			{Nkey: gatewayPub},
			{Nkey: boxPub, Permissions: hub.BoxPermissions("a")},
		},
		LeafNode: server.LeafNodeOpts{Host: leafHost, Port: leafPort, TLSConfig: serverTLS},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("the deployment's nats-server is not ready")
	}

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	h, err := hub.Join(ctx, "nats://"+clientAddr, nats.Nkey(gatewayPub, gatewayKey.Sign))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	if _, err := h.Enrol("b"); !errors.Is(err, hub.ErrExternal) {
		t.Fatalf("enrolment on a joined deployment: %v, want ErrExternal", err)
	}
	js, err := jetstream.New(h.Conn())
	if err != nil {
		t.Fatal(err)
	}
	kv, err := registry.Open(ctx, js, ttl)
	if err != nil {
		t.Fatal(err)
	}
	run, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	if err := registry.Register(run, h.Conn(), kv, obs.Discard()); err != nil {
		t.Fatal(err)
	}
	view, err := registry.Watch(run, kv, ttl)
	if err != nil {
		t.Fatal(err)
	}
	d, err := dispatch.New(h.Conn(), view, dispatch.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)

	b, err := box.Start(t.Context(), box.Config{
		Credentials: fleet.Credentials{Box: "a", Seed: string(boxSeed), LeafURL: "tls://" + leafAddr, CAPEM: string(caPEM)},
		Routes:      map[string]box.Handler{"lookup": named("a")},
		Heartbeat:   100 * time.Millisecond, Reconnect: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	fleettest.WaitFor(t, "box a in the registry", func() bool { return len(view.Boxes()) == 1 })
	answer, boxName, err := d.Do(ctx, "lookup", registry.Constraints{}, dispatch.Request{Body: []byte("q")})
	if err != nil || boxName != "a" || string(answer) != "a:q" {
		t.Fatalf("%q from %q, %v", answer, boxName, err)
	}
}

func splitAddr(t *testing.T, addr string) (string, int) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	return host, n
}

// testCA is the deployment operator's own CA and a leaf certificate for 127.0.0.1.
func testCA(t *testing.T) (*tls.Config, []byte) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "operator CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "nats"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS13}
	return cfg, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
}
