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

func FuzzDecodePayment(f *testing.F) {
	f.Add(base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"accepted":{"scheme":"exact"},"payload":{"signature":"0x"}}`)))
	f.Add(base64.StdEncoding.EncodeToString([]byte(`{"x402Version":1,"scheme":"exact","network":"base","payload":{}}`)))
	f.Add("")
	f.Add("====")
	f.Fuzz(func(t *testing.T, h string) {
		p, err := DecodePayment(h)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v is not ErrMalformed", err)
			}
			return
		}
		if p.X402Version != 1 && p.X402Version != 2 {
			t.Fatalf("accepted version %d", p.X402Version)
		}
		if p.X402Version == 2 && p.Accepted == nil {
			t.Fatal("accepted a v2 payload without accepted")
		}
		if _, err := Encode(p); err != nil {
			t.Fatalf("decoded payload does not encode: %v", err)
		}
	})
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
