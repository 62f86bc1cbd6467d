package server

import (
	"strconv"
	"time"

	"github.com/peage/appliance/appliance/obs"
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
	m.requests.Inc(route, strconv.Itoa(status))
	m.latency.Observe(d.Seconds(), route)
}
