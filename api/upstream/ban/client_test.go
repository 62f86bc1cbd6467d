package ban

import (
	"context"
	"testing"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestSearch(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect("/geocodage/search", upstreamtest.Query("q", "rue jules ferry 64110 mazeres-lezons", "limit", "5"), upstreamtest.File(t, "testdata/search_mazeres.json"))
	r, err := New(s.Client(t, Name)).Search(context.Background(), "rue jules ferry 64110 mazeres-lezons", 5)
	if err != nil || len(r.Features) != 1 || r.Features[0].Geometry.Coordinates[1] != 43.277531 || r.Features[0].Properties.Citycode != "64373" {
		t.Fatalf("search = %+v, %v", r, err)
	}
}

// TestReverse replays two recorded /reverse answers: the Géoplateforme's (2026) and the former
// api-adresse host's (no banId, a "center" member), which share the GeoJSON shape read here.
func TestReverse(t *testing.T) {
	tests := []struct {
		file       string
		lat, lon   string
		latF, lonF float64
		features   int
		label      string
		citycode   string
		distance   float64
	}{
		// The street comes first in the answer; the house number at the same distance wins.
		{"testdata/reverse.json", "48.357", "2.37", 48.357, 2.37, 2, "23 Grande Rue 91720 Prunay-sur-Essonne", "91507", 149},
		{"testdata/reverse_voiron.json", "45.3616477", "5.593008", 45.3616477, 5.593008, 5, "14 Rue Alban et Émilienne Fagot 38500 Voiron", "38563", 26},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			s := upstreamtest.New(t)
			s.Expect("/geocodage/reverse", upstreamtest.Query("lat", tt.lat, "lon", tt.lon, "limit", "5"), upstreamtest.File(t, tt.file))
			rv, err := New(s.Client(t, Name)).Reverse(context.Background(), tt.latF, tt.lonF)
			if err != nil || len(rv.Features) != tt.features {
				t.Fatalf("reverse = %+v, %v", rv, err)
			}
			p := rv.Nearest().Properties
			if p.Label != tt.label || p.Citycode != tt.citycode || p.Distance == nil || *p.Distance != tt.distance {
				t.Errorf("first feature = %+v", p)
			}
		})
	}
}

func TestShortQueryIsAClientError(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect("/geocodage/search", upstreamtest.Query("q", "ab", "limit", "5"), upstreamtest.FileStatus(t, "testdata/bad_q.json", 400))
	_, err := New(s.Client(t, Name)).Search(context.Background(), "ab", 5)
	if upstream.StatusOf(err) != 400 || len(s.Requests()) != 1 {
		t.Fatalf("err = %v after %d calls", err, len(s.Requests()))
	}
}

func TestNearest(t *testing.T) {
	d := func(v float64) *float64 { return &v }
	feature := func(typ string, dist *float64) Feature {
		var f Feature
		f.Properties.Type, f.Properties.Distance, f.Properties.Label = typ, dist, typ
		return f
	}
	tests := []struct {
		name string
		in   []Feature
		want string
	}{
		{"none", nil, ""},
		{"nearest wins", []Feature{feature("housenumber", d(30)), feature("street", d(10))}, "street"},
		{"house number on a tie", []Feature{feature("street", d(10)), feature("housenumber", d(10))}, "housenumber"},
		{"no distance ranks last", []Feature{feature("housenumber", nil), feature("locality", d(500))}, "locality"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := (&Collection{Features: tt.in}).Nearest()
			if (got == nil) != (tt.want == "") || (got != nil && got.Properties.Label != tt.want) {
				t.Errorf("Nearest() = %+v, want %q", got, tt.want)
			}
		})
	}
}
