package fr

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/upstream/geoapi"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestPLMPostcode(t *testing.T) {
	for _, tt := range []struct {
		cp, insee, name string
		ok              bool
	}{
		{"75001", "75101", "Paris 1er", true},
		{"75018", "75118", "Paris 18e", true},
		{"75116", "75116", "Paris 16e", true},
		{"69003", "69383", "Lyon 3e", true},
		{"13016", "13216", "Marseille 16e", true},
		{"75021", "", "", false},
		{"69010", "", "", false},
		{"33000", "", "", false},
		{"", "", "", false}, // a listing without a postal code
		{"7", "", "", false},
	} {
		insee, name, ok := plmPostcode(tt.cp)
		if insee != tt.insee || name != tt.name || ok != tt.ok {
			t.Errorf("plmPostcode(%s) = %s %q %v, want %s %q %v", tt.cp, insee, name, ok, tt.insee, tt.name, tt.ok)
		}
	}
}

// TestReferenceOutsidePLM: a postal code outside Paris, Lyon and Marseille is looked up in the
// commune directory (recorded answer for 78000: Versailles); DVF without any file of it over
// the years read is a 404 naming the commune the directory answered.
func TestReferenceOutsidePLM(t *testing.T) {
	e := setup(t, 0)
	e.serve("geo-api", upstreamtest.Want(t, "/communes", upstreamtest.Query("codePostal", "78000", "fields", geoapi.Fields), e.file("geoapi", "communes_cp_78000.json")))
	e.serve("dvf", dvfFiles(e, "78", "78646", nil, http.NotFoundHandler()))
	_, err := e.routes.DVFReference(context.Background(), "78000", "", "appartement")
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Code != apierr.CodeNotFound || !strings.Contains(ae.Message, "Versailles (78646)") {
		t.Fatalf("DVFReference(78000) = %v, want a 404 naming Versailles (78646)", err)
	}
}
