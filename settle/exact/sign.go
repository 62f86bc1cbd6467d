package exact

import (
	"crypto/ecdsa"
	"crypto/rand"
	"fmt"
	"math/big"
	"strconv"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/peage/appliance/settle/x402"
)

// Sign signs an authorization the way an EOA wallet does (65 bytes r‖s‖v, v in {27,28}).
func Sign(key *ecdsa.PrivateKey, d Domain, a *Authorization) ([]byte, error) {
	return SignDigest(key, Digest(d, a))
}

// SignDigest signs digest the way an EOA wallet does: 65 bytes r‖s‖v with v in {27,28}.
func SignDigest(key *ecdsa.PrivateKey, digest common.Hash) ([]byte, error) {
	sig, err := crypto.Sign(digest[:], key)
	if err != nil {
		return nil, err
	}
	sig[64] += 27
	return sig, nil
}

// cancelTypeHash is keccak256("CancelAuthorization(address authorizer,bytes32 nonce)").
var cancelTypeHash = crypto.Keccak256Hash([]byte("CancelAuthorization(address authorizer,bytes32 nonce)"))

// SignCancel signs the EIP-3009 cancellation of nonce by its authorizer: a payer's way to take
// back an authorization not yet used.
func SignCancel(key *ecdsa.PrivateKey, d Domain, nonce common.Hash) ([]byte, error) {
	from := crypto.PubkeyToAddress(key.PublicKey)
	sh := crypto.Keccak256Hash(cancelTypeHash[:], common.LeftPadBytes(from[:], 32), nonce[:])
	return SignDigest(key, TypedDigest(d, sh))
}

// NewPayload builds and signs a payment for the requirements r (v2, or v1 when version is 1)
// the way the reference client does: value = amount, validAfter = now - 10 min, validBefore =
// now + maxTimeoutSeconds, a random 32-byte nonce.
func NewPayload(key *ecdsa.PrivateKey, version int, r *x402.PaymentRequirements, resource *x402.ResourceInfo, now time.Time) (*x402.PaymentPayload, error) {
	if r.Extra == nil || r.Extra.Name == "" || r.Extra.Version == "" {
		return nil, fmt.Errorf("requirements carry no EIP-712 domain (extra.name, extra.version)")
	}
	chainID, err := x402.ChainID(r.Network)
	if err != nil {
		return nil, err
	}
	if !common.IsHexAddress(r.Asset) || !common.IsHexAddress(r.PayTo) {
		return nil, fmt.Errorf("asset and payTo must be addresses")
	}
	value, ok := new(big.Int).SetString(r.Amount, 10)
	if !ok || value.Sign() <= 0 {
		return nil, fmt.Errorf("amount %q is not a positive integer", r.Amount)
	}
	var nonce common.Hash
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, err
	}
	timeout := r.MaxTimeoutSeconds
	if timeout <= 0 {
		timeout = 60
	}
	a := &Authorization{
		From:        crypto.PubkeyToAddress(key.PublicKey),
		To:          common.HexToAddress(r.PayTo),
		Value:       value,
		ValidAfter:  big.NewInt(now.Add(-10 * time.Minute).Unix()),
		ValidBefore: big.NewInt(now.Add(time.Duration(timeout) * time.Second).Unix()),
		Nonce:       nonce,
	}
	d := Domain{Name: r.Extra.Name, Version: r.Extra.Version, ChainID: chainID, Contract: common.HexToAddress(r.Asset)}
	sig, err := Sign(key, d, a)
	if err != nil {
		return nil, err
	}
	p := &x402.PaymentPayload{X402Version: version, Payload: x402.ExactPayload{
		Signature:     "0x" + common.Bytes2Hex(sig),
		Authorization: WireAuthorization(a),
	}}
	if version == 1 {
		p.Scheme, p.Network = r.Scheme, x402.V1Network(r.Network)
	} else {
		acc := *r
		p.Accepted, p.Resource = &acc, resource
	}
	return p, nil
}

// WireAuthorization renders a as the all-text wire form.
func WireAuthorization(a *Authorization) x402.Authorization {
	return x402.Authorization{
		From:        a.From.Hex(),
		To:          a.To.Hex(),
		Value:       a.Value.String(),
		ValidAfter:  a.ValidAfter.String(),
		ValidBefore: a.ValidBefore.String(),
		Nonce:       a.Nonce.Hex(),
	}
}

// Unix formats a unix time as the wire does.
func Unix(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }
