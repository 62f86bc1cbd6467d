package apicarto

import (
	"context"
	"testing"

	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestParcelle(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect("/api/cadastre/parcelle", upstreamtest.Query("geom", `{"type":"Point","coordinates":[4.7393,45.708]}`), upstreamtest.File(t, "testdata/parcelle.json"))
	p, err := New(s.Client(t, Name)).Parcelle(context.Background(), 45.708, 4.7393)
	if err != nil || len(p.Features) != 1 || *p.Features[0].Properties.Contenance != 947 {
		t.Fatalf("parcelles = %+v, %v", p, err)
	}
}
