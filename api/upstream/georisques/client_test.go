package georisques

import (
	"context"
	"testing"

	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestRisquesMapsArrondissements(t *testing.T) {
	s := upstreamtest.New(t)
	// Marseille 8e (13208) is asked as the commune, 13055.
	s.Expect("/api/v1/gaspar/risques", upstreamtest.Query("code_insee", "13055", "page", "1", "page_size", "10"), upstreamtest.File(t, "testdata/risques.json"))
	c := New(s.Client(t, Name))
	p, err := c.Risques(context.Background(), "13208")
	if err != nil || len(p.Data[0].RisquesDetail) != 4 {
		t.Fatalf("page = %+v, %v", p, err)
	}
}
