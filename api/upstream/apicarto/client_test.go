package apicarto

import (
	"context"
	"testing"

	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestParcelle(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect("/api/cadastre/parcelle", upstreamtest.Query("geom", `{"type":"Point","coordinates":[-4.36571,47.80535]}`), upstreamtest.File(t, "testdata/parcelle_29158000AW0001.json"))
	p, err := New(s.Client(t, Name)).Parcelle(context.Background(), 47.80535, -4.36571)
	if err != nil || len(p.Features) != 1 || *p.Features[0].Properties.Contenance != 1968 || p.Features[0].Properties.IDU != "29158000AW0001" {
		t.Fatalf("parcelles = %+v, %v", p, err)
	}
}
