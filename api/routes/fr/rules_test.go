package fr

import (
	"strings"
	"testing"

	"github.com/peage/appliance/api/upstream"
)

func TestClassifyJudgments(t *testing.T) {
	tests := map[string]string{
		"Jugement d'ouverture de liquidation judiciaire":                       "liquidation_judiciaire",
		"Jugement de conversion en liquidation judiciaire":                     "liquidation_judiciaire",
		"Jugement d'ouverture d'une procédure de redressement judiciaire":      "redressement_judiciaire",
		"Jugement d'ouverture d'une procédure de sauvegarde":                   "sauvegarde",
		"Jugement arrêtant le plan de redressement":                            "plan_en_cours",
		"Jugement arrêtant le plan de cession":                                 "plan_en_cours",
		"JUGEMENT DE CLÔTURE POUR INSUFFISANCE D'ACTIF":                        "procedure_cloturee",
		"Jugement de clôture de la procédure de rétablissement professionnel":  "procedure_cloturee",
		"Jugement d'ouverture d'une procédure de rétablissement professionnel": "retablissement_professionnel",
		"Jugement prononçant la faillite personnelle":                          "",
	}
	for in, want := range tests {
		if got := classify(in); got != want {
			t.Errorf("classify(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestJudgmentDates(t *testing.T) {
	for in, want := range map[string]string{
		"2026-09-20": "2026-09-20", "2026-09-20T00:00:00": "2026-09-20", "10 décembre 2009": "2009-12-10",
		"1er mars 2010": "2010-03-01", "5 août 2011": "2011-08-05", "le 5 août": "", "": "", "32 mai 2010": "",
	} {
		if got := isoDate(in); got != want {
			t.Errorf("isoDate(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestZoneNamesAndSchoolYear(t *testing.T) {
	for in, want := range map[string]string{"A": "Zone A", "zone b": "Zone B", "Zone C": "Zone C", "Corse": "Corse"} {
		if got := zoneName(in); got != want {
			t.Errorf("zoneName(%q) = %q", in, got)
		}
	}
	if got := schoolYear(now); got != "2026-2027" {
		t.Errorf("schoolYear = %s", got)
	}
	if got := schoolYear(now.AddDate(0, -4, 0)); got != "2025-2026" {
		t.Errorf("schoolYear in July = %s", got)
	}
}

func TestNewNamesAMissingUpstream(t *testing.T) {
	if _, err := With(Parts{Upstreams: map[string]upstream.Spec{}}); err == nil || !strings.Contains(err.Error(), "recherche-entreprises") {
		t.Errorf("err = %v, want one naming the missing upstreams", err)
	}
}
