package receipt

import (
	"strings"
	"testing"
	"time"
)

func TestDIDWeb(t *testing.T) {
	for _, c := range []struct{ base, want string }{
		{"https://api.example.com", "did:web:api.example.com"},
		{"http://127.0.0.1:8402", "did:web:127.0.0.1%3A8402"},
		{"https://example.com/peage/", "did:web:example.com:peage"},
	} {
		if got, err := DIDWeb(c.base); err != nil || got != c.want {
			t.Errorf("DIDWeb(%s) = %s, %v; want %s", c.base, got, err, c.want)
		}
	}
}

// A keyring credential is read back as written; a malformed one names its line.
func TestParseKeyring(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	text, err := NewKeyText()
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := Rotate(text, 24*time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, text string
		at         time.Time
		retired    int
		err        string
	}{
		{"fresh", text, now, 0, ""},
		{"rotated, within the overlap", rotated, now.Add(time.Hour), 1, ""},
		{"rotated, past the overlap", rotated, now.Add(25 * time.Hour), 0, ""},
		{"empty", "", now, 0, "no key"},
		{"not hex", "zz", now, 0, "line 1: seed is not hex"},
		{"short", "abcd", now, 0, "line 1: a receipt key seed is 32 bytes"},
		{"current with a date", text + " until=2026-01-01T00:00:00Z", now, 0, "line 1: the first line is the current key"},
		{"retired without a date", text + "\n" + text, now, 0, "line 2: a rotated-out key needs until="},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			kr, err := ParseKeyring(c.text, "https://api.example.com", c.at)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(kr.Retired) != c.retired || !strings.HasPrefix(kr.KID(kr.Current), "did:web:api.example.com#") || !strings.HasPrefix(kr.Current.Address, "0x") {
				t.Fatalf("keyring %+v", kr)
			}
			if kr.CredentialText() != strings.Join(strings.Split(c.text, "\n")[:1+c.retired], "\n") {
				t.Fatalf("credential text not kept: %q", kr.CredentialText())
			}
		})
	}
}

// An EIP-712 signature recovers the signer's address; a JWS verifies with the key its kid
// names in the published form.
func TestSignAndVerifyBothFormats(t *testing.T) {
	text, _ := NewKeyText()
	kr, err := ParseKeyring(text, "http://127.0.0.1:1", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	pub := kr.Published()
	terms := OfferTerms{Scheme: "exact", Network: "eip155:8453", Asset: "0xA", PayTo: "0xB", Amount: "10000"}
	for _, f := range []string{FormatEIP712, FormatJWS} {
		o, err := kr.Offer(f, "http://127.0.0.1:1/v1/x", terms, time.Now().Add(time.Minute).Unix())
		if err != nil {
			t.Fatal(err)
		}
		p, err := pub.VerifyOffer(o, time.Now())
		if err != nil || MatchOffer(p, "http://127.0.0.1:1/v1/x", terms) != "" {
			t.Fatalf("%s offer: %v %+v", f, err, p)
		}
		r, err := kr.Receipt(f, ReceiptPayload{Network: "eip155:8453", ResourceURL: "http://127.0.0.1:1/v1/x", Payer: "0xC", IssuedAt: 1})
		if err != nil {
			t.Fatal(err)
		}
		if got, _, err := pub.VerifyReceipt(r, time.Now()); err != nil || got.Payer != "0xC" {
			t.Fatalf("%s receipt: %v %+v", f, err, got)
		}
	}
}
