package transport

import (
	"context"
	"testing"
	"time"

	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestCoveredAreaInBothShapes(t *testing.T) {
	for _, c := range []struct {
		file, area, typ string
	}{
		{"testdata/datasets.json", "Angers Métropole", "epci"},
		{"testdata/datasets_2022.json", "Angers Métropole", "aom"},
	} {
		t.Run(c.file, func(t *testing.T) {
			s := upstreamtest.New(t)
			s.Expect("/api/datasets", nil, upstreamtest.File(t, c.file))
			d, err := New(s.Client(t, Name)).Datasets(context.Background())
			if err != nil || len(d) != 1 {
				t.Fatalf("datasets = %+v, %v", d, err)
			}
			if d[0].AreaNames() != c.area || d[0].CoveredArea[0].Type != c.typ || d[0].Resources[0].Format != "gbfs" {
				t.Errorf("dataset = %+v", d[0])
			}
		})
	}
}

func TestDatasetsSnapshot(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect("/api/datasets", nil, upstreamtest.File(t, "testdata/datasets.json"))
	c := New(s.Client(t, Name))
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	c.now = func() time.Time { return now }
	for range 3 {
		if d, err := c.Datasets(context.Background()); err != nil || len(d) != 1 {
			t.Fatalf("datasets = %d, %v", len(d), err)
		}
	}
	if n := len(s.Requests()); n != 1 {
		t.Errorf("%d upstream calls, want 1 within the snapshot's life", n)
	}
	now = now.Add(2 * time.Hour)
	_, _ = c.Datasets(context.Background())
	if n := len(s.Requests()); n != 2 {
		t.Errorf("%d upstream calls after expiry, want 2", n)
	}
}
