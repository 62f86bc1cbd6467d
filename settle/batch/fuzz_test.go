package batch

import (
	"encoding/base64"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/peage/appliance/settle/x402"
)

// FuzzParsePayload feeds arbitrary batch-settlement payment headers through the decoder and
// the strict parsing the facilitator applies (channel config, voucher, deposit, the voucher
// check): nil parts, wrong-length hex, huge amounts and delays must be refusals, never panics.
func FuzzParsePayload(f *testing.F) {
	for _, s := range []string{
		`{"x402Version":2,"accepted":{"scheme":"batch-settlement"},"payload":{"type":"voucher"}}`,
		`{"x402Version":2,"accepted":{"scheme":"batch-settlement"},"payload":{"type":"voucher","channelConfig":{"payer":"0x01","withdrawDelay":18446744073709551615,"salt":"0x"},"voucher":{"channelId":"0x00","maxClaimableAmount":"-1","signature":"0x"}}}`,
		`{"x402Version":2,"accepted":{"scheme":"batch-settlement"},"payload":{"type":"deposit","deposit":{"amount":"340282366920938463463374607431768211456","authorization":{"erc3009Authorization":{"validAfter":"","validBefore":"1e9","salt":"0x` + "ff" + `","signature":"0X"}}}}}`,
		`{"x402Version":2,"accepted":{"scheme":"batch-settlement"},"payload":{"type":"refund","amount":"1"}}`,
	} {
		f.Add(base64.StdEncoding.EncodeToString([]byte(s)))
	}
	f.Fuzz(func(t *testing.T, h string) {
		p, err := x402.DecodeBatchPayment(h)
		if err != nil {
			return
		}
		pl := &p.Payload
		cfg, bad := ParseConfig(pl.ChannelConfig, x402.ReasonBatchVoucherPayload)
		if (cfg == nil) == (bad == nil) {
			t.Fatalf("ParseConfig gave %v and %v", cfg, bad)
		}
		v, bad := ParseVoucher(pl.Voucher)
		if (v == nil) == (bad == nil) {
			t.Fatalf("ParseVoucher gave %v and %v", v, bad)
		}
		if cfg == nil {
			return
		}
		if v != nil {
			_, _ = CheckVoucher(8453, cfg, v)
		}
		d, bad := ParseDeposit(pl.Deposit, cfg, common.Hash{})
		if (d == nil) == (bad == nil) {
			t.Fatalf("ParseDeposit gave %v and %v", d, bad)
		}
	})
}
