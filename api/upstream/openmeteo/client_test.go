package openmeteo

import (
	"context"
	"testing"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestForecastAndGeocode(t *testing.T) {
	fs, gs := upstreamtest.New(t), upstreamtest.New(t)
	fs.Handle(upstreamtest.File(t, "testdata/forecast.json"))
	gs.Handle(upstreamtest.File(t, "testdata/geocoding.json"))
	c := New(fs.Client(t, Name), gs.Client(t, GeocodingName))
	f, err := c.Forecast(context.Background(), 47.2184, -1.5536, 3)
	if err != nil || *f.Current.Temperature2m != 8.4 || len(f.Daily.Time) != 3 {
		t.Fatalf("forecast = %+v, %v", f, err)
	}
	if q := fs.Last().URL.Query(); q.Get("forecast_days") != "3" || q.Get("apikey") != "test-key" {
		t.Errorf("query = %v", q)
	}
	p, err := c.Geocode(context.Background(), "Nantes")
	if err != nil || p == nil || p.Latitude != 47.21725 {
		t.Fatalf("place = %+v, %v", p, err)
	}
	gs.Handle(upstreamtest.File(t, "testdata/geocoding_empty.json"))
	if p, err := c.Geocode(context.Background(), "zzzz"); err != nil || p != nil {
		t.Fatalf("no match = %+v, %v", p, err)
	}
}

func TestDailyLimit(t *testing.T) {
	fs, gs := upstreamtest.New(t), upstreamtest.New(t)
	fs.Handle(upstreamtest.FileStatus(t, "testdata/limit.json", 429))
	_, err := New(fs.Client(t, Name), gs.Client(t, GeocodingName)).Forecast(context.Background(), 47.2, -1.5, 3)
	if upstream.StatusOf(err) != 429 {
		t.Fatalf("err = %v, want the upstream's 429", err)
	}
}
