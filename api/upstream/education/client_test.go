package education

import (
	"context"
	"testing"

	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestCalendrierAndAnnuaire(t *testing.T) {
	s := upstreamtest.New(t)
	s.Handle(upstreamtest.Routes(
		"fr-en-calendrier-scolaire", upstreamtest.File(t, "testdata/calendrier.json"),
		"fr-en-annuaire-education", upstreamtest.File(t, "testdata/annuaire.json")))
	c := New(s.Client(t, Name))
	p, err := c.Calendrier(context.Background(), "Zone A", "2025-2026")
	if err != nil || len(p.Results) != 5 {
		t.Fatalf("calendrier = %+v, %v", p, err)
	}
	if w := s.Last().URL.Query().Get("where"); w != `zones="Zone A" and annee_scolaire="2025-2026"` {
		t.Errorf("where = %s", w)
	}
	e, err := c.Annuaire(context.Background(), "clemenceau", "44000", 20)
	if err != nil || len(e.Results) != 3 || e.Results[1].NombreDEleves != nil {
		t.Fatalf("annuaire = %+v, %v", e, err)
	}
	if w := s.Last().URL.Query().Get("where"); w != `etat="OUVERT" and search(nom_etablissement,"clemenceau") and code_postal="44000"` {
		t.Errorf("where = %s", w)
	}
}
