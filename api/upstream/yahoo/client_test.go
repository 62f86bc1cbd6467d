package yahoo_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/upstreamtest"
	"github.com/peage/appliance/api/upstream/yahoo"
)

// chartQuery is what Chart asks for every symbol.
var chartQuery = upstreamtest.Query("interval", "1m", "range", "1d", "includePrePost", "true")

func TestChartDecodesRecordedAnswers(t *testing.T) {
	// Both recordings (testdata/PROVENANCE) are of AAPL at the same moment (2025-02-20):
	// the same meta, one with 49 daily points, one (a weekend minute chart) with none.
	tests := []struct {
		file       string
		prevClose  float64
		last       float64
		lastAt     int64
		wantNoLast bool
	}{
		{file: "chart_AAPL_1d.json", prevClose: 124.808, last: 118.69000244140625, lastAt: 1604673000},
		{file: "chart_AAPL_1m_weekend.json", prevClose: 236, wantNoLast: true},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			srv := upstreamtest.New(t)
			srv.Expect("/v8/finance/chart/AAPL", chartQuery, upstreamtest.File(t, filepath.Join("testdata", tt.file)))
			q, err := yahoo.New(srv.Client(t, yahoo.Name)).Chart(context.Background(), "AAPL")
			if err != nil {
				t.Fatal(err)
			}
			if q.Symbol != "AAPL" || q.Currency != "USD" || q.RegularMarketPrice.V != 244.87 || q.RegularMarketTime.V != 1739998801 {
				t.Errorf("meta %+v", q)
			}
			if q.ChartPreviousClose.V != tt.prevClose {
				t.Errorf("chartPreviousClose %v, want %v", q.ChartPreviousClose.V, tt.prevClose)
			}
			if tt.wantNoLast {
				if q.Last.Valid || q.LastAt != 0 {
					t.Errorf("last %v at %d, want none", q.Last, q.LastAt)
				}
			} else if !q.Last.Valid || q.Last.V != tt.last || q.LastAt != tt.lastAt {
				t.Errorf("last %v at %d, want %v at %d", q.Last.V, q.LastAt, tt.last, tt.lastAt)
			}
			// The recorded sessions of 2025-02-20 (EST): pre 09:00, regular 14:30, post 21:00 UTC.
			for at, want := range map[int64]string{
				1740041999: "closed", 1740042000: "pre", 1740061799: "pre", 1740061800: "regular",
				1740085199: "regular", 1740085200: "post", 1740099599: "post", 1740099600: "closed",
			} {
				if got := q.Session(at); got != want {
					t.Errorf("Session(%d) = %s, want %s", at, got, want)
				}
			}
		})
	}
}

func TestChartOfAnUnknownSymbolIs404(t *testing.T) {
	// Yahoo's answer to an unknown symbol, derived: {"chart":{"result":null,"error":{...}}}
	// with the code and description yahoo-finance2 reports for it.
	srv := upstreamtest.New(t)
	srv.Expect("/v8/finance/chart/NOPE", chartQuery, upstreamtest.JSON(404, `{"chart":{"result":null,"error":{"code":"Not Found","description":"No data found, symbol may be delisted"}}}`))
	_, err := yahoo.New(srv.Client(t, yahoo.Name)).Chart(context.Background(), "NOPE")
	var ue *upstream.Error
	if !errors.As(err, &ue) || ue.Status != 404 {
		t.Fatalf("error %v", err)
	}
}
