package exact

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/peage/appliance/settle/x402"
)

// Reader is what verification needs to know from the chain.
type Reader interface {
	// AuthorizationState reports whether the token has seen (used or cancelled) the nonce.
	AuthorizationState(ctx context.Context, token, authorizer common.Address, nonce common.Hash) (bool, error)
	BalanceOf(ctx context.Context, token, owner common.Address) (*big.Int, error)
	// IsValidSignature asks a contract wallet whether it accepts sig over digest (ERC-1271).
	// An account without code answers false, not an error.
	IsValidSignature(ctx context.Context, wallet common.Address, digest common.Hash, sig []byte) (bool, error)
}

// NonceBook is the facilitator's own record of nonces it holds or has settled.
type NonceBook interface {
	Used(from common.Address, nonce common.Hash) bool
}

// Invalid is a payment that fails verification, with the reason code the client is shown.
type Invalid struct {
	Reason string
	Detail string
	Payer  string
}

func (e *Invalid) Error() string { return e.Reason + ": " + e.Detail }

func invalid(reason, format string, args ...any) *Invalid {
	return &Invalid{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

// Payment is a payment that passed the local checks.
type Payment struct {
	Version   int
	Auth      Authorization
	Signature []byte
	Domain    Domain
	Digest    common.Hash
	// Recovered is true when the signature is a plain ECDSA signature by Auth.From; otherwise
	// only the payer's wallet contract can say (ERC-1271).
	Recovered bool
	// Balance is the payer's token balance read by Verify (nil after Check alone).
	Balance *big.Int
}

// Payer is the payer's checksummed address.
func (p *Payment) Payer() string { return p.Auth.From.Hex() }

// Verifier checks exact/EIP-3009 payments.
type Verifier struct {
	Reader Reader
	Book   NonceBook // may be nil
	Now    func() time.Time
	// ValidBeforeMargin is how long an authorization must stay valid after verification: it has
	// to outlive the work and the block that settles it (the reference uses 6 s).
	ValidBeforeMargin time.Duration
	// Skew is how far in the future validAfter may be and still count as valid now.
	Skew time.Duration
}

func (v *Verifier) now() time.Time {
	if v.Now != nil {
		return v.Now()
	}
	return time.Now()
}

var maxUint256 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

// secp256k1 half order: signatures with a higher s are malleable copies and the token refuses them.
var halfN = new(big.Int).Rsh(crypto.S256().Params().N, 1)

// halfNBytes is halfN as a signature carries s: 32 bytes, big-endian.
var halfNBytes = func() (w [32]byte) { halfN.FillBytes(w[:]); return }()

// Check runs every verification that needs no chain access, in the reference order.
func (v *Verifier) Check(p *x402.PaymentPayload, r *x402.FacilitatorRequirements) (*Payment, *Invalid) {
	return v.check(p, r, nil)
}

// Recheck is Check of a payment verified before, whose signer's kind is known (recovered: a
// plain ECDSA signature by its payer): the signature is not recovered again. The settlement
// queue uses it; the chain checks the signature anyway when it settles.
func (v *Verifier) Recheck(p *x402.PaymentPayload, r *x402.FacilitatorRequirements, recovered bool) (*Payment, *Invalid) {
	return v.check(p, r, &recovered)
}

func (v *Verifier) check(p *x402.PaymentPayload, r *x402.FacilitatorRequirements, recovered *bool) (*Payment, *Invalid) {
	if p.X402Version != 1 && p.X402Version != 2 {
		return nil, invalid(x402.ReasonInvalidVersion, "x402Version %d is not supported", p.X402Version)
	}
	scheme, network := p.Scheme, p.Network
	if p.X402Version == 2 {
		if p.Accepted == nil {
			return nil, invalid(x402.ReasonInvalidPayload, "accepted is missing")
		}
		scheme, network = p.Accepted.Scheme, p.Accepted.Network
	}
	if scheme != x402.SchemeExact || r.Scheme != x402.SchemeExact {
		return nil, invalid(x402.ReasonInvalidScheme, "scheme %q is not %q", scheme, x402.SchemeExact)
	}
	if x402.CAIP2(network) != x402.CAIP2(r.Network) {
		return nil, invalid(x402.ReasonInvalidNetwork, "payment is for network %s, not %s", network, r.Network)
	}
	if p.X402Version == 2 && r.Amount != "" {
		if reason := x402.Match(p.Accepted, &r.PaymentRequirements); reason != "" {
			return nil, invalid(reason, "accepted requirements differ from the offered ones")
		}
	}
	chainID, err := x402.ChainID(r.Network)
	if err != nil {
		return nil, invalid(x402.ReasonInvalidNetwork, "%v", err)
	}
	if r.Extra == nil || r.Extra.Name == "" || r.Extra.Version == "" {
		return nil, invalid(x402.ReasonMissingDomain, "requirements carry no EIP-712 name and version")
	}
	if !common.IsHexAddress(r.Asset) || !common.IsHexAddress(r.PayTo) {
		return nil, invalid(x402.ReasonInvalidRequirements, "asset and payTo must be addresses")
	}
	a, sig, bad := parse(&p.Payload)
	if bad != nil {
		return nil, bad
	}
	pay := &Payment{Version: p.X402Version, Auth: *a, Signature: sig,
		Domain: Domain{Name: r.Extra.Name, Version: r.Extra.Version, ChainID: chainID, Contract: common.HexToAddress(r.Asset)}}
	fail := func(reason, format string, args ...any) (*Payment, *Invalid) {
		e := invalid(reason, format, args...)
		e.Payer = pay.Payer()
		return nil, e
	}
	if a.To != common.HexToAddress(r.PayTo) {
		return fail(x402.ReasonRecipientMismatch, "authorization pays %s, not %s", a.To.Hex(), r.PayTo)
	}
	required, ok := new(big.Int).SetString(r.Required(), 10)
	if !ok || required.Sign() <= 0 {
		return fail(x402.ReasonInvalidRequirements, "required amount %q is not a positive integer", r.Required())
	}
	if p.X402Version == 2 && a.Value.Cmp(required) != 0 {
		return fail(x402.ReasonValueMismatch, "authorization value %s is not the price %s", a.Value, required)
	}
	if p.X402Version == 1 && a.Value.Cmp(required) < 0 {
		return fail(x402.ReasonValueV1, "authorization value %s is below the price %s", a.Value, required)
	}
	now := v.now()
	deadline := big.NewInt(now.Add(v.ValidBeforeMargin).Unix())
	if a.ValidBefore.Cmp(deadline) <= 0 {
		return fail(x402.ReasonValidBefore, "authorization expires at %s, too soon to settle", a.ValidBefore)
	}
	if a.ValidAfter.Cmp(big.NewInt(now.Add(v.Skew).Unix())) > 0 {
		return fail(x402.ReasonValidAfter, "authorization is valid only after %s", a.ValidAfter)
	}
	pay.Digest = Digest(pay.Domain, a)
	// A signature that does not recover to from may still be a smart wallet's: Verify asks
	// the wallet (ERC-1271) then.
	if recovered != nil {
		pay.Recovered = *recovered
	} else {
		pay.Recovered = recovers(pay.Digest, sig, a.From)
	}
	return pay, nil
}

// looksLikeWalletSig is a hook for wrapped (ERC-6492) signatures, which end in a magic suffix.
func looksLikeWalletSig(sig []byte) bool {
	return len(sig) > 32 && hex.EncodeToString(sig[len(sig)-32:]) == erc6492Magic
}

const erc6492Magic = "6492649264926492649264926492649264926492649264926492649264926492"

// Verify runs Check and then the chain checks: ERC-1271 when the signature did not recover,
// the nonce unused in the book and on chain, and the balance. A failure to read the chain is
// returned as an error (the payment is neither valid nor invalid).
func (v *Verifier) Verify(ctx context.Context, p *x402.PaymentPayload, r *x402.FacilitatorRequirements) (*Payment, *Invalid, error) {
	return v.VerifyOn(ctx, v.Reader, p, r)
}

// VerifyOn is Verify with the chain's facts asked of rd instead of v.Reader (a facilitator's
// reservation reads through its payer view).
func (v *Verifier) VerifyOn(ctx context.Context, rd Reader, p *x402.PaymentPayload, r *x402.FacilitatorRequirements) (*Payment, *Invalid, error) {
	pay, bad := v.Check(p, r)
	if bad != nil {
		return nil, bad, nil
	}
	fail := func(reason, format string, args ...any) (*Payment, *Invalid, error) {
		e := invalid(reason, format, args...)
		e.Payer = pay.Payer()
		return nil, e, nil
	}
	a := &pay.Auth
	if !pay.Recovered {
		if looksLikeWalletSig(pay.Signature) {
			return fail(x402.ReasonSignature, "counterfactual (ERC-6492) wallets are not supported; deploy the wallet first")
		}
		ok, err := rd.IsValidSignature(ctx, a.From, pay.Digest, pay.Signature)
		if err != nil {
			return nil, nil, fmt.Errorf("ask wallet %s: %w", a.From.Hex(), err)
		}
		if !ok {
			return fail(x402.ReasonSignature, "signature is not by %s", a.From.Hex())
		}
	}
	if v.Book != nil && v.Book.Used(a.From, a.Nonce) {
		return fail(x402.ReasonNonceUsed, "nonce %s was already presented", a.Nonce.Hex())
	}
	// The two reads at once: on a remote RPC each is a round trip on every paid call.
	var bal *big.Int
	var balErr error
	read := make(chan struct{})
	go func() {
		defer close(read)
		bal, balErr = rd.BalanceOf(ctx, pay.Domain.Contract, a.From)
	}()
	used, err := rd.AuthorizationState(ctx, pay.Domain.Contract, a.From, a.Nonce)
	<-read
	if err != nil {
		return nil, nil, fmt.Errorf("read authorization state: %w", err)
	}
	if used {
		return fail(x402.ReasonNonceUsed, "nonce %s is already used on chain", a.Nonce.Hex())
	}
	if balErr != nil {
		return nil, nil, fmt.Errorf("read balance: %w", balErr)
	}
	if bal.Cmp(a.Value) < 0 {
		return fail(x402.ReasonInsufficientFunds, "balance %s is below %s", bal, a.Value)
	}
	pay.Balance = bal
	return pay, nil, nil
}

// recovers reports whether sig is a canonical ECDSA signature of digest by from.
func recovers(digest common.Hash, sig []byte, from common.Address) bool {
	signer, ok := Signer(digest, sig)
	return ok && signer == from
}

// Signer recovers the address whose key made sig over digest: one ECDSA recovery. Only the
// canonical form counts, as on chain: 65 bytes, v in {0,1,27,28}, low s.
func Signer(digest common.Hash, sig []byte) (common.Address, bool) {
	if len(sig) != 65 {
		return common.Address{}, false
	}
	v := sig[64]
	if v >= 27 {
		v -= 27
	}
	if v > 1 {
		return common.Address{}, false
	}
	if bytes.Compare(sig[32:64], halfNBytes[:]) > 0 {
		return common.Address{}, false
	}
	var norm [65]byte
	copy(norm[:], sig)
	norm[64] = v
	// The uncompressed key's hash makes the address, as the ecrecover precompile does:
	// SigToPub would also parse the key into big integers and check it is on the curve,
	// which the recovery already guarantees (a third of a recovery's time).
	pub, err := crypto.Ecrecover(digest[:], norm[:])
	if err != nil || len(pub) != 65 {
		return common.Address{}, false
	}
	return common.BytesToAddress(crypto.Keccak256(pub[1:])[12:]), true
}

// parse reads the all-text authorization strictly: addresses must be 20-byte hex, numbers
// decimal within uint256, the nonce exactly 32 bytes.
func parse(e *x402.ExactPayload) (*Authorization, []byte, *Invalid) {
	au := &e.Authorization
	if !common.IsHexAddress(au.From) || !common.IsHexAddress(au.To) {
		return nil, nil, invalid(x402.ReasonInvalidPayload, "from and to must be addresses")
	}
	a := &Authorization{From: common.HexToAddress(au.From), To: common.HexToAddress(au.To)}
	for _, f := range []struct {
		name string
		text string
		dst  **big.Int
	}{{"value", au.Value, &a.Value}, {"validAfter", au.ValidAfter, &a.ValidAfter}, {"validBefore", au.ValidBefore, &a.ValidBefore}} {
		n, ok := new(big.Int).SetString(f.text, 10)
		if !ok || n.Sign() < 0 || n.Cmp(maxUint256) > 0 || f.text == "" || f.text[0] == '+' {
			return nil, nil, invalid(x402.ReasonInvalidPayload, "%s %q is not a uint256 in decimal", f.name, f.text)
		}
		*f.dst = n
	}
	nonce, err := hex0x(au.Nonce)
	if err != nil || len(nonce) != 32 {
		return nil, nil, invalid(x402.ReasonInvalidPayload, "nonce must be 32 bytes of 0x hex")
	}
	a.Nonce = common.BytesToHash(nonce)
	sig, err := hex0x(e.Signature)
	if err != nil || len(sig) == 0 {
		return nil, nil, invalid(x402.ReasonInvalidPayload, "signature must be 0x hex")
	}
	return a, sig, nil
}

func hex0x(s string) ([]byte, error) {
	rest, ok := strings.CutPrefix(s, "0x")
	if !ok {
		rest, ok = strings.CutPrefix(s, "0X")
	}
	if !ok {
		return nil, fmt.Errorf("missing 0x")
	}
	return hex.DecodeString(rest)
}

// Parse reads the authorization and signature of an exact payload (no other check).
func Parse(e *x402.ExactPayload) (*Authorization, []byte, error) {
	a, sig, bad := parse(e)
	if bad != nil {
		return nil, nil, bad
	}
	return a, sig, nil
}
