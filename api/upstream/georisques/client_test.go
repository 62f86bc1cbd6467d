package georisques

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

// Each recorded report is read whole: commune, the risks marked present in the report's order,
// and none of the absent ones.
func TestReportRecorded(t *testing.T) {
	tests := []struct {
		ask, sent, file, commune string
		present                  []string
	}{
		// Paris 8e is asked as the commune, 75056.
		{"75108", "75056", "rapport_paris_75108.json", "Paris", []string{"naturel/seisme/Séisme", "naturel/radon/Radon", "technologique/pollutionSols/Pollution des sols"}},
		{"97412", "97412", "rapport_saint_joseph_97412.json", "Saint-Joseph", []string{"naturel/seisme/Séisme", "naturel/mouvementTerrain/Mouvements de terrain",
			"naturel/feuForet/Feu de forêt", "naturel/eruptionVolcanique/Volcan", "naturel/cyclone/Vent violent", "naturel/radon/Radon", "technologique/pollutionSols/Pollution des sols"}},
	}
	for _, tt := range tests {
		t.Run(tt.ask, func(t *testing.T) {
			s := upstreamtest.New(t)
			s.Expect("/api/v1/resultats_rapport_risque", upstreamtest.Query("code_insee", tt.sent), upstreamtest.File(t, "testdata/"+tt.file))
			r, err := New(s.Client(t, Name)).Report(context.Background(), tt.ask)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range r.Present() {
				got = append(got, p.Famille+"/"+p.Key+"/"+p.Label())
			}
			if r.Commune.Libelle != tt.commune || r.Empty() || fmt.Sprint(got) != fmt.Sprint(tt.present) {
				t.Errorf("commune %q, present %q; want %q %q", r.Commune.Libelle, got, tt.commune, tt.present)
			}
			if !strings.HasPrefix(r.URL, "https://georisques.gouv.fr/mes-risques/") {
				t.Errorf("url = %q", r.URL)
			}
		})
	}
}

// Tolerance where answers are known to differ: the status texts of the newer answers, a risk
// without its label, a null risk; an empty report is recognised.
func TestReportShapes(t *testing.T) {
	var r Report
	body := `{"commune":{"libelle":"Paris","codePostal":"75007","codeInsee":"75056"},
		"risquesNaturels":{"inondation":{"present":true,"libelleStatutCommune":"Risque Existant","libelleStatutAdresse":"Risque non Connu"},
			"remonteeNappe":{"present":true,"libelleStatutAdresse":"Risque Existant"},"avalanche":null},
		"risquesTechnologiques":null}`
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	p := r.Present()
	if len(p) != 2 || p[0].Label() != "Inondation" || p[0].StatutCommune != "Risque Existant" || p[1].Label() != "Remontée de nappe" || r.Empty() {
		t.Errorf("present = %+v", p)
	}
	var empty Report
	if err := json.Unmarshal([]byte(`{"adresse":null,"commune":null,"url":null,"risquesNaturels":{},"risquesTechnologiques":{}}`), &empty); err != nil || !empty.Empty() {
		t.Errorf("empty report: %v, %+v", err, empty)
	}
}

// A cached report reads back the same, in the same order.
func TestReportRoundTrip(t *testing.T) {
	var r, back Report
	b := []byte(`{"commune":{"libelle":"X","codeInsee":"1"},"risquesNaturels":{"seisme":{"present":true,"libelle":"Séisme"},"inondation":{"present":false,"libelle":"Inondation"}}}`)
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &back); err != nil || fmt.Sprint(back) != fmt.Sprint(r) {
		t.Errorf("%s read back as %+v (%v)", out, back, err)
	}
}

// A shape nobody has recorded is a bad answer naming the field, which the edge turns into a 502.
func TestReportBadShape(t *testing.T) {
	tests := []struct{ body, field string }{
		{`{"risquesNaturels":{"radon":{"present":"oui"}}}`, "risquesNaturels.radon.present"},
		{`{"risquesNaturels":[{"present":true}]}`, "risquesNaturels"},
	}
	for _, tt := range tests {
		s := upstreamtest.New(t)
		s.Expect("/api/v1/resultats_rapport_risque", upstreamtest.Query("code_insee", "44109"), upstreamtest.JSON(200, tt.body))
		_, err := New(s.Client(t, Name)).Report(context.Background(), "44109")
		var bad *upstream.Error
		if !errors.As(err, &bad) || !strings.Contains(err.Error(), tt.field) {
			t.Errorf("%s: err = %v, want a bad answer naming %s", tt.body, err, tt.field)
		}
	}
}
