package paywall

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/internal/receipt"
	"github.com/peage/appliance/settle/x402"
)

// Config says how calls are paid. PayTo is only an address: the payout key never lives on the box.
type Config struct {
	Network           string `toml:"network"`             // CAIP-2, e.g. eip155:8453
	Asset             string `toml:"asset"`               // USDC contract address
	PayTo             string `toml:"pay_to"`              // recipient address
	TokenName         string `toml:"token_name"`          // EIP-712 domain name of the asset
	TokenVersion      string `toml:"token_version"`       // EIP-712 domain version of the asset
	MaxTimeoutSeconds int    `toml:"max_timeout_seconds"` // authorization lifetime offered to clients
	// ReceiverAuthorizer is the settle daemon's batch-settlement receiver authorizer (the
	// address that signs its claims and refunds). Set, the 402 offers batch-settlement beside
	// exact; empty, exact only.
	ReceiverAuthorizer string `toml:"receiver_authorizer"`
	// WithdrawDelaySeconds is the channels' withdrawal delay offered (15 min to 30 days): how
	// long a payer's timed withdrawal leaves the claimer to claim.
	WithdrawDelaySeconds uint64 `toml:"withdraw_delay_seconds"`
	// MinDeposit is the deposit target announced to batch-settlement clients (atomic units;
	// a route dearer than this announces its price).
	MinDeposit uint64 `toml:"min_deposit"`
	// FacilitatorURL, when set, is a standard x402 v2 facilitator (/verify, /settle,
	// /supported; Coinbase's among them) that verifies and settles instead of the appliance's
	// own settle daemon, the default. It is settlement.facilitator under the name operators
	// look for beside what is paid and to whom; config loading makes the two one.
	FacilitatorURL string `toml:"facilitator_url"`
	// ReceiptKeys is the credential holding the keys that sign offers and receipts (made at
	// first boot; never the payout key nor settle's hot key). A bare name is read from
	// $CREDENTIALS_DIRECTORY. Unreadable, answers carry no signed offers or receipts.
	ReceiptKeys string `toml:"receipt_keys"`
}

// BaseUSDC is USDC on Base mainnet.
const BaseUSDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"

// DefaultConfig is Base mainnet USDC; PayTo must be configured before production use.
func DefaultConfig() Config {
	return Config{Network: "eip155:8453", Asset: BaseUSDC, TokenName: "USD Coin", TokenVersion: "2", MaxTimeoutSeconds: 120,
		WithdrawDelaySeconds: 86_400, MinDeposit: 1_000_000, ReceiptKeys: "receipt-keys"}
}

// BatchOffered reports whether the 402 offers batch-settlement.
func (c Config) BatchOffered() bool { return c.ReceiverAuthorizer != "" }

// BatchRequirements is the batch-settlement way to pay for e (same price, asset and payee as
// exact), with the channel parameters the client binds into its channel config.
func (c Config) BatchRequirements(e *catalog.Entry) x402.BatchRequirements {
	exact := c.Requirements(e)
	return x402.BatchRequirements{
		Scheme: x402.SchemeBatchSettlement, Network: exact.Network, Amount: exact.Amount, Asset: exact.Asset, PayTo: exact.PayTo,
		MaxTimeoutSeconds: exact.MaxTimeoutSeconds,
		Extra: &x402.BatchExtra{ReceiverAuthorizer: c.ReceiverAuthorizer, WithdrawDelay: c.WithdrawDelaySeconds,
			Name: c.TokenName, Version: c.TokenVersion, MinDeposit: strconv.FormatUint(max(c.MinDeposit, e.Price), 10)},
	}
}

// v1Networks maps CAIP-2 ids to the legacy v1 network names that v1 clients know.
var v1Networks = map[string]string{"eip155:8453": "base", "eip155:84532": "base-sepolia"}

// V1Network is the legacy name of a CAIP-2 network, or the CAIP-2 id when v1 has no name for it.
func V1Network(caip2 string) string {
	if n, ok := v1Networks[caip2]; ok {
		return n
	}
	return caip2
}

