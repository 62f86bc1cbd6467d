package bybit_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/bybit"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestLinearDecodesTheRecordedAnswer(t *testing.T) {
	srv := upstreamtest.New(t)
	srv.Expect("/v5/market/tickers", upstreamtest.Query("category", "linear", "symbol", "BTCUSDT"),
		upstreamtest.File(t, filepath.Join("testdata", "tickers_linear_BTCUSDT.json")))
	got, err := bybit.New(srv.Client(t, bybit.Name)).Linear(context.Background(), "BTCUSDT")
	if err != nil {
		t.Fatal(err)
	}
	if got.Symbol != "BTCUSDT" || got.FundingRate.V != 0.00001938 || got.NextFundingTime.V != 1762243200000 ||
		got.FundingIntervalHour.V != 8 || got.FundingCap.V != 0.005 || got.MarkPrice.V != 107084.00 || got.IndexPrice.V != 107135.27 {
		t.Errorf("ticker %+v", got)
	}
}

func TestLinearRefusals(t *testing.T) {
	for _, c := range []struct {
		name    string
		body    string
		unknown bool
		reason  string
	}{
		// Derived from Bybit's error-code table (10001: request parameter error), the shape of
		// the recorded ticker answer.
		{"symbol invalid", `{"retCode":10001,"retMsg":"params error: symbol invalid","result":{},"retExtInfo":{},"time":1762220791908}`, true, ""},
		{"empty list", `{"retCode":0,"retMsg":"OK","result":{"category":"linear","list":[]},"retExtInfo":{},"time":1762220791908}`, true, ""},
		// 10006: too many visits (derived from the same table).
		{"rate limited", `{"retCode":10006,"retMsg":"Too many visits!","result":{},"retExtInfo":{},"time":1762220791908}`, false, "retCode 10006"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := upstreamtest.New(t)
			srv.Expect("/v5/market/tickers", upstreamtest.Query("category", "linear", "symbol", "NOPEUSDT"), upstreamtest.JSON(200, c.body))
			_, err := bybit.New(srv.Client(t, bybit.Name)).Linear(context.Background(), "NOPEUSDT")
			if got := errors.Is(err, bybit.ErrUnknownSymbol); got != c.unknown {
				t.Fatalf("err %v: unknown symbol %v, want %v", err, got, c.unknown)
			}
			var ue *upstream.Error
			if c.reason != "" && (!errors.As(err, &ue) || ue.Reason != c.reason) {
				t.Errorf("err %v, want an upstream error with reason %q", err, c.reason)
			}
		})
	}
}
