package receipt

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

var b64 = base64.RawURLEncoding

// canonical is the extension's canonical JSON: keys sorted, no white space, no HTML escaping
// (offer-receipt/signing.ts canonicalize). Numbers stay as written.
func canonical(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(tree); err != nil { // maps encode with sorted keys
		return nil, err
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
}

type jwsHeader struct {
	Alg string `json:"alg"`
	Kid string `json:"kid"`
}

// signJWS is the compact JWS (EdDSA) of payload's canonical JSON, header {"alg","kid"} as the
// reference writes it.
func signJWS(k ed25519.PrivateKey, kid string, payload any) (string, error) {
	h, err := json.Marshal(jwsHeader{Alg: "EdDSA", Kid: kid})
	if err != nil {
		return "", err
	}
	p, err := canonical(payload)
	if err != nil {
		return "", err
	}
	input := b64.EncodeToString(h) + "." + b64.EncodeToString(p)
	return input + "." + b64.EncodeToString(ed25519.Sign(k, []byte(input))), nil
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
