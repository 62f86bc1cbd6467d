package tabular

import (
	"context"
	"testing"

	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestIRVE(t *testing.T) {
	s := upstreamtest.New(t)
	s.Handle(upstreamtest.File(t, "testdata/irve.json"))
	pdc, err := New(s.Client(t, Name)).IRVE(context.Background(), "44109")
	if err != nil || len(pdc) != 3 {
		t.Fatalf("pdc = %d, %v", len(pdc), err)
	}
	u := s.Last().URL
	if u.Path != "/api/resources/"+IRVEResource+"/data/" || u.Query().Get("code_insee_commune__exact") != "44109" {
		t.Errorf("request = %s", u)
	}
	if !Bool(pdc[1].PriseCCS) || !Bool(pdc[1].PriseChademo) || Bool(pdc[1].PriseAutre) || Bool(pdc[1].Gratuit) {
		t.Errorf("booleans = %+v", pdc[1])
	}
}

func TestIRVEParisAlsoReadsArrondissements(t *testing.T) {
	s := upstreamtest.New(t)
	s.Handle(upstreamtest.File(t, "testdata/empty.json"))
	if _, err := New(s.Client(t, Name)).IRVE(context.Background(), "75056"); err != nil {
		t.Fatal(err)
	}
	if n := len(s.Requests()); n != 21 {
		t.Errorf("%d calls, want 21 (commune + 20 arrondissements)", n)
	}
}
