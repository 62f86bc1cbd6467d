package bodacc

import (
	"context"
	"slices"
	"testing"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/ods"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

const records = "/api/explore/v2.1/catalog/datasets/annonces-commerciales/records"

func TestAnnonces(t *testing.T) {
	t.Run("collective proceeding", func(t *testing.T) {
		s := upstreamtest.New(t)
		s.Expect(records, upstreamtest.Query("where", `registre like "843701079" AND familleavis="collective"`, "order_by", "dateparution desc", "limit", "100"),
			upstreamtest.File(t, "testdata/annonces.json"))
		p, err := New(s.Client(t, Name)).Annonces(context.Background(), "843701079", Collective)
		if err != nil {
			t.Fatal(err)
		}
		// The judgment is a JSON text whose ç is escaped (\u00e7), as recorded.
		var j Jugement
		if p.TotalCount != 1 || !p.Results[0].Jugement.Decode(&j) || j.Date != "2025-04-16" || j.Famille != "Jugement prononçant" ||
			j.Nature != "Jugement de conversion en redressement judiciaire" || !slices.Equal(p.Results[0].Registre, ods.Values{"843701079", "843 701 079"}) {
			t.Errorf("jugement = %+v, registre %v", j, p.Results[0].Registre)
		}
	})
	t.Run("filings", func(t *testing.T) {
		s := upstreamtest.New(t)
		s.Expect(records, upstreamtest.Query("where", `registre like "880878145"`, "order_by", "dateparution desc", "limit", "100"),
			upstreamtest.File(t, "testdata/annonces_880878145.json"))
		p, err := New(s.Client(t, Name)).Annonces(context.Background(), "880878145", "")
		if err != nil {
			t.Fatal(err)
		}
		var d Depot
		if p.TotalCount != 3 || p.Results[0].Depot.Decode(&d) || !p.Results[1].Depot.Decode(&d) || d.DateCloture != "2021-12-31" {
			t.Errorf("depot = %+v", d)
		}
		var pe Personnes
		if !p.Results[1].ListePersonnes.Decode(&pe) || pe.Personne.Denomination != "Ganymède" || pe.Personne.Capital != nil {
			t.Errorf("personnes = %+v", pe)
		}
	})
}

func TestODSQLError(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect(records, upstreamtest.Query("where", `registre like "843701079"`, "order_by", "dateparution desc", "limit", "100"),
		upstreamtest.FileStatus(t, "testdata/odsql_error.json", 400))
	_, err := New(s.Client(t, Name)).Annonces(context.Background(), "843701079", "")
	if upstream.StatusOf(err) != 400 {
		t.Fatalf("err = %v", err)
	}
}
