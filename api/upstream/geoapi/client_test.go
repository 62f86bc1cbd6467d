package geoapi

import (
	"context"
	"testing"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestCommunes(t *testing.T) {
	s := upstreamtest.New(t)
	c := New(s.Client(t, Name))
	s.Handle(upstreamtest.File(t, "testdata/communes.json"))
	l, err := c.ByName(context.Background(), "nant", 10)
	if err != nil || len(l) != 2 || *l[0].Population != 323204 || l[0].EPCI.Nom != "Nantes Métropole" {
		t.Fatalf("by name = %+v, %v", l, err)
	}
	if q := s.Last().URL.Query(); q.Get("nom") != "nant" || q.Get("boost") != "population" || q.Get("fields") != Fields {
		t.Errorf("query = %v", q)
	}
	s.Handle(upstreamtest.File(t, "testdata/commune.json"))
	one, err := c.ByCode(context.Background(), "44109")
	if err != nil || one.Centre.Coordinates[1] != 47.2317 || s.Last().URL.Path != "/communes/44109" {
		t.Fatalf("by code = %+v, %v", one, err)
	}
	s.Handle(upstreamtest.Body(404, "text/plain", nil)) // the upstream's unknown-code answer: empty body
	if _, err := c.ByCode(context.Background(), "99999"); !upstream.IsNotFound(err) {
		t.Fatalf("unknown code err = %v", err)
	}
}
