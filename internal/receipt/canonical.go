package receipt

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// The fixed shapes the box signs are written in canonical JSON by hand: the generic canonical
// (marshal, decode, encode again) took a quarter of a delivery statement's signing time.
// TestCanonicalByHand holds each to the generic encoding.

// appendString appends s as encoding/json writes it without HTML escaping.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return appendStringSlow(b, s)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendStringSlow leaves escapes and U+2028/2029 to encoding/json. An invalid byte becomes
// U+FFFD written as is, as the generic canonical (which decodes encoding/json's \ufffd) has it.
func appendStringSlow(b []byte, s string) []byte {
	if !utf8.ValidString(s) {
		valid := make([]rune, 0, len(s))
		for _, r := range s { // an invalid byte ranges as one utf8.RuneError
			valid = append(valid, r)
		}
		s = string(valid)
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(out.Bytes(), []byte("\n"))...)
}

// jsonObject appends the members of one canonical object, keys given in sorted order.
type jsonObject struct {
	b     []byte
	first bool
}

func newObject(b []byte) *jsonObject { return &jsonObject{b: append(b, '{'), first: true} }

func (o *jsonObject) key(k string) {
	if !o.first {
		o.b = append(o.b, ',')
	}
	o.first = false
	o.b = append(o.b, '"')
	o.b = append(o.b, k...)
	o.b = append(o.b, '"', ':')
}

func (o *jsonObject) str(k, v string) { o.key(k); o.b = appendString(o.b, v) }
func (o *jsonObject) int(k string, v int64) {
	o.key(k)
	o.b = strconv.AppendInt(o.b, v, 10)
}
func (o *jsonObject) strOmitEmpty(k, v string) {
	if v != "" {
		o.str(k, v)
	}
}
func (o *jsonObject) end() []byte { return append(o.b, '}') }

func (p *OfferPayload) canonical() []byte {
	o := newObject(make([]byte, 0, 384))
	o.str("amount", p.Amount)
	o.str("asset", p.Asset)
	o.str("network", p.Network)
	o.str("payTo", p.PayTo)
	o.str("resourceUrl", p.ResourceURL)
	o.str("scheme", p.Scheme)
	o.int("validUntil", p.ValidUntil)
	o.int("version", int64(p.Version))
	return o.end()
}

// jwsReceiptCanonical is the JWS receipt's claims: the payload without a transaction it does
// not have, as the reference writes it.
func (p *ReceiptPayload) jwsCanonical() []byte {
	o := newObject(make([]byte, 0, 256))
	o.int("issuedAt", p.IssuedAt)
	o.str("network", p.Network)
	o.str("payer", p.Payer)
	o.str("resourceUrl", p.ResourceURL)
	o.strOmitEmpty("transaction", p.Transaction)
	o.int("version", int64(p.Version))
	return o.end()
}

func (s *Statement) canonical() []byte {
	o := newObject(make([]byte, 0, 768))
	o.str("amount", s.Amount)
	o.int("issuedAt", s.IssuedAt)
	o.str("network", s.Network)
	o.str("nonce", s.Nonce)
	o.str("payer", s.Payer)
	o.str("receipt", s.Receipt)
	o.key("request")
	req := newObject(o.b)
	req.str("method", s.Request.Method)
	req.str("paramsSha256", s.Request.ParamsSHA256)
	req.str("path", s.Request.Path)
	o.b = req.end()
	o.str("resourceUrl", s.ResourceURL)
	o.key("response")
	resp := newObject(o.b)
	resp.str("contentType", s.Response.ContentType)
	resp.int("length", int64(s.Response.Length))
	resp.str("sha256", s.Response.SHA256)
	resp.int("status", int64(s.Response.Status))
	o.b = resp.end()
	o.str("scheme", s.Scheme)
	o.str("settlement", s.Settlement)
	if s.Subject != nil {
		o.key("subject")
		sub := newObject(o.b)
		sub.strOmitEmpty("id", s.Subject.ID)
		sub.strOmitEmpty("keySha256", s.Subject.KeySHA256)
		sub.str("kind", s.Subject.Kind)
		sub.strOmitEmpty("terms", s.Subject.Terms)
		o.b = sub.end()
	}
	o.strOmitEmpty("transaction", s.Transaction)
	o.int("version", int64(s.Version))
	return o.end()
}
