package receipt

import (
	"crypto/ed25519"
	"testing"
	"time"
)

func benchKeys(b *testing.B) *Keyring {
	text, _ := NewKeyText()
	kr, err := ParseKeyring(text, "https://bench.example", time.Now())
	if err != nil {
		b.Fatal(err)
	}
	return kr
}

func BenchmarkReceiptEIP712(b *testing.B) {
	kr := benchKeys(b)
	for b.Loop() {
		_, _ = kr.Receipt(FormatEIP712, ReceiptPayload{Network: "eip155:8453", ResourceURL: "https://x/v1/x", Payer: "0xabc", IssuedAt: 1})
	}
}

func BenchmarkReceiptJWS(b *testing.B) {
	kr := benchKeys(b)
	for b.Loop() {
		_, _ = kr.Receipt(FormatJWS, ReceiptPayload{Network: "eip155:8453", ResourceURL: "https://x/v1/x", Payer: "0xabc", IssuedAt: 1})
	}
}

func BenchmarkStatement(b *testing.B) {
	kr := benchKeys(b)
	r, _ := kr.Receipt(FormatJWS, ReceiptPayload{Network: "eip155:8453", ResourceURL: "https://x/v1/x", Payer: "0xabc", IssuedAt: 1})
	for b.Loop() {
		_, _ = kr.Statement(r, Statement{ResourceURL: "https://x/v1/x"})
	}
}

func BenchmarkEd25519(b *testing.B) {
	kr := benchKeys(b)
	m := make([]byte, 300)
	for b.Loop() {
		ed25519.Sign(kr.Current.ed, m)
	}
}

func BenchmarkCanonical(b *testing.B) {
	for b.Loop() {
		s := Statement{ResourceURL: "https://x/v1/x"}
		_ = s.canonical()
	}
}

// BenchmarkReceiptAndStatement is what one paid answer signs, serially: its receipt, then the
// delivery statement naming it.
func BenchmarkReceiptAndStatement(b *testing.B) {
	for _, format := range []string{FormatEIP712, FormatJWS} {
		b.Run(format, func(b *testing.B) {
			kr := benchKeys(b)
			for b.Loop() {
				r, _ := kr.Receipt(format, ReceiptPayload{Network: "eip155:8453", ResourceURL: "https://x/v1/x", Payer: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", IssuedAt: 1})
				_, _ = kr.Statement(r, Statement{ResourceURL: "https://x/v1/x", Network: "eip155:8453", Scheme: "exact", Amount: "1000",
					Payer: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", Nonce: "0x01", Settlement: Pending, IssuedAt: 1,
					Request:  StatementRequest{Method: "GET", Path: "/v1/x", ParamsSHA256: "ab"},
					Response: StatementResponse{Status: 200, ContentType: "application/json", Length: 100, SHA256: "cd"}})
			}
		})
	}
}
