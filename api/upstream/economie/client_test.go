package economie

import (
	"context"
	"testing"

	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestRatios(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect("/api/explore/v2.1/catalog/datasets/ratios_inpi_bce/records",
		upstreamtest.Query("where", `siren="552032534"`, "order_by", "date_cloture_exercice desc", "limit", "20"),
		upstreamtest.File(t, "testdata/ratios.json"))
	r, err := New(s.Client(t, Name)).Ratios(context.Background(), "552032534")
	if err != nil || r.TotalCount != 15 || len(r.Results) != 10 {
		t.Fatalf("ratios = %+v, %v", r, err)
	}
	if y := r.Results[0]; y.DateClotureExercice != "2023-12-31" || y.ChiffreDAffaires == nil || *y.ChiffreDAffaires != 699000000 {
		t.Errorf("newest = %+v", y)
	}
}

// The feed has served prices as text and as numbers: both read the same.
func TestCarburantsPricesAsTextOrNumbers(t *testing.T) {
	for _, file := range []string{"testdata/carburants.json", "testdata/carburants_numbers.json"} {
		t.Run(file, func(t *testing.T) {
			s := upstreamtest.New(t)
			s.Expect("/api/explore/v2.1/catalog/datasets/prix-des-carburants-en-france-flux-instantane-v2/records",
				upstreamtest.Query("where", `cp="66700"`, "select", carburantsFields, "limit", "100"),
				upstreamtest.File(t, file))
			st, err := New(s.Client(t, Name)).Carburants(context.Background(), "66700")
			if err != nil || len(st.Results) != 1 {
				t.Fatalf("stations = %+v, %v", st, err)
			}
			r := st.Results[0]
			if !r.GazolePrix.Valid || r.GazolePrix.V != 1.908 || r.SP95Prix.Valid || r.E85Prix.V != 0.994 || r.Geom.Lat != 42.575 {
				t.Errorf("station = %+v", r)
			}
		})
	}
}
