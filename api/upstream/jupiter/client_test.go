package jupiter_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/peage/appliance/api/upstream/jupiter"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

const (
	jup = "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN"
	sol = "So11111111111111111111111111111111111111112"
)

func TestPricesDecodesTheRecordedAnswer(t *testing.T) {
	srv := upstreamtest.New(t)
	srv.Expect("/price/v3", upstreamtest.Query("ids", sol+","+jup), upstreamtest.File(t, filepath.Join("testdata", "price_v3_jup_sol.json")))
	got, err := jupiter.New(srv.Client(t, jupiter.Name)).Prices(context.Background(), []string{sol, jup})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		usd, change float64
		block, dec  int64
	}{
		jup: {0.4056018512541055, 0.5292887924920519, 348004026, 6},
		sol: {147.4789340738336, 1.2907622140620008, 348004023, 9},
	}
	if len(got) != len(want) {
		t.Fatalf("prices %+v", got)
	}
	for mint, w := range want {
		p := got[mint]
		if p.USDPrice.V != w.usd || p.PriceChange24h.V != w.change || p.BlockID.V != w.block || p.Decimals.V != w.dec {
			t.Errorf("%s: %+v, want %+v", mint, p, w)
		}
	}
}
