package honeypot

import (
	"context"
	"testing"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

// TestIsHoneypotRecordings decodes honeypot.is's recorded answers (testdata/PROVENANCE) and its
// recorded 404 of a token without a pair.
func TestIsHoneypotRecordings(t *testing.T) {
	const usdt, cndl, nopair = "0xdAC17F958D2ee523a2206206994597C13D831ec7", "0x6EFb32bc7893b793603E39643D86594CE3638157", "0x0000000000000000000000000000000000000001"
	s := upstreamtest.New(t)
	s.Expect("/v2/IsHoneypot", upstreamtest.Query("address", usdt, "chainID", "1"), upstreamtest.File(t, "testdata/is_honeypot_1_usdt.json"))
	s.Expect("/v2/IsHoneypot", upstreamtest.Query("address", cndl, "chainID", "1"), upstreamtest.File(t, "testdata/is_honeypot_1_cndl.json"))
	// The body is the project's ResponseError constant (same file as the recordings).
	s.Expect("/v2/IsHoneypot", upstreamtest.Query("address", nopair, "chainID", "1"), upstreamtest.JSON(404, `{
    "code": 404,
    "error": "No pairs found"
}`))
	c := New(s.Client(t, Name))
	ctx := context.Background()

	tests := []struct {
		address, symbol      string
		holders              int64
		buyTax, sellTax, liq float64
		created              int64
		pair                 string
		proxy                bool
	}{
		{usdt, "USDT", 6354736, 0, 0, 119074507.63794056, 1620232628, "Uniswap V3: WETH-USDT", false},
		{cndl, "CNDL", 1212, 4.999999999999993, 4.979118170850721, 141615.43175887625, 1715100863, "Uniswap V2: CNDL-WETH", false},
	}
	for _, tt := range tests {
		t.Run(tt.symbol, func(t *testing.T) {
			r, err := c.IsHoneypot(ctx, "1", tt.address)
			if err != nil {
				t.Fatal(err)
			}
			if r.Token.Symbol != tt.symbol || r.Token.TotalHolders.V != tt.holders || !r.SimulationSuccess ||
				r.HoneypotResult == nil || r.HoneypotResult.IsHoneypot || r.Summary.Risk != "low" || r.Summary.RiskLevel.V != 1 {
				t.Errorf("token %+v summary %+v honeypot %+v", r.Token, r.Summary, r.HoneypotResult)
			}
			if s := r.SimulationResult; s == nil || *s.BuyTax.Ptr() != tt.buyTax || *s.SellTax.Ptr() != tt.sellTax {
				t.Errorf("simulation %+v", s)
			}
			if p := r.Pair; p == nil || p.Pair.Name != tt.pair || *p.Liquidity.Ptr() != tt.liq || p.CreatedAtTimestamp.V != tt.created {
				t.Errorf("pair %+v", p)
			}
			if cc := r.ContractCode; cc == nil || !cc.OpenSource || cc.IsProxy != tt.proxy {
				t.Errorf("contract code %+v", cc)
			}
		})
	}
	if _, err := c.IsHoneypot(ctx, "1", nopair); upstream.StatusOf(err) != 404 {
		t.Errorf("no pair: %v, want the upstream's 404", err)
	}
}
