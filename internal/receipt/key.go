// Package receipt signs and verifies what the box promises and delivers: the x402
// offer-and-receipt extension's signed offers and receipts (EIP-712 and JWS, the wire format of
// @x402/extensions 2.27) and the box's delivery statement, which binds a receipt to the request
// and the body delivered. It holds the box's receipt keys (never the payout key nor settle's hot
// key), their public forms (a did:web document, the EIP-712 signer addresses) and rotation.
package receipt

import (
	"bufio"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
)

// CredentialName is the credential holding the receipt keyring (first boot makes it).
const CredentialName = "receipt-keys"

// Key is one receipt key: a secp256k1 key for EIP-712 and an Ed25519 key for JWS (EdDSA, which
// the extension's verifier resolves from did:web), both derived from one 32-byte seed.
type Key struct {
	ID      string // first 16 hex digits of the SHA-256 of the Ed25519 public key
	Address string // the EIP-712 signer, 0x… checksummed
	// Until is when a rotated-out key stops verifying; zero for the current key.
	Until time.Time

	seed []byte
	ec   *secp256k1.PrivateKey
	ed   ed25519.PrivateKey
}

// PublicKey is the Ed25519 public key of the JWS form.
func (k *Key) PublicKey() ed25519.PublicKey { return k.ed.Public().(ed25519.PublicKey) }

func keyFromSeed(seed []byte) (*Key, error) {
	if len(seed) != 32 {
		return nil, fmt.Errorf("a receipt key seed is 32 bytes, not %d", len(seed))
	}
	// Each algorithm gets its own key derived from the seed, so no key serves two algorithms.
	ecSeed := sha256.Sum256(append([]byte("peage receipt secp256k1\x00"), seed...))
	edSeed := sha256.Sum256(append([]byte("peage receipt ed25519\x00"), seed...))
	var scalar secp256k1.ModNScalar
	if overflow := scalar.SetByteSlice(ecSeed[:]); overflow || scalar.IsZero() {
		return nil, errors.New("receipt key seed gives no valid secp256k1 key; make a new one")
	}
	k := &Key{seed: seed, ec: secp256k1.NewPrivateKey(&scalar), ed: ed25519.NewKeyFromSeed(edSeed[:])}
	k.Address = address(k.ec.PubKey())
	id := sha256.Sum256(k.PublicKey())
	k.ID = hex.EncodeToString(id[:8])
	return k, nil
}

// Keyring is the current key and the rotated-out keys that still verify until their date.
type Keyring struct {
	DID     string // did:web of the box's public address
	Current *Key
	Retired []*Key

	// headerOf and headerPart are the JWS header of Current, made once (ParseKeyring).
	headerOf   *Key
	headerPart string
}

// header is the base64url JWS header naming the current key.
func (kr *Keyring) header() string {
	if kr.headerOf == kr.Current && kr.headerPart != "" {
		return kr.headerPart
	}
	return jwsHeaderPart(kr.KID(kr.Current))
}

// NewKeyText is the content of a fresh receipt-keys credential: one key, current.
func NewKeyText() (string, error) {
	for {
		seed := make([]byte, 32)
		if _, err := rand.Read(seed); err != nil {
			return "", err
		}
		if _, err := keyFromSeed(seed); err == nil {
			return hex.EncodeToString(seed), nil
		}
	}
}

// ParseKeyring reads a receipt-keys credential: the current key's seed in hex on the first
// line, then one line per rotated-out key, "<seed hex> until=<RFC 3339>". Keys past their date
// are dropped. baseURL is the box's public address, whose did:web names the keys.
func ParseKeyring(text, baseURL string, now time.Time) (*Keyring, error) {
	did, err := DIDWeb(baseURL)
	if err != nil {
		return nil, err
	}
	kr := &Keyring{DID: did}
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		seed, err := hex.DecodeString(fields[0])
		if err != nil {
			return nil, fmt.Errorf("receipt keys line %d: seed is not hex", n)
		}
		k, err := keyFromSeed(seed)
		if err != nil {
			return nil, fmt.Errorf("receipt keys line %d: %w", n, err)
		}
		if kr.Current == nil {
			if len(fields) != 1 {
				return nil, fmt.Errorf("receipt keys line %d: the first line is the current key, with no date", n)
			}
			kr.Current = k
			continue
		}
		if len(fields) != 2 || !strings.HasPrefix(fields[1], "until=") {
			return nil, fmt.Errorf("receipt keys line %d: a rotated-out key needs until=<RFC 3339>", n)
		}
		if k.Until, err = time.Parse(time.RFC3339, strings.TrimPrefix(fields[1], "until=")); err != nil {
			return nil, fmt.Errorf("receipt keys line %d: %w", n, err)
		}
		if now.Before(k.Until) {
			kr.Retired = append(kr.Retired, k)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if kr.Current == nil {
		return nil, errors.New("receipt keys: no key")
	}
	kr.headerOf, kr.headerPart = kr.Current, jwsHeaderPart(kr.KID(kr.Current))
	return kr, nil
}

// Rotate returns the credential's content with a new current key; the old current key keeps
// verifying for overlap (receipts signed before the rotation stay checkable until then), and
// keys already past their date are dropped.
func Rotate(text string, overlap time.Duration, now time.Time) (string, error) {
	kr, err := ParseKeyring(text, "http://localhost", now)
	if err != nil {
		return "", err
	}
	fresh, err := NewKeyText()
	if err != nil {
		return "", err
	}
	lines := []string{fresh, hex.EncodeToString(kr.Current.seed) + " until=" + now.Add(overlap).UTC().Format(time.RFC3339)}
	for _, k := range kr.Retired {
		lines = append(lines, hex.EncodeToString(k.seed)+" until="+k.Until.UTC().Format(time.RFC3339))
	}
	return strings.Join(lines, "\n"), nil
}

// DIDWeb is the did:web identifier of a base URL ("https://api.example.com" →
// "did:web:api.example.com"; a port is percent-encoded, a path becomes colon-separated).
func DIDWeb(baseURL string) (string, error) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("receipt keys: base URL %q has no host", baseURL)
	}
	did := "did:web:" + strings.ReplaceAll(u.Host, ":", "%3A")
	for _, seg := range strings.Split(strings.Trim(u.Path, "/"), "/") {
		if seg != "" {
			did += ":" + url.PathEscape(seg)
		}
	}
	return did, nil
}

// KID is the JWS key id of k: its verification method in the box's DID document.
func (kr *Keyring) KID(k *Key) string { return kr.DID + "#" + k.ID }

// Keys lists the keys that verify now: the current one first.
func (kr *Keyring) Keys() []*Key { return append([]*Key{kr.Current}, kr.Retired...) }

// CredentialText is the keyring as its credential holds it (rotation rewrites it).
func (kr *Keyring) CredentialText() string {
	lines := []string{hex.EncodeToString(kr.Current.seed)}
	for _, k := range kr.Retired {
		lines = append(lines, hex.EncodeToString(k.seed)+" until="+k.Until.UTC().Format(time.RFC3339))
	}
	return strings.Join(lines, "\n")
}
