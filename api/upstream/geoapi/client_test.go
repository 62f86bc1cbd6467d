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
	s.Expect("/communes", upstreamtest.Query("nom", "versailles", "boost", "population", "limit", "10", "fields", Fields), upstreamtest.File(t, "testdata/communes_versailles.json"))
	s.Expect("/communes", upstreamtest.Query("codePostal", "78000", "fields", Fields), upstreamtest.File(t, "testdata/communes_cp_78000.json"))
	s.Expect("/communes/78646", fields, upstreamtest.File(t, "testdata/commune_78646.json"))
	s.Expect("/communes/99999", fields, upstreamtest.Body(404, "text/plain", nil)) // the upstream's unknown-code answer: empty body
	c := New(s.Client(t, Name))
	l, err := c.ByName(context.Background(), "nice", 10)
	if err != nil || len(l) != 3 || l[0].Code != "06088" || l[0].Population != nil || l[0].Departement.Nom != "Alpes-Maritimes" {
		t.Fatalf("by name (recorded) = %+v, %v", l, err)
	}
	l, err = c.ByName(context.Background(), "versailles", 10)
	if err != nil || len(l) != 1 || *l[0].Population != 85272 || *l[0].Surface != 2616 || l[0].EPCI != nil {
		t.Fatalf("by name (documented example) = %+v, %v", l, err)
	}
	l, err = c.ByPostalCode(context.Background(), "78000")
	if err != nil || len(l) != 1 || l[0].Code != "78646" || l[0].Centre != nil {
		t.Fatalf("by postal code (documented example) = %+v, %v", l, err)
	}
	one, err := c.ByCode(context.Background(), "78646")
	if err != nil || one.Centre.Coordinates[1] != 48.80189489463631 {
		t.Fatalf("by code = %+v, %v", one, err)
	}
	if _, err := c.ByCode(context.Background(), "99999"); !upstream.IsNotFound(err) {
		t.Fatalf("unknown code err = %v", err)
	}
}
