package ban

import (
	"context"
	"testing"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestSearchAndReverse(t *testing.T) {
	s := upstreamtest.New(t)
	s.Handle(upstreamtest.Routes("/search", upstreamtest.File(t, "testdata/search.json"), "/reverse", upstreamtest.File(t, "testdata/reverse.json")))
	c := New(s.Client(t, Name))
	r, err := c.Search(context.Background(), "8 bd du port amiens", 5)
	if err != nil || len(r.Features) != 2 || r.Features[0].Geometry.Coordinates[1] != 49.897443 {
		t.Fatalf("search = %+v, %v", r, err)
	}
	if u := s.Last().URL; u.Path != "/geocodage/search" || u.Query().Get("q") != "8 bd du port amiens" {
		t.Errorf("request = %s", u)
	}
	rv, err := c.Reverse(context.Background(), 48.357, 2.37)
	if err != nil || *rv.Features[0].Properties.Distance != 12 {
		t.Fatalf("reverse = %+v, %v", rv, err)
	}
	if q := s.Last().URL.Query(); q.Get("lat") != "48.357" || q.Get("lon") != "2.37" {
		t.Errorf("reverse query = %v", q)
	}
}

func TestShortQueryIsAClientError(t *testing.T) {
	s := upstreamtest.New(t)
	s.Handle(upstreamtest.FileStatus(t, "testdata/bad_q.json", 400))
	_, err := New(s.Client(t, Name)).Search(context.Background(), "ab", 5)
	if upstream.StatusOf(err) != 400 || len(s.Requests()) != 1 {
		t.Fatalf("err = %v after %d calls", err, len(s.Requests()))
	}
}
