package x402

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func TestDecodePayment(t *testing.T) {
	valid := `{"x402Version":2,"accepted":{"scheme":"exact","network":"eip155:8453","amount":"1","asset":"0x1","payTo":"0x2","maxTimeoutSeconds":60},"payload":{"signature":"0x00","authorization":{"from":"0x3","to":"0x2","value":"1","validAfter":"0","validBefore":"9","nonce":"0x4"}}}`
	cases := []struct {
		name, header string
		ok           bool
	}{
		{"v2 padded", base64.StdEncoding.EncodeToString([]byte(valid)), true},
		{"v2 unpadded", base64.RawStdEncoding.EncodeToString([]byte(valid)), true},
		{"v1", base64.StdEncoding.EncodeToString([]byte(`{"x402Version":1,"scheme":"exact","network":"base","payload":{}}`)), true},
		{"v1 without network", base64.StdEncoding.EncodeToString([]byte(`{"x402Version":1,"scheme":"exact","payload":{}}`)), false},
		{"v2 without accepted", base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"payload":{}}`)), false},
		{"version 3", base64.StdEncoding.EncodeToString([]byte(`{"x402Version":3}`)), false},
		{"not base64", "%%%", false},
		{"base64url", strings.ReplaceAll(base64.StdEncoding.EncodeToString([]byte(valid+"??>")), "/", "_"), false},
		{"not JSON", base64.StdEncoding.EncodeToString([]byte("hello")), false},
		{"oversized", strings.Repeat("A", MaxHeaderBytes+4), false},
		{"empty", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodePayment(c.header)
			if c.ok && err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if !c.ok && !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v, want ErrMalformed", err)
			}
		})
	}
}

// FuzzDecodePayment: the decoder is total over arbitrary header values. A refusal is a
// DecodeError naming a reason; an acceptance has the shape its header promises, which the gate
// relies on without looking again (a v1 payload in PAYMENT-SIGNATURE once reached a nil
// accepted: testdata/fuzz/FuzzDecodePayment holds it).
func TestDecodePaymentHeader(t *testing.T) {
	v1 := base64.StdEncoding.EncodeToString([]byte(`{"x402Version":1,"scheme":"exact","network":"base"}`))
	v2 := base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"accepted":{"scheme":"exact"}}`))
	cases := []struct {
		header, value, reason string
	}{
		{HeaderPaymentSignature, v2, ""},
		{HeaderXPayment, v1, ""},
		{"x-payment", v1, ""},
		{HeaderPaymentSignature, v1, ReasonInvalidVersion}, // the audit's crash (issue 34)
		{HeaderXPayment, v2, ReasonInvalidVersion},
		{HeaderPaymentSignature, "%%%", ReasonInvalidPayload},
	}
	for _, c := range cases {
		_, err := DecodePaymentHeader(c.header, c.value)
		var de *DecodeError
		switch {
		case c.reason == "" && err != nil:
			t.Errorf("%s %s: %v", c.header, c.value, err)
		case c.reason != "" && (!errors.As(err, &de) || de.Reason != c.reason || !errors.Is(err, ErrMalformed)):
			t.Errorf("%s %s: %v, want %s", c.header, c.value, err, c.reason)
		}
	}
}

