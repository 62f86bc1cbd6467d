package dvf

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestMutationsDedupesRepeatedPrices(t *testing.T) {
	s := upstreamtest.New(t)
	s.Handle(upstreamtest.File(t, "testdata/44109.csv"))
	ms, err := New(s.Client(t, Name)).Mutations(context.Background(), 2024, "44109")
	if err != nil {
		t.Fatal(err)
	}
	if s.Last().URL.Path != "/geo-dvf/latest/csv/2024/communes/44/44109.csv" {
		t.Errorf("path = %s", s.Last().URL.Path)
	}
	if len(ms) != 3 {
		t.Fatalf("%d mutations, want 3 (5 lines)", len(ms))
	}
	want := map[string]struct {
		valeur        float64
		typ           string
		bati, terrain int
	}{
		"2024-412345": {245000, "Appartement", 62, 0},
		"2024-412399": {389000, "Maison", 104, 462},
		"2024-412500": {61000, "Terrain", 0, 540},
	}
	for _, m := range ms {
		w := want[m.ID]
		if *m.Valeur != w.valeur || m.Type != w.typ || m.SurfaceBati != w.bati || m.SurfaceTerrain != w.terrain {
			t.Errorf("%s = %+v, want %+v", m.ID, m, w)
		}
	}
	if ms[0].ID != "2024-412500" {
		t.Errorf("not newest first: %s", ms[0].ID)
	}
}

func TestParisReadsEveryArrondissementAndMissingFilesAreNoSales(t *testing.T) {
	s := upstreamtest.New(t)
	s.Handle(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/75104.csv") {
			http.ServeFile(w, r, "testdata/44109.csv")
			return
		}
		http.NotFound(w, r)
	}))
	ms, err := New(s.Client(t, Name)).Mutations(context.Background(), 2024, "75056")
	if err != nil || len(ms) != 3 {
		t.Fatalf("%d mutations, %v", len(ms), err)
	}
	seen := map[string]bool{}
	for _, r := range s.Requests() {
		seen[r.URL.Path] = true
	}
	if len(seen) != 20 || !seen["/geo-dvf/latest/csv/2024/communes/75/75101.csv"] || !seen["/geo-dvf/latest/csv/2024/communes/75/75120.csv"] {
		t.Errorf("paths = %v", seen)
	}
}

func TestOverseasAndCorsicaPaths(t *testing.T) {
	for in, want := range map[string]string{"97411": "/2024/communes/974/97411.csv", "2A004": "/2024/communes/2A/2A004.csv"} {
		if got := path(2024, in); got != want {
			t.Errorf("path(%s) = %s", in, got)
		}
	}
}
