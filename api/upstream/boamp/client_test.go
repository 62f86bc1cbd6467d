package boamp

import (
	"context"
	"testing"

	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestSearch(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect("/api/explore/v2.1/catalog/datasets/boamp/records",
		upstreamtest.Query("where", `"toiture" AND code_departement="69" AND datelimitereponse >= date'2026-11-21'`, "order_by", "datelimitereponse asc", "limit", "20"),
		upstreamtest.File(t, "testdata/records.json"))
	p, err := New(s.Client(t, Name)).Search(context.Background(), Query{Text: "toiture", Departement: "69", OpenOn: "2026-11-21", ByDeadline: true, Max: 20})
	if err != nil {
		t.Fatal(err)
	}
	if p.TotalCount != 2 || p.Results[1].DateLimiteReponse != "" || p.Results[0].CodeDepartement[0] != "69" {
		t.Errorf("page = %+v", p)
	}
}
