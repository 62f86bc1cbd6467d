package receipt

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Published is the public form of a keyring, served at /.well-known/x402-receipt-keys.json
// and read by verifiers: for each key that verifies, its JWS key id and public key and its
// EIP-712 signer address; a rotated-out key says until when.
type Published struct {
	DID  string         `json:"did"`
	Keys []PublishedKey `json:"keys"`
}

// PublishedKey is one key of Published.
type PublishedKey struct {
	KID          string     `json:"kid"`
	PublicKeyJWK JWK        `json:"publicKeyJwk"`
	EIP712Signer string     `json:"eip712Signer"`
	ValidUntil   *time.Time `json:"validUntil,omitempty"`
}

// JWK is an Ed25519 public key as a JSON Web Key (RFC 8037).
type JWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
}

// Published is the keyring's public form.
func (kr *Keyring) Published() *Published {
	p := &Published{DID: kr.DID}
	for _, k := range kr.Keys() {
		pk := PublishedKey{KID: kr.KID(k), PublicKeyJWK: JWK{Kty: "OKP", Crv: "Ed25519", X: b64.EncodeToString(k.PublicKey())},
			EIP712Signer: k.Address}
		if !k.Until.IsZero() {
			u := k.Until.UTC()
			pk.ValidUntil = &u
		}
		p.Keys = append(p.Keys, pk)
	}
	return p
}

// ParsePublished reads a published keys document.
func ParsePublished(b []byte) (*Published, error) {
	var p Published
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("receipt keys document: %w", err)
	}
	if p.DID == "" || len(p.Keys) == 0 {
		return nil, errors.New("receipt keys document: no did or no key")
	}
	return &p, nil
}

func (k PublishedKey) ed25519() (ed25519.PublicKey, error) {
	x, err := b64.DecodeString(k.PublicKeyJWK.X)
	if k.PublicKeyJWK.Kty != "OKP" || k.PublicKeyJWK.Crv != "Ed25519" || err != nil || len(x) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("key %s is not an Ed25519 JWK", k.KID)
	}
	return x, nil
}

// usable says why k does not verify a signature made at t, or nil.
func (k PublishedKey) usable(t time.Time) error {
	if k.ValidUntil != nil && !t.Before(*k.ValidUntil) {
		return fmt.Errorf("key %s was rotated out on %s", k.KID, k.ValidUntil.Format(time.RFC3339))
	}
	return nil
}

// byKID finds the key a JWS names.
func (p *Published) byKID(kid string) (PublishedKey, error) {
	for _, k := range p.Keys {
		if k.KID == kid {
			return k, nil
		}
	}
	return PublishedKey{}, fmt.Errorf("key %s is not a published key of %s", kid, p.DID)
}

// byAddress finds the key whose EIP-712 signer is addr.
func (p *Published) byAddress(addr string) (PublishedKey, error) {
	for _, k := range p.Keys {
		if strings.EqualFold(k.EIP712Signer, addr) {
			return k, nil
		}
	}
	return PublishedKey{}, fmt.Errorf("signer %s is not a published key of %s", addr, p.DID)
}

// DIDDocument is the did:web document (/.well-known/did.json) through which JWS verifiers,
// the extension's among them, resolve a receipt's kid; each key's EIP-712 signer is listed as
// its blockchain account on chain 1, the chain of the extension's EIP-712 domains.
func (p *Published) DIDDocument() map[string]any {
	var methods []map[string]any
	var ids []string
	for _, k := range p.Keys {
		methods = append(methods, map[string]any{"id": k.KID, "type": "JsonWebKey2020", "controller": p.DID, "publicKeyJwk": k.PublicKeyJWK})
		ids = append(ids, k.KID)
		methods = append(methods, map[string]any{"id": k.KID + "-eip712", "type": "EcdsaSecp256k1RecoveryMethod2020",
			"controller": p.DID, "blockchainAccountId": "eip155:1:" + k.EIP712Signer})
		ids = append(ids, k.KID+"-eip712")
	}
	return map[string]any{
		"@context":           []string{"https://www.w3.org/ns/did/v1", "https://w3id.org/security/suites/jws-2020/v1"},
		"id":                 p.DID,
		"verificationMethod": methods,
		"assertionMethod":    ids,
	}
}
