package paywall

import (
	"strings"
	"time"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/internal/receipt"
)

// OfferFormat is the signature format a client asks for with the X-Offer-Receipt-Format
// header: its 402's offers and its paid answer's receipt come signed that way.
type OfferFormat string

const (
	FormatDefault OfferFormat = ""       // EIP-712, the smaller
	FormatEIP712  OfferFormat = "eip712" // offers and receipt as EIP-712 typed data
	FormatJWS     OfferFormat = "jws"    // offers and receipt as compact JWS (EdDSA, did:web)
	FormatBoth    OfferFormat = "both"   // offers in both formats, the receipt in EIP-712
)

// HeaderOfferFormat is the request header naming the format of offers and receipts.
const HeaderOfferFormat = "X-Offer-Receipt-Format"

// ParseOfferFormat reads the header's value; anything else is the default.
func ParseOfferFormat(v string) OfferFormat {
	switch f := OfferFormat(strings.ToLower(strings.TrimSpace(v))); f {
	case FormatEIP712, FormatJWS, FormatBoth:
		return f
	}
	return FormatDefault
}

// offerFormats lists the formats offers are signed in.
func (f OfferFormat) offerFormats() []string {
	switch f {
	case FormatJWS:
		return []string{receipt.FormatJWS}
	case FormatBoth:
		return []string{receipt.FormatEIP712, receipt.FormatJWS}
	}
	return []string{receipt.FormatEIP712}
}

// receiptFormat is the format of the receipt.
func (f OfferFormat) receiptFormat() string {
	if f == FormatJWS {
		return receipt.FormatJWS
	}
	return receipt.FormatEIP712
}

// offerSigner signs the offers of the 402s. Offers are memoised with their challenge, so each
// is signed valid for twice the challenge's timeout and re-signed once less than the timeout
// plus a margin is left: an offer always outlives the authorization a client signs against it.
type offerSigner struct {
	keys *receipt.Keyring
	now  func() time.Time
}

// offerRefreshMargin is what an offer keeps beyond the challenge's timeout before re-signing.
const offerRefreshMargin = 10 * time.Second

// SignOffers makes every 402 carry offers signed with keys (extension offer-receipt).
func (c *Challenges) SignOffers(keys *receipt.Keyring, now func() time.Time) {
	if now == nil {
		now = time.Now
	}
	c.offers = &offerSigner{keys: keys, now: now}
}

// offerTerms are the accepts entries of e's 402, in order.
func (c *Challenges) offerTerms(e *catalog.Entry) []receipt.OfferTerms {
	req := c.cfg.Requirements(e)
	terms := []receipt.OfferTerms{{AcceptIndex: 0, Scheme: req.Scheme, Network: req.Network, Asset: req.Asset, PayTo: req.PayTo, Amount: req.Amount}}
	if c.cfg.BatchOffered() {
		b := c.cfg.BatchRequirements(e)
		terms = append(terms, receipt.OfferTerms{AcceptIndex: 1, Scheme: b.Scheme, Network: b.Network, Asset: b.Asset, PayTo: b.PayTo, Amount: b.Amount})
	}
	return terms
}

// sign returns the 402's offer-receipt extension entry ({"info":{"offers":[…]}}) and when it
// must be signed again; nil without keys.
func (s *offerSigner) sign(resourceURL string, terms []receipt.OfferTerms, f OfferFormat, timeout time.Duration) (map[string]any, int64, error) {
	if s == nil {
		return nil, 0, nil
	}
	now := s.now()
	validUntil := now.Add(2 * timeout).Unix()
	var offers []receipt.SignedOffer
	for _, format := range f.offerFormats() {
		for _, t := range terms {
			o, err := s.keys.Offer(format, resourceURL, t, validUntil)
			if err != nil {
				return nil, 0, err
			}
			offers = append(offers, o)
		}
	}
	return map[string]any{"info": map[string]any{"offers": offers}}, validUntil - int64((timeout+offerRefreshMargin)/time.Second), nil
}

// fresh reports whether a memoised challenge's offers still cover a challenge's timeout.
func (s *offerSigner) fresh(ch *Challenge) bool {
	return s == nil || ch.offersRefreshAt == 0 || s.now().Unix() < ch.offersRefreshAt
}
