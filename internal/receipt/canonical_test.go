package receipt

import (
	"bytes"
	"encoding/json"
	"testing"
)

// genericCanonical is the extension's canonical JSON as offer-receipt/signing.ts defines it:
// keys sorted, no white space, no HTML escaping, numbers as written.
func genericCanonical(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(tree); err != nil { // maps encode with sorted keys
		t.Fatal(err)
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n"))
}

func TestCanonicalByHand(t *testing.T) {
	tricky := []string{"", "https://api.example.com/v1/x?a=1&b=<2>", "quote \" back \\ slash", "tab\tnew\nline\x01",
		"é ü 東京 🚀", "line\u2028sep\u2029", "bad \xff utf8", "0xAbC"}
	for _, s := range tricky {
		offer := &OfferPayload{Version: 1, ResourceURL: s, Scheme: "exact", Network: "eip155:8453", Asset: s,
			PayTo: "0xabc", Amount: "5000", ValidUntil: 1_800_000_000}
		if got, want := offer.canonical(), genericCanonical(t, offer); !bytes.Equal(got, want) {
			t.Errorf("offer %q:\n got %s\nwant %s", s, got, want)
		}
		for _, tx := range []string{"", "0x" + s} {
			r := &ReceiptPayload{Version: 1, Network: "eip155:8453", ResourceURL: s, Payer: s, IssuedAt: 1_800_000_000, Transaction: tx}
			claims := map[string]any{"version": r.Version, "network": r.Network, "resourceUrl": r.ResourceURL,
				"payer": r.Payer, "issuedAt": r.IssuedAt}
			if tx != "" {
				claims["transaction"] = tx
			}
			if got, want := r.jwsCanonical(), genericCanonical(t, claims); !bytes.Equal(got, want) {
				t.Errorf("receipt %q tx %q:\n got %s\nwant %s", s, tx, got, want)
			}
		}
		for _, sub := range []*Subject{nil, {Kind: "proxy-package", KeySHA256: "ab", Terms: s}, {Kind: "v1-inbox", ID: s}, {Kind: s}} {
			for _, tx := range []string{"", "0xdead"} {
				st := &Statement{Version: 1, Receipt: "aa", ResourceURL: s, Network: "eip155:8453", Scheme: "exact",
					Amount: "5000", Payer: "0xabc", Nonce: s, Settlement: Pending, Transaction: tx, IssuedAt: 7,
					Request:  StatementRequest{Method: "GET", Path: s, ParamsSHA256: "bb"},
					Response: StatementResponse{Status: 200, ContentType: "application/json; charset=utf-8", Length: 12, SHA256: "cc"},
					Subject:  sub}
				if got, want := st.canonical(), genericCanonical(t, st); !bytes.Equal(got, want) {
					t.Errorf("statement %q subject %+v tx %q:\n got %s\nwant %s", s, sub, tx, got, want)
				}
			}
		}
	}
}
