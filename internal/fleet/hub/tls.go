package hub

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
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/obs"
)

// The leaf listener's certificate authority is made at first start and kept in the state
// dir, so that the CA a box received at enrolment still verifies the hub after a restart.
const (
	caFile      = "fleet-ca.pem"
	caKeyFile   = "fleet-ca-key.pem"
	certFile    = "fleet-hub.pem"
	certKeyFile = "fleet-hub-key.pem"
)

// certs holds the hub's certificate: read at every handshake (GetCertificate), so a renewed
// one serves the next link while the links up keep the session they made.
type certs struct {
	dir      string
	hosts    []string
	validity time.Duration
	current  atomic.Pointer[tls.Certificate]

	mu    sync.Mutex // the signing CA, which a CA rotation switches
	ca    *x509.Certificate
	caKey *ecdsa.PrivateKey
}

// leafTLS loads (or makes) the CA and the hub's certificate for hosts, and returns them with
// the CA's PEM to hand to boxes. A certificate that does not name every host, or that is due
// for renewal, is reissued from the same CA.
func leafTLS(dir string, hosts []string, validity, renewBefore time.Duration, now time.Time) (*certs, []byte, error) {
	caPEM, ca, caKey, err := loadOrMakeCA(dir, caFile, caKeyFile)
	if err != nil {
		return nil, nil, err
	}
	c := &certs{dir: dir, hosts: hosts, ca: ca, caKey: caKey, validity: validity}
	cert, err := c.load()
	if err != nil || !namesAll(cert, hosts, now.Add(renewBefore)) {
		if cert, err = c.renew(now); err != nil {
			return nil, nil, err
		}
	}
	c.current.Store(cert)
	return c, caPEM, nil
}

// load reads the certificate and key in the state dir, the CA appended to the chain sent: a
// box enrolling finds in it the CA its token pins.
func (c *certs) load() (*tls.Certificate, error) {
	cert, err := tls.LoadX509KeyPair(filepath.Join(c.dir, certFile), filepath.Join(c.dir, certKeyFile))
	if err != nil {
		return nil, fmt.Errorf("hub certificate: %w", err)
	}
	cert.Certificate = append(cert.Certificate, c.signer().Raw)
	return &cert, nil
}

func (c *certs) signer() *x509.Certificate {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ca
}

// renew issues a certificate from the signing CA and serves it from the next handshake on.
func (c *certs) renew(now time.Time) (*tls.Certificate, error) {
	c.mu.Lock()
	err := issue(c.dir, c.ca, c.caKey, c.hosts, now, c.validity)
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	cert, err := c.load()
	if err != nil {
		return nil, err
	}
	c.current.Store(cert)
	return cert, nil
}

// due says whether the certificate served ends before at.
func (c *certs) due(at time.Time) bool { return !namesAll(c.current.Load(), c.hosts, at) }

// serverConfig is the TLS of the leaf and enrolment listeners.
func (c *certs) serverConfig() *tls.Config {
	return &tls.Config{
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return c.current.Load(), nil },
		MinVersion:     tls.VersionTLS13,
	}
}

// namesAll says whether cert names every host and is still valid at.
func namesAll(cert *tls.Certificate, hosts []string, at time.Time) bool {
	if cert == nil {
		return false
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil || !at.Before(leaf.NotAfter) {
		return false
	}
	for _, h := range hosts {
		if leaf.VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}

// loadOrMakeCA reads the CA of certName and keyName in dir, or makes one there.
func loadOrMakeCA(dir, certName, keyName string) ([]byte, *x509.Certificate, *ecdsa.PrivateKey, error) {
	caPEM, key, err := loadOrMakeCAFiles(dir, certName, keyName)
	if err != nil {
		return nil, nil, nil, err
	}
	block, _ := pem.Decode(caPEM)
	if block == nil {
		return nil, nil, nil, fmt.Errorf("fleet CA %s: not PEM", certName)
	}
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("fleet CA: %w", err)
	}
	return caPEM, ca, key, nil
}

func loadOrMakeCAFiles(dir, certName, keyName string) ([]byte, *ecdsa.PrivateKey, error) {
	caPEM, errCert := os.ReadFile(filepath.Join(dir, certName))
	keyPEM, errKey := os.ReadFile(filepath.Join(dir, keyName))
	if errCert == nil && errKey == nil {
		block, _ := pem.Decode(keyPEM)
		if block == nil {
			return nil, nil, errors.New("fleet CA key: not PEM")
		}
		key, err := x509.ParseECPrivateKey(block.Bytes)
		if err != nil {
			return nil, nil, fmt.Errorf("fleet CA key: %w", err)
		}
		return caPEM, key, nil
	}
	if !errors.Is(errCert, os.ErrNotExist) || !errors.Is(errKey, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("fleet CA: one of %s and %s is missing or unreadable", certName, keyName)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "péage fleet CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().AddDate(20, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	if err := writeFile(dir, keyName, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})); err != nil {
		return nil, nil, err
	}
	if err := writeFile(dir, certName, caPEM); err != nil {
		return nil, nil, err
	}
	return caPEM, key, nil
}

func issue(dir string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, hosts []string, now time.Time, validity time.Duration) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "péage fleet hub"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range slices.Compact(slices.Sorted(slices.Values(hosts))) {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := writeFile(dir, certKeyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})); err != nil {
		return err
	}
	return writeFile(dir, certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

// writeFile replaces name in dir atomically, readable by the owner only (keys live here).
func writeFile(dir, name string, data []byte) error {
	tmp, err := os.CreateTemp(dir, name+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, name))
}

// renewLoop renews the hub's certificate before it ends. The listeners read it at each
// handshake, so the boxes linked keep their links and the next ones get the new certificate;
// the CA is the same, so nothing changes for a box.
func (h *Hub) renewLoop(ctx context.Context) {
	defer h.renewing.Done()
	t := time.NewTicker(h.cfg.RenewCheck)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := h.cfg.Now()
		if !h.certs.due(now.Add(h.cfg.RenewBefore)) {
			continue
		}
		if _, err := h.certs.renew(now); err != nil {
			h.log.Error("fleet hub certificate not renewed", slog.String(obs.KeyErr, err.Error()))
			continue
		}
		h.log.Info("fleet hub certificate renewed", slog.String(obs.KeyDir, h.cfg.StateDir))
	}
}

// Certificate is the hub's certificate served now.
func (h *Hub) Certificate() *x509.Certificate {
	leaf, _ := x509.ParseCertificate(h.certs.current.Load().Certificate[0])
	return leaf
}

// EnrolTLS is the TLS of the gateway's enrolment listener: the hub's own certificate, whose
// CA the tokens pin.
func (h *Hub) EnrolTLS() *tls.Config { return h.certs.serverConfig() }

func (h *Hub) caPin() string { return fleet.CAPin(h.certs.signer()) }

func (h *Hub) now() time.Time { return h.cfg.Now() }
