package ademe

import (
	"context"
	"testing"

	"github.com/peage/appliance/api/upstream/upstreamtest"
)

const (
	rgePath = "/data-fair/api/v1/datasets/liste-des-entreprises-rge-2/lines"
	dpePath = "/data-fair/api/v1/datasets/dpe03existant/lines"
)

func TestRGE(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect(rgePath, upstreamtest.Query("siret_eq", "84370107900017", "size", "100"), upstreamtest.File(t, "testdata/rge_siret.json"))
	// The recorded lines of BESOIN DE TOIT, served to the postcode query of its address (derived use).
	s.Expect(rgePath, upstreamtest.Query("qs", `code_postal:"81170"`, "size", "1000", "sort", "nom_entreprise"), upstreamtest.File(t, "testdata/rge_siret.json"))
	c := New(s.Client(t, Name))
	r, err := c.RGEBySiret(context.Background(), "84370107900017")
	if err != nil || r.Total != 1 || r.Results[0].NomEntreprise != "BESOIN DE TOIT" || r.Results[0].CodeQualification != "3111D111" {
		t.Fatalf("rge by siret = %+v, %v", r, err)
	}
	r, err = c.RGEByCP(context.Background(), "81170")
	if err != nil || len(r.Results) != 1 || r.Results[0].CodePostal != "81170" || !r.Results[0].Particulier {
		t.Fatalf("rge by cp = %+v, %v", r, err)
	}
}

func TestDPE(t *testing.T) {
	tests := []struct {
		q  DPEQuery
		qs string
	}{
		{DPEQuery{INSEE: []string{"75107"}}, `code_insee_ban:"75107"`},
		{DPEQuery{INSEE: []string{"75107", "75115"}}, `code_insee_ban:("75107" OR "75115")`},
		{DPEQuery{CP: "75007"}, `code_postal_ban:"75007"`},
	}
	for _, tt := range tests {
		t.Run(tt.qs, func(t *testing.T) {
			s := upstreamtest.New(t)
			s.Expect(dpePath, upstreamtest.Query("qs", tt.qs, "size", "50", "select", dpeFields, "sort", "-date_etablissement_dpe"), upstreamtest.File(t, "testdata/dpe.json"))
			d, err := New(s.Client(t, Name)).DPE(context.Background(), tt.q)
			if err != nil || d.Total != 23600 || len(d.Results) != 1 {
				t.Fatalf("dpe = %+v, %v", d, err)
			}
			// The recording keeps no consumption figures nor construction year: they stay nil, not 0.
			r := d.Results[0]
			if r.NumeroDPE != "2675E0864501D" || r.EtiquetteDPE != "D" || r.CodeINSEE != "75107" || *r.Surface != 11 || r.ConsoM2 != nil || r.AnneeConstruction != nil {
				t.Fatalf("dpe = %+v, %v", d, err)
			}
		})
	}
}
