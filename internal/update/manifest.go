// Package update installs new versions of the appliance binary with a health gate and
// automatic rollback.
//
// A release is three files: the binary, a manifest (JSON naming the version, the platform,
// the binary's size and SHA-256) and the manifest's ed25519 signature. The box holds only
// public keys (shipped in the image); the release side signs with `appliance update sign`.
// Nothing is written before the manifest's signature and the binary's hash are checked.
//
// Installed versions live as versions/appliance_<version> under the update root, and the
// `current` symlink names the one the units run. The flip is a rename(2) of a temporary
// symlink, so `current` always names a whole, verified binary. After the flip the units
// restart, and the new version must report healthy (its own version on /healthz, every unit
// active, none restarted) for a hold period within a bound; otherwise `current` goes back to
// the previous version and the units restart again. The state directory of the daemons is
// never touched: the ledger and journals are read by whichever version runs.
package update

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
)

// Product names what a manifest is for, so a signature made for anything else never installs.
const Product = "peage-appliance"

// Manifest describes one release of the binary for one platform. Its exact bytes are signed.
type Manifest struct {
	Product string `json:"product"`
	Version string `json:"version"`
	OS      string `json:"os"`
	Arch    string `json:"arch"`
	// File is the binary's file name beside the manifest (a base name, never a path).
	File   string `json:"file"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// versionPattern keeps a version usable as a file name: it becomes versions/appliance_<v>.
var versionPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$`)

// Rejection is why a release was refused before anything was written.
type Rejection struct{ Reason string }

func (r *Rejection) Error() string { return "update refused: " + r.Reason }

func reject(format string, args ...any) error {
	return &Rejection{Reason: fmt.Sprintf(format, args...)}
}

// check validates the manifest's own fields against this platform.
func (m *Manifest) check() error {
	switch {
	case m.Product != Product:
		return reject("manifest is for %q, not %q", m.Product, Product)
	case !versionPattern.MatchString(m.Version):
		return reject("version %q is not a plain version string", m.Version)
	case m.OS != runtime.GOOS || m.Arch != runtime.GOARCH:
		return reject("release is for %s/%s, this box is %s/%s", m.OS, m.Arch, runtime.GOOS, runtime.GOARCH)
	case m.File == "" || m.File != filepath.Base(m.File) || m.File == "." || m.File == "..":
		return reject("manifest file %q is not a plain file name", m.File)
	case m.Size <= 0:
		return reject("manifest size %d", m.Size)
	}
	if b, err := hex.DecodeString(m.SHA256); err != nil || len(b) != sha256.Size {
		return reject("manifest sha256 %q is not 64 hex digits", m.SHA256)
	}
	return nil
}

// KeysDir is where the image ships the trusted release keys (image/update-keys.sh puts them
// there; `appliance update` reads them from there unless told otherwise).
const KeysDir = "/usr/share/peage/update-keys"

// PublicKey is a trusted release key, with the name of the file it came from.
type PublicKey struct {
	Name string
	Key  ed25519.PublicKey
}

// Fingerprint names a key in logs and listings: SHA256: and the first 16 bytes of the SHA-256
// of the raw public key, in hex.
func (k PublicKey) Fingerprint() string {
	sum := sha256.Sum256(k.Key)
	return "SHA256:" + hex.EncodeToString(sum[:16])
}

// keyPrefix starts every key file, so a key of another kind or purpose is refused by name.
const (
	pubPrefix  = "peage-update-ed25519-pub "
	privPrefix = "peage-update-ed25519-seed "
)

// GenerateKey makes a release key pair and returns both files' contents.
func GenerateKey() (pub, priv []byte, err error) {
	p, s, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	pub = []byte(pubPrefix + base64.StdEncoding.EncodeToString(p) + "\n")
	priv = []byte(privPrefix + base64.StdEncoding.EncodeToString(s.Seed()) + "\n")
	return pub, priv, nil
}

// ParsePublicKey reads a public key file's contents.
func ParsePublicKey(b []byte) (ed25519.PublicKey, error) {
	raw, err := decodeKey(b, pubPrefix, ed25519.PublicKeySize)
	return ed25519.PublicKey(raw), err
}

// ParsePrivateKey reads a private key file's contents (the seed).
func ParsePrivateKey(b []byte) (ed25519.PrivateKey, error) {
	raw, err := decodeKey(b, privPrefix, ed25519.SeedSize)
	if err != nil {
		return nil, err
	}
	return ed25519.NewKeyFromSeed(raw), nil
}

