package boamp

import (
	"context"
	"testing"

	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestSearch(t *testing.T) {
	tests := []struct {
		name  string
		q     Query
		where string
		order string
	}{
		{"open calls by deadline", Query{Text: "toiture vichy", Departement: "03", OpenOn: "2026-09-25", ByDeadline: true, Max: 20},
			`"toiture vichy" AND code_departement="03" AND datelimitereponse >= date'2026-09-25'`, "datelimitereponse asc"},
		{"newest first", Query{Text: "toiture vichy", Max: 20}, `"toiture vichy"`, "dateparution desc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := upstreamtest.New(t)
			s.Expect("/api/explore/v2.1/catalog/datasets/boamp/records",
				upstreamtest.Query("where", tt.where, "order_by", tt.order, "limit", "20"),
				upstreamtest.File(t, "testdata/records.json"))
			p, err := New(s.Client(t, Name)).Search(context.Background(), tt.q)
			if err != nil {
				t.Fatal(err)
			}
			a := p.Results[0]
			if p.TotalCount != 1 || a.IDWeb != "26-91551" || a.NomAcheteur != "COMMUNE DE VICHY" || a.DateLimiteReponse != "2026-10-26T11:00:00+00:00" ||
				len(a.DescripteurLibelle) != 1 || a.CodeDepartement != nil || len(a.Titulaire) != 0 || a.NatureText() != "Avis de marché" {
				t.Errorf("page = %+v", p)
			}
		})
	}
}
