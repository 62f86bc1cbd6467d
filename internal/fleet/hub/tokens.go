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

// pendingToken is a token not redeemed yet, kept under the hash of its secret.
type pendingToken struct {
	Box     string    `json:"box"`
	Expires time.Time `json:"expires"`
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
// and returns the box's credentials without a seed (the box holds it). A token is spent by
// any redemption that finds it, even one naming another box: whoever presents it for the
// wrong name holds a token that leaked.
func (h *Hub) Redeem(secret, box, nkeyPub string) (fleet.Credentials, error) {
	if h.srv == nil {
		return fleet.Credentials{}, ErrExternal
	}
	if !nkeys.IsValidPublicUserKey(nkeyPub) {
		return fleet.Credentials{}, errors.New("fleet hub: nkey: not a public user key")
	}
	h.mu.Lock()
	key := tokenHash(secret)
	pending, found := h.tokens[key]
	if found {
		delete(h.tokens, key)
	}
	expired := h.dropExpiredLocked()
	var err error
	if found || expired {
		err = h.saveTokensLocked()
	}
	inUse := nkeyPub == h.gatewayPub
	for name, e := range h.boxes {
		inUse = inUse || (e.Nkey == nkeyPub && name != box)
	}
	h.mu.Unlock()
	switch {
	case err != nil:
		return fleet.Credentials{}, err
	case !found || pending.Box != box || !h.now().Before(pending.Expires):
		return fleet.Credentials{}, ErrTokenRefused
	case inUse:
		return fleet.Credentials{}, ErrKeyInUse
	}
	if err := h.replace(box, &enrolled{Nkey: nkeyPub, Enrolled: h.now().UTC()}); err != nil {
		return fleet.Credentials{}, err
	}
	return fleet.Credentials{Box: box, LeafURL: h.leafURL, CAPEM: string(h.trustPEM())}, nil
}

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
