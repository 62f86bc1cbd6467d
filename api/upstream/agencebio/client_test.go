package agencebio

import (
	"context"
	"testing"

	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestParSiren(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect("/api/gouv/operateurs/", upstreamtest.Query("siret", "302474648", "nb", "1500"), upstreamtest.File(t, "testdata/operateurs_siret.json"))
	p, err := New(s.Client(t, Name)).ParSiren(context.Background(), "302474648")
	if err != nil {
		t.Fatal(err)
	}
	// nbTotal is "1" on the wire.
	if !p.NbTotal.Valid || p.NbTotal.V != 1 || len(p.Items) != 1 {
		t.Fatalf("page = %+v", p)
	}
	it := p.Items[0]
	if it.Siret != "30247464801571" || it.NumeroBio != "200807" || len(it.Certificats) != 1 || it.Certificats[0].EtatCertification != "ENGAGEE" {
		t.Errorf("operator = %+v", it)
	}
}

func TestOperateursSendsTheSearch(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect("/api/gouv/operateurs/", upstreamtest.Query("nb", "50", "debut", "0", "departements", "93", "q", "naturalia saint ouen"),
		upstreamtest.File(t, "testdata/operateurs_siret.json"))
	p, err := New(s.Client(t, Name)).Operateurs(context.Background(), "93", "naturalia saint ouen", 50)
	if err != nil || len(p.Items) != 1 {
		t.Fatalf("page = %+v, %v", p, err)
	}
}
