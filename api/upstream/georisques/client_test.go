package georisques

import (
	"context"
	"testing"

	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestRisquesMapsArrondissements(t *testing.T) {
	s := upstreamtest.New(t)
	s.Handle(upstreamtest.File(t, "testdata/risques.json"))
	c := New(s.Client(t, Name))
	p, err := c.Risques(context.Background(), "13208")
	if err != nil || len(p.Data[0].RisquesDetail) != 4 {
		t.Fatalf("page = %+v, %v", p, err)
	}
	if u := s.Last().URL; u.Path != "/api/v1/gaspar/risques" || u.Query().Get("code_insee") != "13055" {
		t.Errorf("request = %s", u)
	}
}
