package economie

import (
	"context"
	"strings"
	"testing"

	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestRatiosAndCarburants(t *testing.T) {
	s := upstreamtest.New(t)
	s.Handle(upstreamtest.Routes(
		"ratios_inpi_bce", upstreamtest.File(t, "testdata/ratios.json"),
		"flux-instantane", upstreamtest.File(t, "testdata/carburants.json")))
	c := New(s.Client(t, Name))
	r, err := c.Ratios(context.Background(), "511278533")
	if err != nil || r.TotalCount != 2 || *r.Results[0].ChiffreDAffaires != 15711568 {
		t.Fatalf("ratios = %+v, %v", r, err)
	}
	if w := s.Last().URL.Query().Get("where"); w != `siren="511278533"` {
		t.Errorf("where = %s", w)
	}
	st, err := c.Carburants(context.Background(), "75015")
	if err != nil || len(st.Results) != 2 || st.Results[0].SP95Prix != nil || st.Results[0].Geom.Lat != 48.83914 {
		t.Fatalf("stations = %+v, %v", st, err)
	}
	if !strings.Contains(s.Last().URL.Path, "prix-des-carburants-en-france-flux-instantane-v2/records") {
		t.Errorf("path = %s", s.Last().URL.Path)
	}
}
