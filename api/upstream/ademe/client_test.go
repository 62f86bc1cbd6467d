package ademe

import (
	"context"
	"testing"

	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestQueries(t *testing.T) {
	s := upstreamtest.New(t)
	s.Handle(upstreamtest.Routes(
		"liste-des-entreprises-rge-2", upstreamtest.File(t, "testdata/rge.json"),
		"dpe03existant", upstreamtest.File(t, "testdata/dpe.json")))
	c := New(s.Client(t, Name))
	r, err := c.RGEByCP(context.Background(), "69007")
	if err != nil || len(r.Results) != 3 {
		t.Fatalf("rge = %+v, %v", r, err)
	}
	if got := s.Last().URL; got.Path != "/data-fair/api/v1/datasets/liste-des-entreprises-rge-2/lines" || got.Query().Get("qs") != `code_postal:"69007"` {
		t.Errorf("rge request = %s", got)
	}
	if _, err := c.RGEBySiret(context.Background(), "81234567600017"); err != nil || s.Last().URL.Query().Get("siret_eq") != "81234567600017" {
		t.Errorf("siret query = %s, %v", s.Last().URL, err)
	}
	tests := []struct {
		q    DPEQuery
		want string
	}{
		{DPEQuery{INSEE: []string{"44109"}}, `code_insee_ban:"44109"`},
		{DPEQuery{INSEE: []string{"69381", "69382"}}, `code_insee_ban:("69381" OR "69382")`},
		{DPEQuery{CP: "44000"}, `code_postal_ban:"44000"`},
	}
	for _, tt := range tests {
		d, err := c.DPE(context.Background(), tt.q)
		if err != nil || d.Total != 18342 || d.Results[1].AnneeConstruction != nil {
			t.Fatalf("dpe = %+v, %v", d, err)
		}
		if got := s.Last().URL.Query().Get("qs"); got != tt.want {
			t.Errorf("qs = %s, want %s", got, tt.want)
		}
	}
}
