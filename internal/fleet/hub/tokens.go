package hub

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nkeys"

	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/fleet/tunnel"
)

// ErrTokenRefused answers every token that does not enrol: unknown, used, expired, made for
// another box. One answer for all, so that a guesser learns nothing from it.
var ErrTokenRefused = errors.New("fleet hub: enrolment token refused")

// ErrKeyInUse refuses a public key that already names the gateway or another box: two boxes
// sharing a key could not be told apart when they connect.
var ErrKeyInUse = errors.New("fleet hub: that nkey is already enrolled")

// MaxTokenTTL bounds how long an enrolment token may wait for its box.
const MaxTokenTTL = 7 * 24 * time.Hour

const tokensFile = "fleet-tokens.json"

// pendingToken is a token kept under the hash of its secret until it expires.
type pendingToken struct {
	Box     string    `json:"box"`
	Expires time.Time `json:"expires"`
	// SpentBy is the public key it enrolled, or burned; empty while it waits for its box.
	SpentBy string `json:"spent_by,omitempty"`
}

// NewToken makes a one-time enrolment token for box, valid for ttl. The hub keeps only the
// hash of its secret (in the state dir, so a restart keeps it pending and a used one spent).
func (h *Hub) NewToken(box string, ttl time.Duration) (fleet.EnrolToken, time.Time, error) {
	if h.srv == nil {
		return fleet.EnrolToken{}, time.Time{}, ErrExternal
	}
	if err := fleet.ValidName(box); err != nil {
		return fleet.EnrolToken{}, time.Time{}, fmt.Errorf("fleet hub: box %w", err)
	}
	if ttl <= 0 || ttl > MaxTokenTTL {
		return fleet.EnrolToken{}, time.Time{}, fmt.Errorf("fleet hub: token lifetime %v: more than 0 and at most %v", ttl, MaxTokenTTL)
	}
	var secret [32]byte
	if _, err := rand.Read(secret[:]); err != nil {
		return fleet.EnrolToken{}, time.Time{}, err
	}
	tok := fleet.EnrolToken{Secret: base64.RawURLEncoding.EncodeToString(secret[:]), CAPin: h.caPin()}
	expires := h.now().Add(ttl).UTC()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dropExpiredLocked()
	h.tokens[tokenHash(tok.Secret)] = pendingToken{Box: box, Expires: expires}
	if err := h.saveTokensLocked(); err != nil {
		delete(h.tokens, tokenHash(tok.Secret))
		return fleet.EnrolToken{}, time.Time{}, err
	}
	return tok, expires, nil
}

// Redeem spends a token's secret to enrol box with the public nkey the box made for itself,
// and returns the box's credentials without a seed (the box holds it). With a tunnel device,
// the box's WireGuard public key wgPub (made on the box too; "" for none) becomes its tunnel
// peer, answered without a private key. Like the nkey, it may not be one already enrolled. A token is spent by
// the first redemption that finds it, even one naming another box or a key in use: whoever
// presents it so holds a token that leaked. Until it expires, the same box presenting it with
// the same key is answered again (its first answer may have been lost on the way), as long as
// that key is still the box's.
func (h *Hub) Redeem(secret, box, nkeyPub, wgPub string) (fleet.Credentials, error) {
	if h.srv == nil {
		return fleet.Credentials{}, ErrExternal
	}
	if !nkeys.IsValidPublicUserKey(nkeyPub) {
		return fleet.Credentials{}, errors.New("fleet hub: nkey: not a public user key")
	}
	var tunnelKey *tunnel.Key // the peer's key: nil without a device or a key from the box
	if wgPub != "" {
		k, err := tunnel.ParseKey(wgPub)
		if err != nil {
			return fleet.Credentials{}, fmt.Errorf("fleet hub: wireguard: %w", err)
		}
		if h.cfg.Tunnels != nil {
			tunnelKey = &k
		}
	}
	creds := fleet.Credentials{Box: box, LeafURL: h.leafURL}
	// One enrolment at a time, from the address's choice to its peer on the device: two must
	// not take one tunnel address.
	h.enrolMu.Lock()
	defer h.enrolMu.Unlock()
	h.mu.Lock()
	key := tokenHash(secret)
	t, found := h.tokens[key]
	live := found && h.now().Before(t.Expires)
	changed := h.dropExpiredLocked()
	if live && t.SpentBy != "" {
		e := h.boxes[box]
		want := ""
		if tunnelKey != nil {
			want = tunnelKey.String()
		}
		again := t.SpentBy == nkeyPub && t.Box == box && e.Nkey == nkeyPub && peerKey(e.WireGuard) == want
		h.mu.Unlock()
		if !again {
			return fleet.Credentials{}, ErrTokenRefused
		}
		creds.CAPEM = string(h.trustPEM())
		creds.WireGuard = h.wireGuardOf(e.WireGuard)
		return creds, nil
	}
	inUse := nkeyPub == h.gatewayPub
	for name, e := range h.boxes {
		inUse = inUse || (e.Nkey == nkeyPub && name != box)
	}
	var refusal error
	var peer *wgPeer
	switch {
	case !live || t.Box != box:
		refusal = ErrTokenRefused
	case inUse:
		refusal = ErrKeyInUse
	case tunnelKey != nil:
		peer, refusal = h.peerLocked(box, *tunnelKey)
	}
	if live {
		t.SpentBy = nkeyPub
		if refusal != nil {
			t.SpentBy = burned
		}
		h.tokens[key], changed = t, true
	}
	var err error
	if changed {
		err = h.saveTokensLocked()
	}
	h.mu.Unlock()
	switch {
	case err != nil:
		return fleet.Credentials{}, err
	case refusal != nil:
		return fleet.Credentials{}, refusal
	}
	if err := h.replace(box, &enrolled{Nkey: nkeyPub, Enrolled: h.now().UTC(), WireGuard: peer}); err != nil {
		return fleet.Credentials{}, err
	}
	creds.CAPEM = string(h.trustPEM())
	creds.WireGuard = h.wireGuardOf(peer)
	return creds, nil
}

// burned marks a token spent by a redemption that enrolled nothing.
const burned = "-"

// dropExpiredLocked forgets the tokens past their expiry and says whether it forgot any.
func (h *Hub) dropExpiredLocked() bool {
	now, dropped := h.now(), false
	for k, p := range h.tokens {
		if !now.Before(p.Expires) {
			delete(h.tokens, k)
			dropped = true
		}
	}
	return dropped
}

func tokenHash(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

func (h *Hub) saveTokensLocked() error {
	data, err := json.MarshalIndent(h.tokens, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFile(h.cfg.StateDir, tokensFile, data); err != nil {
		return fmt.Errorf("fleet hub: save tokens: %w", err)
	}
	return nil
}

func (h *Hub) loadTokens() error {
	h.tokens = map[string]pendingToken{}
	data, err := os.ReadFile(filepath.Join(h.cfg.StateDir, tokensFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("fleet hub: %w", err)
	}
	if err := json.Unmarshal(data, &h.tokens); err != nil {
		return fmt.Errorf("fleet hub: %s: %w", tokensFile, err)
	}
	return nil
}
