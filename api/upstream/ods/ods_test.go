package ods

import (
	"encoding/json"
	"testing"
)

func TestJSONStringTakesTextOrObject(t *testing.T) {
	type jugement struct {
		Nature string `json:"nature"`
	}
	for _, in := range []string{
		`{"jugement": "{\"nature\": \"Jugement d'ouverture\"}"}`,
		`{"jugement": {"nature": "Jugement d'ouverture"}}`,
	} {
		var rec struct {
			Jugement JSONString `json:"jugement"`
		}
		var j jugement
		if err := json.Unmarshal([]byte(in), &rec); err != nil || !rec.Jugement.Decode(&j) || j.Nature != "Jugement d'ouverture" {
			t.Errorf("%s: %+v, %v", in, j, err)
		}
	}
	var rec struct {
		Depot JSONString `json:"depot"`
	}
	if err := json.Unmarshal([]byte(`{"depot": null}`), &rec); err != nil || rec.Depot.Decode(&struct{}{}) {
		t.Errorf("null depot = %q, %v", rec.Depot, err)
	}
}

func TestValuesTakesListOrJoinedText(t *testing.T) {
	for in, want := range map[string]int{
		`{"registre": ["880878145", "880 878 145"]}`: 2,
		`{"registre": "880878145,880 878 145"}`:      2,
		`{"registre": null}`:                         0,
	} {
		var rec struct {
			Registre Values `json:"registre"`
		}
		if err := json.Unmarshal([]byte(in), &rec); err != nil || len(rec.Registre) != want || (want > 0 && rec.Registre[1] != "880 878 145") {
			t.Errorf("%s: %q, %v", in, rec.Registre, err)
		}
	}
}
