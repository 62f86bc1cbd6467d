package exact

import (
	"encoding/json"
	"testing"

	"github.com/peage/appliance/settle/x402"
)

// FuzzCheck feeds arbitrary payment payloads (decoded from JSON as the facilitator's request
// body is) to the local checks: they must never panic (wrong-length hex, huge or negative
// numbers, missing authorization fields), and every refusal names a reason.
func FuzzCheck(f *testing.F) {
	r := &x402.FacilitatorRequirements{PaymentRequirements: x402.PaymentRequirements{Scheme: "exact", Network: "eip155:8453", Amount: "1000",
		Asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", PayTo: "0x000000000000000000000000000000000000dEaD", MaxTimeoutSeconds: 60,
		Extra: &x402.Extra{Name: "USD Coin", Version: "2"}}}
	acc, _ := json.Marshal(r.PaymentRequirements)
	for _, auth := range []string{
		`{}`,
		`{"from":"0x1","to":"0x2","value":"-1","validAfter":"0","validBefore":"1","nonce":"0x00"}`,
		`{"from":"0x000000000000000000000000000000000000dEaD","to":"0x000000000000000000000000000000000000dEaD","value":"1000","validAfter":"0","validBefore":"99999999999999999999999999999999999999999999999999999999999999999999999999999999","nonce":"0x` + "00" + `"}`,
		`{"from":"0x000000000000000000000000000000000000dEaD","to":"0x000000000000000000000000000000000000dEaD","value":"1000","validAfter":"+1","validBefore":"9999999999","nonce":"0x0000000000000000000000000000000000000000000000000000000000000001"}`,
	} {
		f.Add(`{"x402Version":2,"accepted":` + string(acc) + `,"payload":{"signature":"0x01","authorization":` + auth + `}}`)
		f.Add(`{"x402Version":1,"scheme":"exact","network":"base","payload":{"signature":"0x` + "1b" + `","authorization":` + auth + `}}`)
	}
	f.Add(`{"x402Version":2}`)
	f.Fuzz(func(t *testing.T, body string) {
		var p x402.PaymentPayload
		if json.Unmarshal([]byte(body), &p) != nil {
			return
		}
		v := &Verifier{}
		if pay, bad := v.Check(&p, r); (pay == nil) == (bad == nil) || (bad != nil && bad.Reason == "") {
			t.Fatalf("Check gave %+v and %+v", pay, bad)
		}
	})
}
