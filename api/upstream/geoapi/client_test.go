package geoapi

import (
	"context"
	"testing"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestCommunes(t *testing.T) {
	fields := upstreamtest.Query("fields", Fields)
	s := upstreamtest.New(t)
	s.Expect("/communes", upstreamtest.Query("nom", "nice", "boost", "population", "limit", "10", "fields", Fields), upstreamtest.File(t, "testdata/communes_nice.json"))
	s.Expect("/communes", upstreamtest.Query("nom", "nant", "boost", "population", "limit", "10", "fields", Fields), upstreamtest.File(t, "testdata/communes.json"))
	s.Expect("/communes/44109", fields, upstreamtest.File(t, "testdata/commune.json"))
	s.Expect("/communes/99999", fields, upstreamtest.Body(404, "text/plain", nil)) // the upstream's unknown-code answer: empty body
	c := New(s.Client(t, Name))
	l, err := c.ByName(context.Background(), "nice", 10)
	if err != nil || len(l) != 3 || l[0].Code != "06088" || l[0].Population != nil || l[0].Departement.Nom != "Alpes-Maritimes" {
		t.Fatalf("by name (recorded) = %+v, %v", l, err)
	}
	l, err = c.ByName(context.Background(), "nant", 10)
	if err != nil || len(l) != 2 || *l[0].Population != 323204 || l[0].EPCI.Nom != "Nantes Métropole" {
		t.Fatalf("by name = %+v, %v", l, err)
	}
	one, err := c.ByCode(context.Background(), "44109")
	if err != nil || one.Centre.Coordinates[1] != 47.2317 {
		t.Fatalf("by code = %+v, %v", one, err)
	}
	if _, err := c.ByCode(context.Background(), "99999"); !upstream.IsNotFound(err) {
		t.Fatalf("unknown code err = %v", err)
	}
}
