package transport

import (
	"context"
	"testing"
	"time"

	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestDatasetsSnapshot(t *testing.T) {
	s := upstreamtest.New(t)
	s.Handle(upstreamtest.File(t, "testdata/datasets.json"))
	c := New(s.Client(t, Name))
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	c.now = func() time.Time { return now }
	for range 3 {
		d, err := c.Datasets(context.Background())
		if err != nil || len(d) != 3 || len(d[0].Resources) != 3 {
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