// Requirements is the one way to pay for e: v2 matching compares payloads against exactly this.
// The authorization lifetime offered covers the route's deadline, the settlement margin and
// the time a client takes to sign and send, since clients sign validBefore = now + this.
func (c Config) Requirements(e *catalog.Entry) x402.PaymentRequirements {
	return x402.PaymentRequirements{
		Scheme:            x402.SchemeExact,
		Network:           c.Network,
		Amount:            strconv.FormatUint(e.Price, 10),
		Asset:             c.Asset,
		PayTo:             c.PayTo,
		MaxTimeoutSeconds: max(c.MaxTimeoutSeconds, int((e.Timeout+ValiditySlack)/time.Second)),
		Extra:             &x402.Extra{Name: c.TokenName, Version: c.TokenVersion},
	}
}

// ValiditySlack is what an offered authorization lifetime adds to the route's deadline: the
// settlement margin the gate requires (settlement.settle_margin_seconds, at most MaxSettleMargin)
// and at least a minute for the client to sign and send.
const ValiditySlack = 2 * time.Minute

// MaxSettleMargin bounds settlement.settle_margin_seconds so that ValiditySlack keeps a minute.
const MaxSettleMargin = ValiditySlack - time.Minute

// Alternative is a cheaper way to get (part of) the same result.
type Alternative struct {
	Kind   string `json:"kind"` // "partial" or "free_trial"
	Path   string `json:"path"`
	URL    string `json:"url"`
	Amount string `json:"amount"` // atomic units; "0" for the free trial
}

// Challenge is the 402 rendering of an entry: the v2 header value and the legacy v1 body.
type Challenge struct {
	Header string
	Body   []byte
	// HeaderBytes is Header as bytes, so the hot path copies it into the answer without
	// converting it first.
	HeaderBytes []byte
	// offersRefreshAt is when its signed offers no longer cover a timeout and are signed
	// again (Unix seconds; 0 without offers).
	offersRefreshAt int64
}

// Challenges renders and memoises the 402 answer of each entry.
type Challenges struct {
	cfg     Config
	cat     *catalog.Catalog
	baseURL string
	iconURL string   // "" where the Bazaar would drop it (see publicHost)
	memo    sync.Map // entry ID → memoised (reason-free form)
	// urls are the catalog's entries' ResourceURLs, joined once rather than on every call.
	urls map[*catalog.Entry]string

	offers *offerSigner // nil: the 402 carries no signed offers
}

type memoised struct {
	alts uint8 // which alternatives were available when it was rendered
	ch   *Challenge
}

func NewChallenges(cfg Config, cat *catalog.Catalog, baseURL string) *Challenges {
	c := &Challenges{cfg: cfg, cat: cat, baseURL: baseURL, urls: map[*catalog.Entry]string{}}
	for _, e := range cat.Entries() {
		c.urls[e] = baseURL + e.Path
	}
	if publicHost(baseURL) {
		c.iconURL = baseURL + IconPath
	}
	return c
}

// For returns the challenge for e. The common case (no specific reason) and the fixed reasons
// are rendered once per entry; a reason about a refused payment renders a fresh one.
func (c *Challenges) For(e *catalog.Entry, reason string) (*Challenge, error) {
	return c.forTransport(e, reason, httpTransport, FormatDefault)
}

// transport is how the challenged call came: its Bazaar declaration describes that call.
type transport uint8

const (
	httpTransport transport = iota
	mcpTransport
	// objectTransport is the HTTP call's challenge carried as a JSON object (A2A): no legacy
	// body beside it carries the alternatives, so the object does.
	objectTransport
)

// ReasonFreeCallLimited is the 402's reason when a route's free first call cannot be served
// because the client's free-call bucket is empty: the call can be paid now.
const ReasonFreeCallLimited = "free_call_limited: this client's free calls are used up for the moment, so the free first call of this route cannot be served; this call is paid"

// memoisedReason reports whether challenges with this reason are rendered once per entry:
// the common challenge and the fixed reasons a client may meet on every call.
func memoisedReason(reason string) bool { return reason == "" || reason == ReasonFreeCallLimited }

func (c *Challenges) forTransport(e *catalog.Entry, reason string, t transport, f OfferFormat) (*Challenge, error) {
	alts := c.availableAlternatives(e)
	key := e.ID
	switch t {
	case mcpTransport:
		key = "mcp:" + e.ID
	case objectTransport:
		key = "object:" + e.ID
	}
	if f != FormatDefault {
		key += "\x00" + string(f)
	}
	if reason != "" {
		key += "\x00" + reason
	}
	if memoisedReason(reason) {
		if m, ok := c.memo.Load(key); ok && m.(memoised).alts == alts && c.offers.fresh(m.(memoised).ch) {
			return m.(memoised).ch, nil
		}
	}
	ch, err := c.render(e, reason, nil, t, f)
	if err != nil {
		return nil, err
	}
	if memoisedReason(reason) {
		c.memo.Store(key, memoised{alts: alts, ch: ch})
	}
	return ch, nil
}

