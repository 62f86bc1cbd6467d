package openmeteo

import (
	"context"
	"net/url"
	"testing"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

// The key is a query parameter: every expected request carries the test key.
func forecastQuery(lat, lon string) url.Values {
	return upstreamtest.Query("latitude", lat, "longitude", lon, "current", "temperature_2m,wind_speed_10m,weather_code",
		"daily", "temperature_2m_max,temperature_2m_min,weather_code,precipitation_sum", "timezone", "auto", "forecast_days", "3", "apikey", "test-key")
}

func geocodeQuery(name string) url.Values {
	return upstreamtest.Query("name", name, "count", "1", "language", "fr", "format", "json", "apikey", "test-key")
}

func TestForecastAndGeocode(t *testing.T) {
	fs, gs := upstreamtest.New(t), upstreamtest.New(t)
	fs.Expect("/v1/forecast", forecastQuery("48.85341", "2.3488"), upstreamtest.File(t, "testdata/forecast_paris.json"))
	gs.Expect("/v1/search", geocodeQuery("Enschede"), upstreamtest.File(t, "testdata/geocoding.json"))
	gs.Expect("/v1/search", geocodeQuery("Paris"), upstreamtest.File(t, "testdata/geocoding_paris.json"))
	gs.Expect("/v1/search", geocodeQuery("zzzz"), upstreamtest.File(t, "testdata/geocoding_empty.json"))
	c := New(fs.Client(t, Name), gs.Client(t, GeocodingName))
	f, err := c.Forecast(context.Background(), 48.85341, 2.3488, 3)
	if err != nil || *f.Current.Temperature2m != 16.9 || *f.Current.WindSpeed10m != 5.4 || *f.Current.WeatherCode != 2 || len(f.Daily.Time) != 3 ||
		*f.Daily.PrecipitationSum[2] != 0.3 || *f.Daily.WeatherCode[2] != 80 || f.Timezone != "Europe/Paris" {
		t.Fatalf("forecast = %+v, %v", f, err)
	}
	p, err := c.Geocode(context.Background(), "Enschede")
	if err != nil || p == nil || p.Latitude != 52.21833 {
		t.Fatalf("place = %+v, %v", p, err)
	}
	// The recording holds five places named Paris: the first, the French capital, is the one kept.
	if p, err := c.Geocode(context.Background(), "Paris"); err != nil || p == nil || p.CountryCode != "FR" || p.Admin1 != "Île-de-France" || p.Latitude != 48.85341 {
		t.Fatalf("paris = %+v, %v", p, err)
	}
	if p, err := c.Geocode(context.Background(), "zzzz"); err != nil || p != nil {
		t.Fatalf("no match = %+v, %v", p, err)
	}
}

func TestDailyLimit(t *testing.T) {
	fs, gs := upstreamtest.New(t), upstreamtest.New(t)
	fs.Expect("/v1/forecast", forecastQuery("47.2", "-1.5"), upstreamtest.FileStatus(t, "testdata/limit.json", 429))
	_, err := New(fs.Client(t, Name), gs.Client(t, GeocodingName)).Forecast(context.Background(), 47.2, -1.5, 3)
	if upstream.StatusOf(err) != 429 {
		t.Fatalf("err = %v, want the upstream's 429", err)
	}
}
