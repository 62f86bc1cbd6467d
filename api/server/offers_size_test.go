package server_test

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/server"
	"github.com/peage/appliance/internal/receipt"
)

// TestOffersNeverCutTheDeclaration: signed offers (issue 29) add about 470 header bytes per
// scheme; the Bazaar declaration of every paid route stays what a box without offers declares,
// with batch-settlement offered too, rather than being cut to fit the header's cap.
func TestOffersNeverCutTheDeclaration(t *testing.T) {
	declarations := func(keys *receipt.Keyring) map[string]any {
		pay := paywall.DefaultConfig()
		pay.PayTo = apitest.TestPayTo
		pay.ReceiverAuthorizer = "0x00000000000000000000000000000000000000aa"
		cat := boundCatalog(t)
		h := apitest.Start(t, cat, apitest.Options{Pay: pay, Receipts: keys, Configure: func(c *server.Config) { c.BaseURL = publicBase }})
		out := map[string]any{}
		for _, e := range cat.Entries() {
			if e.Kind != catalog.Paid {
				continue
			}
			resp, body := call(t, h, e.Method, e.Path, e.Example)
			raw, err := base64.StdEncoding.DecodeString(resp.Header.Get("Payment-Required"))
			var v map[string]any
			if resp.StatusCode != 402 || err != nil || json.Unmarshal(raw, &v) != nil {
				t.Fatalf("%s: %d %s", e.ID, resp.StatusCode, body)
			}
			if (keys != nil) != (apitest.At(v, "extensions", "offer-receipt") != nil) {
				t.Fatalf("%s: offers present %v with keys %v", e.ID, keys == nil, keys != nil)
			}
			out[e.ID] = apitest.At(v, "extensions", "bazaar")
		}
		return out
	}
	keys := apitest.ReceiptKeys(t, publicBase)
	without, with := declarations(nil), declarations(keys)
	for id, d := range without {
		if !reflect.DeepEqual(d, with[id]) {
			t.Errorf("%s: the declaration changes when the 402 carries signed offers", id)
		}
	}
}
