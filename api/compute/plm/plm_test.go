package plm

import "testing"

func TestPLM(t *testing.T) {
	if a := Arrondissements("75056"); len(a) != 20 || a[0] != "75101" || a[19] != "75120" {
		t.Errorf("Paris = %v", a)
	}
	if a := Arrondissements("69123"); len(a) != 9 || a[8] != "69389" {
		t.Errorf("Lyon = %v", a)
	}
	if a := Arrondissements("13055"); len(a) != 16 || a[15] != "13216" {
		t.Errorf("Marseille = %v", a)
	}
	if Arrondissements("80021") != nil {
		t.Error("Amiens has no arrondissements")
	}
	for in, want := range map[string]string{"13216": "13055", "69387": "69123", "75115": "75056", "80021": "80021", "75121": "75121"} {
		if got := Commune(in); got != want {
			t.Errorf("Commune(%s) = %s, want %s", in, got, want)
		}
	}
}