// ForError renders the 402 answer to a payment error: its reason, and for a batch-settlement
// cumulative-amount mismatch the corrective requirement carrying the channel's state.
func (c *Challenges) ForError(e *catalog.Entry, err error) (*Challenge, error) {
	return c.forError(e, err, httpTransport, FormatDefault)
}

// ForErrorIn is ForError with the signed offers in the format the client asked for (the
// X-Offer-Receipt-Format header).
func (c *Challenges) ForErrorIn(e *catalog.Entry, err error, f OfferFormat) (*Challenge, error) {
	return c.forError(e, err, httpTransport, f)
}

// ForObjectError is ForError for a transport that carries the challenge as a JSON object, not
// as a header beside the legacy body (A2A): the object also lists the alternatives.
func (c *Challenges) ForObjectError(e *catalog.Entry, err error) (*Challenge, error) {
	return c.forError(e, err, objectTransport, FormatDefault)
}

// ForMCPError is ForError for a tools/call: its Bazaar declaration names the MCP tool.
func (c *Challenges) ForMCPError(e *catalog.Entry, err error) (*Challenge, error) {
	return c.forError(e, err, mcpTransport, FormatDefault)
}

func (c *Challenges) forError(e *catalog.Entry, err error, t transport, f OfferFormat) (*Challenge, error) {
	if corr, ok := errors.AsType[*correction](err); ok {
		return c.render(e, corr.reason, corr.extra, t, f)
	}
	reason := apierr.From(err).Message
	if strings.HasPrefix(reason, "PAYMENT-SIGNATURE header is required") {
		reason = ""
	}
	return c.forTransport(e, reason, t, f)
}

// ResourceURL is the absolute URL of e named in challenges and receipts.
func (c *Challenges) ResourceURL(e *catalog.Entry) string {
	if u, ok := c.urls[e]; ok {
		return u
	}
	return c.baseURL + e.Path
}

// alternatives lists the cheaper ways to the same result that can serve now: pointing a
// client at a route that answers 503 would only cost it a round trip.
func (c *Challenges) alternatives(e *catalog.Entry) []Alternative {
	var alts []Alternative
	for _, a := range []struct{ kind, path string }{{"partial", e.Partial}, {"free_trial", e.FreeTrial}} {
		alt := c.alternative(a.path)
		if alt == nil {
			continue
		}
		alts = append(alts, Alternative{Kind: a.kind, Path: a.path, URL: c.baseURL + a.path, Amount: strconv.FormatUint(alt.Price, 10)})
	}
	return alts
}

func (c *Challenges) alternative(path string) *catalog.Entry {
	if path == "" {
		return nil
	}
	if alt := c.cat.ByPath(path); alt != nil && alt.Available() {
		return alt
	}
	return nil
}

// availableAlternatives is the memo's key part that can change at run time: one bit per
// alternative that can serve now.
func (c *Challenges) availableAlternatives(e *catalog.Entry) uint8 {
	var bits uint8
	if c.alternative(e.Partial) != nil {
		bits |= 1
	}
	if c.alternative(e.FreeTrial) != nil {
		bits |= 2
	}
	return bits
}

// MaxChallengeHeader is the size the encoded PAYMENT-REQUIRED header stays under: the Bazaar's
// crawlers and some proxies drop larger ones (x402 maintainers: about 3 KB).
const MaxChallengeHeader = 3 << 10

// IconURL is the absolute URL of the icon the box serves, "" on a host the Bazaar refuses.
func (c *Challenges) IconURL() string { return c.iconURL }

func (c *Challenges) render(e *catalog.Entry, reason string, corrective *x402.BatchExtra, t transport, f OfferFormat) (*Challenge, error) {
	timeout := time.Duration(c.cfg.Requirements(e).MaxTimeoutSeconds) * time.Second
	offers, refreshAt, err := c.offers.sign(c.ResourceURL(e), c.offerTerms(e), f, timeout)
	if err != nil {
		return nil, fmt.Errorf("sign offers of %s: %w", e.ID, err)
	}
	// The declaration's detail is chosen on the header without the offers, so a box that signs
	// offers declares the same to the Bazaar as one that does not: offers (about 470 header
	// bytes per scheme) take the header past MaxChallengeHeader rather than cut the declaration.
	d := bazaarTerse
	ch, err := c.renderDetail(e, reason, corrective, t, d, nil)
	if err == nil && len(ch.Header) > MaxChallengeHeader {
		d = bazaarBare
	}
	if err == nil && (offers != nil || d != bazaarTerse) {
		ch, err = c.renderDetail(e, reason, corrective, t, d, offers)
	}
	if err == nil {
		ch.offersRefreshAt = refreshAt
	}
	return ch, err
}

