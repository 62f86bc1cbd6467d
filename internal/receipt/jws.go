package receipt

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

var b64 = base64.RawURLEncoding

type jwsHeader struct {
	Alg string `json:"alg"`
	Kid string `json:"kid"`
}

// jwsHeaderPart is the base64url protected header {"alg","kid"} of kid, as the reference
// writes it.
func jwsHeaderPart(kid string) string {
	h, _ := json.Marshal(jwsHeader{Alg: "EdDSA", Kid: kid}) // two strings always marshal
	return b64.EncodeToString(h)
}

// signJWS is the compact JWS (EdDSA) of a canonical JSON payload under a header part.
func signJWS(k ed25519.PrivateKey, header string, payload []byte) string {
	n := len(header) + 1 + b64.EncodedLen(len(payload))
	input := make([]byte, n, n+1+b64.EncodedLen(ed25519.SignatureSize))
	copy(input, header)
	input[len(header)] = '.'
	b64.Encode(input[len(header)+1:], payload)
	sig := ed25519.Sign(k, input)
	out := append(input, '.')
	out = out[:len(out)+b64.EncodedLen(len(sig))]
	b64.Encode(out[n+1:], sig)
	return string(out)
}

// parseJWS splits a compact JWS into its header and payload, unverified.
func parseJWS(jws string) (jwsHeader, []byte, error) {
	var h jwsHeader
	parts := strings.Split(jws, ".")
	if len(parts) != 3 {
		return h, nil, errors.New("not a compact JWS (three dot-separated parts)")
	}
	hb, err := b64.DecodeString(parts[0])
	if err != nil {
		return h, nil, fmt.Errorf("JWS header is not base64url: %w", err)
	}
	if err := json.Unmarshal(hb, &h); err != nil {
		return h, nil, fmt.Errorf("JWS header is not JSON: %w", err)
	}
	pb, err := b64.DecodeString(parts[1])
	if err != nil {
		return h, nil, fmt.Errorf("JWS payload is not base64url: %w", err)
	}
	return h, pb, nil
}

// verifyJWS checks a compact JWS's EdDSA signature with pub.
func verifyJWS(jws string, pub ed25519.PublicKey) error {
	i := strings.LastIndexByte(jws, '.')
	if i < 0 {
		return errors.New("not a compact JWS")
	}
	sig, err := b64.DecodeString(jws[i+1:])
	if err != nil {
		return fmt.Errorf("JWS signature is not base64url: %w", err)
	}
	if !ed25519.Verify(pub, []byte(jws[:i]), sig) {
		return errors.New("JWS signature does not verify")
	}
	return nil
}

// DecodeJWSPayload decodes a JWS's base64url payload part into v, unverified (to read where a
// receipt comes from before fetching the keys that verify it).
func DecodeJWSPayload(part string, v any) error {
	b, err := b64.DecodeString(part)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