func FuzzDecodePayment(f *testing.F) {
	f.Add(true, base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"accepted":{"scheme":"exact"},"payload":{"signature":"0x"}}`)))
	f.Add(false, base64.StdEncoding.EncodeToString([]byte(`{"x402Version":1,"scheme":"exact","network":"base","payload":{}}`)))
	f.Add(true, "")
	f.Add(false, "====")
	f.Fuzz(func(t *testing.T, v2 bool, h string) {
		header := HeaderXPayment
		if v2 {
			header = HeaderPaymentSignature
		}
		p, err := DecodePaymentHeader(header, h)
		if err != nil {
			var de *DecodeError
			if !errors.Is(err, ErrMalformed) || !errors.As(err, &de) || de.Reason == "" {
				t.Fatalf("error %v is not a DecodeError with a reason", err)
			}
			return
		}
		switch {
		case v2 && (p.X402Version != 2 || p.Accepted == nil):
			t.Fatalf("PAYMENT-SIGNATURE gave version %d, accepted %v", p.X402Version, p.Accepted)
		case !v2 && (p.X402Version != 1 || p.Scheme == "" || p.Network == ""):
			t.Fatalf("X-PAYMENT gave version %d, scheme %q, network %q", p.X402Version, p.Scheme, p.Network)
		}
		if _, err := Encode(p); err != nil {
			t.Fatalf("decoded payload does not encode: %v", err)
		}
		_, _ = PaymentIdentifier(p)
		_ = HashPayload(p)
		checkOrBatch(t, header, h)
		if v2 {
			if bp, err := DecodeBatchPayment(h); err == nil {
				_ = MatchBatch(bp.Accepted, &BatchRequirements{Extra: &BatchExtra{}})
				_ = bp.Payload.Payer()
			}
		}
	})
}

// checkOrBatch holds DecodePaymentHeaderOrBatch to the shapes the gate relies on: a batch
// payment is version 2 and names its scheme; any other payment is what DecodePaymentHeader
// returns; a refusal is a DecodeError.
func checkOrBatch(t *testing.T, header, h string) {
	t.Helper()
	p, b, err := DecodePaymentHeaderOrBatch(header, h)
	var de *DecodeError
	switch {
	case err != nil:
		if !errors.As(err, &de) || de.Reason == "" || p != nil || b != nil {
			t.Fatalf("%s %q: refused with %v (p %v, batch %v)", header, h, err, p, b)
		}
	case b != nil:
		if p != nil || header != HeaderPaymentSignature || b.X402Version != 2 || b.Accepted == nil || b.Accepted.Scheme != SchemeBatchSettlement {
			t.Fatalf("%s %q: a batch payment of version %d, accepted %+v", header, h, b.X402Version, b.Accepted)
		}
	case p == nil:
		t.Fatalf("%s %q: neither a payment nor an error", header, h)
	default:
		want, werr := DecodePaymentHeader(header, h)
		if werr != nil || p.X402Version != want.X402Version || (p.Accepted == nil) != (want.Accepted == nil) ||
			(p.Accepted != nil && p.Accepted.Scheme == SchemeBatchSettlement) {
			t.Fatalf("%s %q: %+v, DecodePaymentHeader %+v %v", header, h, p, want, werr)
		}
	}
}

func TestDecodePaymentHeaderOrBatch(t *testing.T) {
	enc := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	exact := `{"x402Version":2,"accepted":{"scheme":"exact"},"payload":{"signature":"0x00"}}`
	voucher := `{"x402Version":2,"accepted":{"scheme":"batch-settlement","network":"eip155:8453"},"payload":{"type":"voucher","voucher":{"channelId":"0x01","maxClaimableAmount":"2","signature":"0x00"}}}`
	cases := []struct {
		name, header, value string
		batch               bool
		reason              string
	}{
		{"exact", HeaderPaymentSignature, enc(exact), false, ""},
		{"exact naming the other scheme", HeaderPaymentSignature, enc(`{"x402Version":2,"accepted":{"scheme":"exact"},"payload":{},"extensions":{"note":"batch-settlement"}}`), false, ""},
		{"voucher", HeaderPaymentSignature, enc(voucher), true, ""},
		{"voucher, scheme escaped", HeaderPaymentSignature, enc(strings.Replace(voucher, `"batch-settlement"`, `"batch-settlement"`, 1)), true, ""},
		{"voucher in X-PAYMENT", HeaderXPayment, enc(voucher), false, ReasonInvalidVersion},
		{"v1 in PAYMENT-SIGNATURE", HeaderPaymentSignature, enc(`{"x402Version":1,"scheme":"batch-settlement","network":"base"}`), false, ReasonInvalidVersion},
		{"v1", HeaderXPayment, enc(`{"x402Version":1,"scheme":"exact","network":"base"}`), false, ""},
		{"voucher whose payload is no voucher", HeaderPaymentSignature, enc(`{"x402Version":2,"accepted":{"scheme":"batch-settlement"},"payload":{"voucher":7}}`), false, ReasonInvalidPayload},
		{"not base64", HeaderPaymentSignature, "%%%", false, ReasonInvalidPayload},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkOrBatch(t, c.header, c.value)
			p, b, err := DecodePaymentHeaderOrBatch(c.header, c.value)
			var de *DecodeError
			switch {
			case c.reason != "":
				if !errors.As(err, &de) || de.Reason != c.reason {
					t.Fatalf("%v, want %s", err, c.reason)
				}
			case err != nil:
				t.Fatal(err)
			case (b != nil) != c.batch || (p != nil) == c.batch:
				t.Fatalf("batch %v, payment %v; want batch: %v", b, p, c.batch)
			}
		})
	}
}

func TestMatch(t *testing.T) {
	base := PaymentRequirements{Scheme: "exact", Network: "eip155:8453", Amount: "10", Asset: "0xAa", PayTo: "0xBb", MaxTimeoutSeconds: 60, Extra: &Extra{Name: "USD Coin", Version: "2"}}
	cases := []struct {
		name   string
		edit   func(*PaymentRequirements)
		reason string
	}{
		{"equal", func(*PaymentRequirements) {}, ""},
		{"address case", func(r *PaymentRequirements) { r.Asset, r.PayTo = "0xaa", "0xBB" }, ""},
		{"scheme", func(r *PaymentRequirements) { r.Scheme = "upto" }, ReasonInvalidScheme},
		{"network", func(r *PaymentRequirements) { r.Network = "eip155:1" }, ReasonInvalidNetwork},
		{"asset", func(r *PaymentRequirements) { r.Asset = "0xCc" }, ReasonInvalidRequirements},
		{"payTo", func(r *PaymentRequirements) { r.PayTo = "0xCc" }, ReasonRecipientMismatch},
		{"amount", func(r *PaymentRequirements) { r.Amount = "11" }, ReasonValueMismatch},
		{"domain", func(r *PaymentRequirements) { r.Extra = &Extra{Name: "USDC", Version: "2"} }, ReasonMissingDomain},
		{"no domain", func(r *PaymentRequirements) { r.Extra = nil }, ReasonMissingDomain},
		{"timeout", func(r *PaymentRequirements) { r.MaxTimeoutSeconds = 61 }, ReasonInvalidRequirements},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			acc := base
			c.edit(&acc)
			if got := Match(&acc, &base); got != c.reason {
				t.Fatalf("Match = %q, want %q", got, c.reason)
			}
		})
	}
	if Match(nil, &base) != ReasonInvalidPayload {
		t.Fatal("nil accepted matched")
	}
}

func TestChainID(t *testing.T) {
	cases := map[string]uint64{"eip155:8453": 8453, "base": 8453, "base-sepolia": 84532, "eip155:1337": 1337}
	for n, want := range cases {
		if got, err := ChainID(n); err != nil || got != want {
			t.Errorf("ChainID(%q) = %d, %v", n, got, err)
		}
	}
	for _, n := range []string{"solana:abc", "eip155:", "eip155:x", "eip155:0"} {
		if _, err := ChainID(n); err == nil {
			t.Errorf("ChainID(%q) accepted", n)
		}
	}
}
