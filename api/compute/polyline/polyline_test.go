package polyline

import "testing"

// The vectors are the worked examples of Google's algorithm page
// (developers.google.com/maps/documentation/utilities/polylinealgorithm): the three-point line
// and the single value -179.9832104 ("`~oia@"), here as a latitude beside a zero longitude.
func TestEncode(t *testing.T) {
	tests := []struct {
		name   string
		points [][2]float64
		want   string
	}{
		{"google example", [][2]float64{{-120.2, 38.5}, {-120.95, 40.7}, {-126.453, 43.252}}, "_p~iF~ps|U_ulLnnqC_mqNvxq`@"},
		{"one negative value", [][2]float64{{0, -179.9832104}}, "`~oia@?"},
		{"empty", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Encode(tt.points); got != tt.want {
				t.Errorf("Encode = %q, want %q", got, tt.want)
			}
		})
	}
}