func decodeKey(b []byte, prefix string, size int) ([]byte, error) {
	s := strings.TrimSpace(string(b))
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok {
		return nil, fmt.Errorf("not a key file starting with %q", strings.TrimSpace(prefix))
	}
	raw, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(raw) != size {
		return nil, fmt.Errorf("key is not %d bytes of base64", size)
	}
	return raw, nil
}

// LoadPublicKeys reads every *.pub file of dir (several keys allow rotation).
func LoadPublicKeys(dir string) ([]PublicKey, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.pub"))
	if err != nil {
		return nil, err
	}
	var keys []PublicKey
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			return nil, err
		}
		k, err := ParsePublicKey(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		keys = append(keys, PublicKey{Name: filepath.Base(n), Key: k})
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("no release key (*.pub) in %s", dir)
	}
	return keys, nil
}

// Sign writes the manifest of the binary at bin and its signature, and returns the manifest's
// path. The manifest is <bin>.manifest and the signature <bin>.manifest.sig.
func Sign(bin, version, goos, goarch string, key ed25519.PrivateKey) (string, error) {
	f, err := os.Open(bin)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", err
	}
	m := Manifest{Product: Product, Version: version, OS: goos, Arch: goarch,
		File: filepath.Base(bin), Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}
	if !versionPattern.MatchString(version) {
		return "", fmt.Errorf("version %q is not a plain version string", version)
	}
	body, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return "", err
	}
	body = append(body, '\n')
	sig := base64.StdEncoding.EncodeToString(ed25519.Sign(key, body)) + "\n"
	path := bin + ".manifest"
	if err := os.WriteFile(path, body, 0o644); err != nil {
		return "", err
	}
	return path, os.WriteFile(path+".sig", []byte(sig), 0o644)
}

// Release is a verified manifest and where its binary is.
type Release struct {
	Manifest Manifest
	Binary   string // path of the binary (beside the manifest unless given)
	SignedBy string // name of the key that verified the signature
	// Download says Binary is a temporary file Fetch downloaded under the store root: once
	// installed (or skipped) the caller removes it; a binary beside a manifest is never removed.
	Download bool
}

// Verify checks a manifest's signature against keys, its fields against this platform, and
// the binary's size and SHA-256 against the manifest. It only reads. bin may be empty: then
// the binary is the manifest's File beside the manifest.
func Verify(manifestPath, bin string, keys []PublicKey) (*Release, error) {
	rel, err := VerifyManifest(manifestPath, keys)
	if err != nil {
		return nil, err
	}
	if bin == "" {
		bin = filepath.Join(filepath.Dir(manifestPath), rel.Manifest.File)
	}
	rel.Binary = bin
	f, err := os.Open(bin)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := checkContent(f, &rel.Manifest); err != nil {
		return nil, err
	}
	return rel, nil
}

// VerifyManifest checks a manifest's signature and fields, without the binary.
func VerifyManifest(manifestPath string, keys []PublicKey) (*Release, error) {
	body, err := os.ReadFile(manifestPath)
	if err != nil {
		return nil, err
	}
	sigText, err := os.ReadFile(manifestPath + ".sig")
	if err != nil {
		return nil, reject("no signature: %v", err)
	}
	return verifyBytes(body, sigText, keys)
}

func verifyBytes(body, sigText []byte, keys []PublicKey) (*Release, error) {
	sig, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(sigText)))
	if err != nil || len(sig) != ed25519.SignatureSize {
		return nil, reject("signature is not %d bytes of base64", ed25519.SignatureSize)
	}
	signer := ""
	for _, k := range keys {
		if ed25519.Verify(k.Key, body, sig) {
			signer = k.Name
			break
		}
	}
	if signer == "" {
		return nil, reject("signature does not verify against any of the %d trusted release keys", len(keys))
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, reject("manifest: %v", err)
	}
	if err := m.check(); err != nil {
		return nil, err
	}
	return &Release{Manifest: m, SignedBy: signer}, nil
}

// checkContent reads r to its end (at most one byte past the manifest's size) and compares
// size and SHA-256.
func checkContent(r io.Reader, m *Manifest) error {
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(r, m.Size+1))
	if err != nil {
		return err
	}
	if n != m.Size {
		return reject("binary is %d bytes, the manifest says %d", n, m.Size)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != m.SHA256 {
		return reject("binary SHA-256 %s does not match the manifest's %s", got, m.SHA256)
	}
	return nil
}
