package hyperliquid_test

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/peage/appliance/api/upstream/hyperliquid"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

// answer serves file to POST /info when the body is exactly wantBody.
func answer(t *testing.T, srv *upstreamtest.Server, wantBody, file string) {
	t.Helper()
	rec := upstreamtest.File(t, filepath.Join("testdata", file))
	srv.Expect("/info", nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || string(b) != wantBody {
			t.Errorf("request %s %s, want POST %s", r.Method, b, wantBody)
			http.Error(w, "unexpected body", http.StatusTeapot)
			return
		}
		rec.ServeHTTP(w, r)
	}))
}

func TestMetaAndAssetCtxsOfTheStockDex(t *testing.T) {
	srv := upstreamtest.New(t)
	answer(t, srv, `{"type":"metaAndAssetCtxs","dex":"xyz"}`, "meta_and_asset_ctxs_xyz.json")
	got, err := hyperliquid.New(srv.Client(t, hyperliquid.Name)).MetaAndAssetCtxs(context.Background(), "xyz")
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		name                      string
		maxLev                    int64
		mark, oracle, funding, vl float64
		mid, premium              bool // valid
	}
	want := []row{
		{"xyz:XYZ100", 20, 25451.0, 25372.0, 0.0002110251, 462.9758, true, true},
		{"xyz:TSLA", 10, 465.13, 450.78, 0, 0, true, false},         // premium null
		{"xyz:NVDA", 10, 177.06, 188.15, 0, 2192.853, false, false}, // midPx and premium null
	}
	if len(got) != len(want) {
		t.Fatalf("%d assets: %+v", len(got), got)
	}
	for i, w := range want {
		a := got[i]
		if a.Name != w.name || a.MaxLeverage != w.maxLev || a.MarkPx.V != w.mark || a.OraclePx.V != w.oracle ||
			a.Funding.V != w.funding || !a.Funding.Valid || a.DayNtlVlm.V != w.vl || a.MidPx.Valid != w.mid || a.Premium.Valid != w.premium {
			t.Errorf("asset %d: %+v, want %+v", i, a, w)
		}
	}
}

func TestMetaAndAssetCtxsOfTheMainDex(t *testing.T) {
	srv := upstreamtest.New(t)
	answer(t, srv, `{"type":"metaAndAssetCtxs"}`, "meta_and_asset_ctxs.json")
	got, err := hyperliquid.New(srv.Client(t, hyperliquid.Name)).MetaAndAssetCtxs(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || got[0].Name == "" || !got[0].MarkPx.Valid {
		t.Fatalf("assets %+v", got)
	}
}

func TestPredictedFundingsDecodeTheRecordedAnswer(t *testing.T) {
	srv := upstreamtest.New(t)
	answer(t, srv, `{"type":"predictedFundings"}`, "predicted_fundings.json")
	got, err := hyperliquid.New(srv.Client(t, hyperliquid.Name)).PredictedFundings(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	avax := got["AVAX"]
	if len(got) != 1 || len(avax) != 3 {
		t.Fatalf("predicted fundings %+v", got)
	}
	for venue, want := range map[string]struct {
		rate float64
		next int64
	}{
		hyperliquid.VenueBinance:     {0.0001, 1733961600000},
		hyperliquid.VenueHyperliquid: {0.0000125, 1733958000000},
		hyperliquid.VenueBybit:       {0.0001, 1733961600000},
	} {
		f := avax[venue]
		if f.FundingRate.V != want.rate || f.NextFundingTime.V != want.next || f.FundingIntervalHours.Valid {
			t.Errorf("%s: %+v, want rate %v next %d and no interval", venue, f, want.rate, want.next)
		}
	}
}

// A venue that does not list a coin answers null: the coin has no entry for it (shape derived
// from the recorded answer).
func TestPredictedFundingsSkipNullVenues(t *testing.T) {
	srv := upstreamtest.New(t)
	srv.Expect("/info", nil, upstreamtest.JSON(200, `[["HYPE",[["BinPerp",null],["HlPerp",{"fundingRate":"0.0000125","nextFundingTime":1733958000000}],["BybitPerp",null]]]]`))
	got, err := hyperliquid.New(srv.Client(t, hyperliquid.Name)).PredictedFundings(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got["HYPE"][hyperliquid.VenueBinance]; ok || len(got["HYPE"]) != 1 {
		t.Errorf("HYPE venues %+v, want Hyperliquid's only", got["HYPE"])
	}
}
