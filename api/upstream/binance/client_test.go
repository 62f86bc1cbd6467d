package binance_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/binance"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestPremiumDecodesTheRecordedAnswer(t *testing.T) {
	srv := upstreamtest.New(t)
	srv.Expect("/fapi/v1/premiumIndex", upstreamtest.Query("symbol", "BTCUSDT"), upstreamtest.File(t, filepath.Join("testdata", "premium_index_BTCUSDT.json")))
	got, err := binance.New(srv.Client(t, binance.Name)).Premium(context.Background(), "BTCUSDT")
	if err != nil {
		t.Fatal(err)
	}
	if got.Symbol != "BTCUSDT" || got.LastFundingRate.V != 0.00038246 || got.MarkPrice.V != 11793.63104562 ||
		got.IndexPrice.V != 11781.80495970 || got.NextFundingTime.V != 1597392000000 || got.Time.V != 1597370495002 {
		t.Errorf("premium %+v", got)
	}
}

func TestFundingInfosDecodeTheRecordedAnswer(t *testing.T) {
	srv := upstreamtest.New(t)
	srv.Expect("/fapi/v1/fundingInfo", nil, upstreamtest.File(t, filepath.Join("testdata", "funding_info.json")))
	got, err := binance.New(srv.Client(t, binance.Name)).FundingInfos(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Symbol != "BLZUSDT" || got[0].AdjustedCap.V != 0.025 || got[0].AdjustedFloor.V != -0.025 || got[0].FundingIntervalHours.V != 8 {
		t.Errorf("funding info %+v", got)
	}
}

func TestPremiumRefusals(t *testing.T) {
	for _, c := range []struct {
		name    string
		status  int
		body    string
		unknown bool
	}{
		// Binance's documented error for a symbol it does not list (derived: error code table).
		{"invalid symbol", 400, `{"code":-1121,"msg":"Invalid symbol."}`, true},
		// Another 400 is not a missing symbol.
		{"other 400", 400, `{"code":-1102,"msg":"Mandatory parameter 'symbol' was not sent, was empty/null, or malformed."}`, false},
		// A US address (derived: the documented 451 of restricted locations).
		{"restricted location", 451, `{"code":0,"msg":"Service unavailable from a restricted location according to 'b. Eligibility' in https://www.binance.com/en/terms."}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := upstreamtest.New(t)
			srv.Expect("/fapi/v1/premiumIndex", upstreamtest.Query("symbol", "NOPEUSDT"), upstreamtest.JSON(c.status, c.body))
			_, err := binance.New(srv.Client(t, binance.Name)).Premium(context.Background(), "NOPEUSDT")
			if got := errors.Is(err, binance.ErrUnknownSymbol); got != c.unknown {
				t.Fatalf("err %v: unknown symbol %v, want %v", err, got, c.unknown)
			}
			if !c.unknown && upstream.StatusOf(err) != c.status {
				t.Errorf("err %v: status %d, want %d", err, upstream.StatusOf(err), c.status)
			}
		})
	}
}
