package server

import (
	"strconv"
	"time"

	"github.com/peage/appliance/internal/obs"
)

type metrics struct {
	requests *obs.Counter
	latency  *obs.Histogram
	cache    *obs.Counter
}

func newMetrics(r *obs.Registry) *metrics {
	return &metrics{
		requests: r.Counter("peage_http_requests_total", "API requests by route and status.", "route", "status"),
		latency: r.Histogram("peage_http_request_seconds", "API request latency by route.", "route",
			[]float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30}),
		cache: r.Counter("peage_cache_lookups_total", "Result cache lookups by route and outcome.", "route", "outcome"),
	}
}

func (m *metrics) observe(route string, status int, d time.Duration) {
	m.requests.Inc(route, statusText(status))
	m.latency.Observe(d.Seconds(), route)
}

// statusTexts spares a conversion per request for the statuses the API answers.
var statusTexts = func() map[int]string {
	m := map[int]string{}
	for _, s := range []int{200, 202, 204, 400, 402, 403, 404, 405, 409, 410, 413, 429, 431, 500, 502, 503, 504} {
		m[s] = strconv.Itoa(s)
	}
	return m
}()

func statusText(s int) string {
	if t, ok := statusTexts[s]; ok {
		return t
	}
	return strconv.Itoa(s)
}
