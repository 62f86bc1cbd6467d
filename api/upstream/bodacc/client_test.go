package bodacc

import (
	"context"
	"testing"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

const records = "/api/explore/v2.1/catalog/datasets/annonces-commerciales/records"

func TestAnnonces(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect(records, upstreamtest.Query("where", `registre like "812345676" AND familleavis="collective"`, "order_by", "dateparution desc", "limit", "100"),
		upstreamtest.File(t, "testdata/annonces.json"))
	p, err := New(s.Client(t, Name)).Annonces(context.Background(), "812345676", Collective)
	if err != nil {
		t.Fatal(err)
	}
	var j Jugement
	if p.TotalCount != 4 || !p.Results[0].Jugement.Decode(&j) || j.Date != "2026-09-20" {
		t.Errorf("jugement = %+v", j)
	}
	var d Depot
	if p.Results[0].Depot.Decode(&d) || !p.Results[1].Depot.Decode(&d) || d.DateCloture != "2024-12-31" {
		t.Errorf("depot = %+v", d)
	}
	var pe Personnes
	if !p.Results[2].ListePersonnes.Decode(&pe) || pe.Personne.Capital == nil || pe.Personne.Capital.MontantCapital != "15000.00" {
		t.Errorf("personnes = %+v", pe)
	}
}

func TestODSQLError(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect(records, upstreamtest.Query("where", `registre like "812345676"`, "order_by", "dateparution desc", "limit", "100"),
		upstreamtest.FileStatus(t, "testdata/odsql_error.json", 400))
	_, err := New(s.Client(t, Name)).Annonces(context.Background(), "812345676", "")
	if upstream.StatusOf(err) != 400 {
		t.Fatalf("err = %v", err)
	}
}
