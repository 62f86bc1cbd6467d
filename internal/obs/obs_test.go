package obs

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestSamplesReadWhatMetricsShows reads each kind of metric back by name, with the label values
// /metrics prints.
func TestSamplesReadWhatMetricsShows(t *testing.T) {
	r := &Registry{}
	c := r.Counter("calls_total", "calls", "route", "status")
	c.Inc("fr.tva", "200")
	c.Add(2, "fr.tva", "402")
	r.GaugeFunc("pool", "pool", func() map[string]float64 { return map[string]float64{"size": 3, "busy": 1} }, "stat")
	r.GaugeFunc("plain", "plain", func() map[string]float64 { return map[string]float64{"": 7} })
	h := r.Histogram("latency", "latency", "route", []float64{1})
	h.Observe(0.5, "fr.tva")
	h.Observe(2, "fr.tva")
	cases := []struct {
		name string
		want []string // "labels=value", sorted
	}{
		{"calls_total", []string{"route=fr.tva,status=200=1", "route=fr.tva,status=402=2"}},
		{"pool", []string{"stat=busy=1", "stat=size=3"}},
		{"plain", []string{"=7"}},
		{"latency", []string{"route=fr.tva=2"}},
		{"missing", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, s := range r.Samples(tc.name) {
				var parts []string
				for k, v := range s.Labels {
					parts = append(parts, k+"="+v)
				}
				slices.Sort(parts)
				got = append(got, strings.Join(parts, ",")+"="+fmtFloat(s.Value))
			}
			slices.Sort(got)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Samples(%q) = %v, want %v", tc.name, got, tc.want)
			}
		})
	}
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