func (c *Challenges) renderDetail(e *catalog.Entry, reason string, corrective *x402.BatchExtra, t transport, d bazaarDetail, offers map[string]any) (*Challenge, error) {
	req := c.cfg.Requirements(e)
	alts := c.alternatives(e)
	accepts := []any{req}
	if c.cfg.BatchOffered() {
		b := c.cfg.BatchRequirements(e)
		if corrective != nil {
			b.Extra.ChannelState, b.Extra.VoucherState = corrective.ChannelState, corrective.VoucherState
		}
		accepts = append(accepts, b)
	}
	bazaar := bazaarHTTP(e, d)
	if t == mcpTransport {
		bazaar = BazaarMCP(e)
	}
	resource := x402.ResourceInfo{URL: c.ResourceURL(e), Description: e.Summary, MimeType: e.MediaType(),
		ServiceName: ServiceName, Tags: Tags(e), IconURL: c.iconURL}
	extensions := map[string]any{x402.ExtPaymentIdentifier: x402.PaymentIdentifierDeclaration(), ExtBazaar: bazaar}
	if offers != nil {
		extensions[receipt.Extension] = offers
	}
	// The shape of x402.PaymentRequired, with requirements of more than one scheme. Every byte
	// of the header is sent on each unpaid call and parsed by its client (docs/bazaar.md): a
	// call without payment gets no error text (optional in v2: the 402 says it), and the
	// alternatives are in the legacy body that comes with the header.
	v2Alts := alts
	if t == httpTransport {
		v2Alts = nil
	}
	v2 := struct {
		X402Version  int               `json:"x402Version"`
		Error        string            `json:"error,omitempty"`
		Resource     x402.ResourceInfo `json:"resource"`
		Accepts      []any             `json:"accepts"`
		Extensions   map[string]any    `json:"extensions,omitempty"`
		Alternatives []Alternative     `json:"alternatives,omitempty"`
	}{
		X402Version:  2,
		Error:        reason,
		Resource:     resource,
		Accepts:      accepts,
		Extensions:   extensions,
		Alternatives: v2Alts,
	}
	header, err := x402.Encode(v2)
	if err != nil {
		return nil, fmt.Errorf("encode challenge of %s: %w", e.ID, err)
	}
	// The v1 form declares discovery in outputSchema, as v1 Bazaar facilitators read it (the
	// v2 declaration is in the header only: a second copy in the body halved the 402's
	// requests per second).
	v1Input := map[string]any{"type": "http", "method": e.Method, "discoverable": true}
	info := bazaar["info"].(map[string]any)
	if in := info["input"].(map[string]any); in["type"] == "http" {
		if e.Method == "POST" {
			v1Input["bodyType"], v1Input["bodyFields"] = "json", in["body"]
		} else {
			v1Input["queryParams"] = in["queryParams"]
		}
	}
	outputSchema := map[string]any{"input": v1Input}
	if out, ok := info["output"].(map[string]any)["example"]; ok {
		outputSchema["output"] = out
	}
	if reason == "" {
		reason = "X-PAYMENT header is required" // v1 requires the error, and its clients send X-PAYMENT
	}
	v1 := map[string]any{
		"x402Version": 1,
		"error":       reason,
		"accepts": []x402.RequirementsV1{{
			Scheme: req.Scheme, Network: V1Network(req.Network), MaxAmountRequired: req.Amount,
			Resource: c.ResourceURL(e), Description: e.Summary, MimeType: e.MediaType(),
			PayTo: req.PayTo, MaxTimeoutSeconds: req.MaxTimeoutSeconds, Asset: req.Asset, Extra: req.Extra,
			OutputSchema: outputSchema,
		}},
	}
	if len(alts) > 0 {
		v1["alternatives"] = alts
	}
	body, err := json.Marshal(v1)
	if err != nil {
		return nil, err
	}
	return &Challenge{Header: header, HeaderBytes: []byte(header), Body: body}, nil
}
