package dvf

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/peage/appliance/api/upstream/upstreamtest"
)

// The first line of the real 2020 file: one sale of building land.
func TestRecordedLine(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect("/geo-dvf/latest/csv/2020/communes/01/01367.csv", nil, upstreamtest.File(t, "testdata/01367.csv"))
	ms, err := New(s.Client(t, Name)).Mutations(context.Background(), 2020, "01367")
	if err != nil || len(ms) != 1 {
		t.Fatalf("mutations = %+v, %v", ms, err)
	}
	m := ms[0]
	if *m.Valeur != 31234.16 || m.Type != "Terrain" || m.SurfaceTerrain != 1192 || m.Parcelles[0] != "013670000A0008" || *m.Lat != 46.403019 {
		t.Errorf("mutation = %+v", m)
	}
}

func TestParisReadsEveryArrondissementAndMissingFilesAreNoSales(t *testing.T) {
	s := upstreamtest.New(t)
	for i := 1; i <= 20; i++ {
		var h http.Handler = http.NotFoundHandler()
		if i == 4 {
			// Recorded lines of another commune stand for the 4th arrondissement's file.
			h = upstreamtest.File(t, "testdata/92012_2025.csv")
		}
		s.Expect(fmt.Sprintf("/geo-dvf/latest/csv/2025/communes/75/751%02d.csv", i), nil, h)
	}
	ms, err := New(s.Client(t, Name)).Mutations(context.Background(), 2025, "75056")
	if err != nil || len(ms) != 2 {
		t.Fatalf("%d mutations, %v", len(ms), err)
	}
	seen := map[string]bool{}
	for _, r := range s.Requests() {
		seen[r.URL.Path] = true
	}
	if len(seen) != 20 || !seen["/geo-dvf/latest/csv/2025/communes/75/75101.csv"] || !seen["/geo-dvf/latest/csv/2025/communes/75/75120.csv"] {
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

// A year without a file is not "no sale": the caller must be able to say so.
func TestNoFileIsNotNoSale(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect("/geo-dvf/latest/csv/2026/communes/44/44109.csv", nil, http.NotFoundHandler())
	if _, err := New(s.Client(t, Name)).Mutations(context.Background(), 2026, "44109"); !errors.Is(err, ErrNoFile) {
		t.Fatalf("err = %v, want ErrNoFile", err)
	}
}

// Recorded lines of Boulogne-Billancourt's 2025 file: each sale spans several lines (a flat
// and its cellars; the flat of 2025-1193201 is also on two lots), its price is counted once,
// its flat once, and the cellars are no dwelling.
func TestRecordedMultiLineSales(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect("/geo-dvf/latest/csv/2025/communes/92/92012.csv", nil, upstreamtest.File(t, "testdata/92012_2025.csv"))
	ms, err := New(s.Client(t, Name)).Mutations(context.Background(), 2025, "92012")
	if err != nil || len(ms) != 2 {
		t.Fatalf("mutations = %+v, %v; want 2 sales from 5 lines", ms, err)
	}
	want := map[string]struct {
		valeur          float64
		bati, dwellings int
		parcelles       int
	}{
		"2025-1193189": {425200, 44, 1, 1},
		"2025-1193201": {500000, 52, 1, 1},
	}
	for _, m := range ms {
		w := want[m.ID]
		if *m.Valeur != w.valeur || m.Type != "Appartement" || m.SurfaceBati != w.bati || m.Dwellings != w.dwellings || len(m.Parcelles) != w.parcelles || m.Commercial {
			t.Errorf("%s = %+v, want %+v", m.ID, m, w)
		}
	}
	if ms[0].ID != "2025-1193201" {
		t.Errorf("not newest first: %s", ms[0].ID)
	}
}

// The recorded head of the 2020 file of the Ain: a sale of land on three parcels is one sale
// whose land is the sum of its parcels.
func TestRecordedLandOnSeveralParcels(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect("/geo-dvf/latest/csv/2020/communes/01/01125.csv", nil, upstreamtest.File(t, "testdata/01125_2020.csv"))
	ms, err := New(s.Client(t, Name)).Mutations(context.Background(), 2020, "01125")
	if err != nil || len(ms) != 1 {
		t.Fatalf("mutations = %+v, %v", ms, err)
	}
	if m := ms[0]; *m.Valeur != 278000 || m.Type != "Terrain" || m.SurfaceTerrain != 10092+4570+5750 || len(m.Parcelles) != 3 || m.Dwellings != 0 {
		t.Errorf("mutation = %+v", m)
	}
}
