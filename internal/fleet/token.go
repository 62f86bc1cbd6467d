package fleet

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"strings"
)

// EnrolToken is what an operator hands a box to join once: a random secret (the gateway keeps
// only its hash) and the pin of the fleet CA, the SHA-256 of its certificate, so that the box
// trusts the gateway's enrolment listener before it holds any CA of its own. Its text is
// "<secret>.<pin>", both unpadded base64url.
type EnrolToken struct {
	Secret string
	CAPin  string
}

func (t EnrolToken) String() string { return t.Secret + "." + t.CAPin }

// ParseEnrolToken reads a token's text.
func ParseEnrolToken(text string) (EnrolToken, error) {
	secret, pin, ok := strings.Cut(strings.TrimSpace(text), ".")
	if !ok || !is256Bits(secret) || !is256Bits(pin) {
		return EnrolToken{}, errors.New("enrolment token: want <secret>.<ca-pin> as printed by appliance gateway token")
	}
	return EnrolToken{Secret: secret, CAPin: pin}, nil
}

func is256Bits(s string) bool {
	b, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil && len(b) == sha256.Size
}

// CAPin is the pin of a CA certificate as an enrolment token carries it.
func CAPin(ca *x509.Certificate) string {
	sum := sha256.Sum256(ca.Raw)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// EnrolRequest is what a box sends to redeem its token: the token's secret, the name the token
// was made for, and the public halves of the nkey and the WireGuard key it made itself (the
// seed and the private key never leave the box).
type EnrolRequest struct {
	Token string `json:"token"`
	Box   string `json:"box"`
	Nkey  string `json:"nkey"`
	// WireGuard is the box's tunnel key (base64), its peer on a gateway that carries proxy
	// tunnels; a gateway without them ignores it.
	WireGuard string `json:"wireguard,omitempty"`
}

// EnrolPath is the gateway's public route a box redeems its token on.
const EnrolPath = "/fleet/join"
