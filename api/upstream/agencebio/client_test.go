package agencebio

import (
	"context"
	"testing"

	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestOperateurs(t *testing.T) {
	s := upstreamtest.New(t)
	s.Handle(upstreamtest.File(t, "testdata/operateurs.json"))
	p, err := New(s.Client(t, Name)).Operateurs(context.Background(), "69", "chenes", 50)
	if err != nil || *p.NbTotal != 2 || len(p.Items[0].Activites) != 2 {
		t.Fatalf("page = %+v, %v", p, err)
	}
	r := s.Last().URL
	if r.Path != "/api/gouv/operateurs/" || r.Query().Get("departements") != "69" || r.Query().Get("q") != "chenes" {
		t.Errorf("request = %s", r)
	}
}
