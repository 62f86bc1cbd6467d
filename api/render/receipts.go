package render

import (
	"context"
	"encoding/json"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/internal/receipt"
)

// Paths of the receipt keys' public forms.
const (
	DIDPath         = "/.well-known/did.json"
	ReceiptKeysPath = "/.well-known/x402-receipt-keys.json"
)

// ReceiptKeyDocs are the handlers of DIDPath (the did:web document through which JWS
// verifiers resolve a kid) and ReceiptKeysPath (every key that verifies, with its EIP-712
// signer and, for a rotated-out key, its last day). Encoded once: keys change only at restart.
func ReceiptKeyDocs(keys *receipt.Keyring) (did, list catalog.Handler) {
	pub := keys.Published()
	didBody, _ := json.Marshal(pub.DIDDocument())
	listBody, _ := json.Marshal(pub)
	serve := func(ct string, b []byte) catalog.Handler {
		return func(context.Context, *catalog.Request) (any, error) {
			return &catalog.Raw{ContentType: ct, Header: map[string]string{"Cache-Control": "public, max-age=300"}, Body: b}, nil
		}
	}
	return serve("application/did+json", didBody), serve("application/json", listBody)
}
