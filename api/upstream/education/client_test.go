package education

import (
	"context"
	"testing"

	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestCalendrierAndAnnuaire(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect("/api/explore/v2.1/catalog/datasets/fr-en-calendrier-scolaire/records",
		upstreamtest.Query("where", `zones="Zone C" and annee_scolaire="2025-2026"`, "order_by", "start_date", "limit", "100"),
		upstreamtest.File(t, "testdata/calendrier.json"))
	s.Expect("/api/explore/v2.1/catalog/datasets/fr-en-annuaire-education/records",
		upstreamtest.Query("where", `etat="OUVERT" and search(nom_etablissement,"jaures") and code_postal="81400"`, "select", annuaireFields, "order_by", "nom_etablissement", "limit", "20"),
		upstreamtest.File(t, "testdata/annuaire.json"))
	c := New(s.Client(t, Name))
	p, err := c.Calendrier(context.Background(), "Zone C", "2025-2026")
	if err != nil || len(p.Results) != 7 || p.Results[1].Description != "Vacances de Noël" || p.Results[6].Population != "Élèves" {
		t.Fatalf("calendrier = %+v, %v", p, err)
	}
	e, err := c.Annuaire(context.Background(), "jaures", "81400", 20)
	if err != nil || e.TotalCount != 1 || len(e.Results) != 1 {
		t.Fatalf("annuaire = %+v, %v", e, err)
	}
	// The recorded row carries no pupil count: it stays nil, not 0.
	if r := e.Results[0]; r.UAI != "0810012Y" || r.Statut != "Public" || *r.Latitude != 44.0490784350248 || r.NombreDEleves != nil {
		t.Fatalf("annuaire = %+v, %v", e, err)
	}
}
