// Package openmeteo is the connector of Open-Meteo: the forecast API and its geocoding API
// (two registry rows, "open-meteo" and "open-meteo-geocoding", one provider and licence).
package openmeteo

import (
	"context"
	"net/url"
	"strconv"

	"github.com/peage/appliance/api/upstream/httpc"
)

// Names in the registry.
const (
	Name          = "open-meteo"
	GeocodingName = "open-meteo-geocoding"
)

// Client calls /v1/forecast and, through geo, /v1/search.
type Client struct{ forecast, geo *httpc.Client }

// New takes the forecast client and the geocoding client.
func New(forecast, geo *httpc.Client) *Client { return &Client{forecast: forecast, geo: geo} }

// Ready fails until a subscription key is configured: the keyless tier is non-commercial.
func (c *Client) Ready() error {
	if err := c.forecast.Ready(); err != nil {
		return err
	}
	return c.geo.Ready()
}

// Forecast is the /v1/forecast answer.
type Forecast struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Timezone  string  `json:"timezone"`
	Current   struct {
		Time          string   `json:"time"`
		Temperature2m *float64 `json:"temperature_2m"`
		WindSpeed10m  *float64 `json:"wind_speed_10m"`
		WeatherCode   *int     `json:"weather_code"`
	} `json:"current"`
	Daily struct {
		Time             []string   `json:"time"`
		Temperature2mMax []*float64 `json:"temperature_2m_max"`
		Temperature2mMin []*float64 `json:"temperature_2m_min"`
		WeatherCode      []*int     `json:"weather_code"`
		PrecipitationSum []*float64 `json:"precipitation_sum"`
	} `json:"daily"`
}

// Forecast reads current conditions and days of daily forecast at a point, in Paris time.
func (c *Client) Forecast(ctx context.Context, lat, lon float64, days int) (*Forecast, error) {
	v := url.Values{
		"latitude":      {strconv.FormatFloat(lat, 'f', -1, 64)},
		"longitude":     {strconv.FormatFloat(lon, 'f', -1, 64)},
		"current":       {"temperature_2m,wind_speed_10m,weather_code"},
		"daily":         {"temperature_2m_max,temperature_2m_min,weather_code,precipitation_sum"},
		"timezone":      {"auto"},
		"forecast_days": {strconv.Itoa(days)},
	}
	var out Forecast
	if err := c.forecast.GetJSON(ctx, "/v1/forecast", v, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Place is a geocoding result.
type Place struct {
	Name        string  `json:"name"`
	Latitude    float64 `json:"latitude"`
	Longitude   float64 `json:"longitude"`
	CountryCode string  `json:"country_code"`
	Admin1      string  `json:"admin1"`
	Timezone    string  `json:"timezone"`
}

// Geocode finds the best place named name; nil when nothing matches (the results key is
// then absent from the answer).
func (c *Client) Geocode(ctx context.Context, name string) (*Place, error) {
	var out struct {
		Results []Place `json:"results"`
	}
	if err := c.geo.GetJSON(ctx, "/v1/search", url.Values{"name": {name}, "count": {"1"}, "language": {"fr"}, "format": {"json"}}, &out); err != nil {
		return nil, err
	}
	if len(out.Results) == 0 {
		return nil, nil
	}
	return &out.Results[0], nil
}
