package hub

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// The leaf listener's certificate authority is made at first start and kept in the state
// dir, so that the CA a box received at enrolment still verifies the hub after a restart.
const (
	caFile      = "fleet-ca.pem"
	caKeyFile   = "fleet-ca-key.pem"
	certFile    = "fleet-hub.pem"
	certKeyFile = "fleet-hub-key.pem"
)

// leafTLS loads (or makes) the CA and the hub's certificate for hosts, and returns the
// server TLS config with the CA's PEM to hand to boxes. A certificate that does not name every
// host is reissued from the same CA.
func leafTLS(dir string, hosts []string) (*tls.Config, []byte, error) {
	caPEM, caKey, err := loadOrMakeCA(dir)
	if err != nil {
		return nil, nil, err
	}
	block, _ := pem.Decode(caPEM)
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("fleet CA: %w", err)
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, certFile), filepath.Join(dir, certKeyFile))
	if err != nil || !namesAll(cert, hosts) {
		if err := issue(dir, ca, caKey, hosts); err != nil {
			return nil, nil, err
		}
		if cert, err = tls.LoadX509KeyPair(filepath.Join(dir, certFile), filepath.Join(dir, certKeyFile)); err != nil {
			return nil, nil, fmt.Errorf("hub certificate: %w", err)
		}
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}, caPEM, nil
}

func namesAll(cert tls.Certificate, hosts []string) bool {
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil || time.Now().After(leaf.NotAfter) {
		return false
	}
	for _, h := range hosts {
		if leaf.VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}

func loadOrMakeCA(dir string) ([]byte, *ecdsa.PrivateKey, error) {
	caPEM, errCert := os.ReadFile(filepath.Join(dir, caFile))
	keyPEM, errKey := os.ReadFile(filepath.Join(dir, caKeyFile))
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
		return nil, nil, fmt.Errorf("fleet CA: one of %s and %s is missing or unreadable", caFile, caKeyFile)
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
	if err := writeFile(dir, caKeyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})); err != nil {
		return nil, nil, err
	}
	if err := writeFile(dir, caFile, caPEM); err != nil {
		return nil, nil, err
	}
	return caPEM, key, nil
}

func issue(dir string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, hosts []string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "péage fleet hub"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().AddDate(5, 0, 0),
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
