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

// TestExposition: /metrics prints each histogram bucket with every observation at or under
// its bound (Prometheus's cumulative le), and +Inf with all of them; a counter's series keeps
// its label values whatever their length.
func TestExposition(t *testing.T) {
	r := &Registry{}
	h := r.Histogram("latency", "latency", "route", []float64{0.01, 0.1, 1})
	for _, v := range []float64{0.001, 0.005, 0.05, 0.5, 0.5, 5} {
		h.Observe(v, "fr.tva")
	}
	c := r.Counter("calls_total", "calls", "route", "status")
	long := strings.Repeat("r", 200) // longer than the counter's key buffer
	c.Inc(long, "402")
	c.Inc(long, "402")
	c.Inc("fr.tva", "200")
	var b strings.Builder
	r.WriteText(&b)
	for _, line := range []string{
		`latency_bucket{route="fr.tva",le="0.01"} 2`,
		`latency_bucket{route="fr.tva",le="0.1"} 3`,
		`latency_bucket{route="fr.tva",le="1"} 5`,
		`latency_bucket{route="fr.tva",le="+Inf"} 6`,
		`latency_count{route="fr.tva"} 6`,
		`calls_total{route="` + long + `",status="402"} 2`,
		`calls_total{route="fr.tva",status="200"} 1`,
	} {
		if !strings.Contains(b.String(), line+"\n") {
			t.Errorf("no line %s in\n%s", line, b.String())
		}
	}
}
