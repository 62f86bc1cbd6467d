package ban

import (
	"context"
	"testing"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestSearchAndReverse(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect("/geocodage/search", upstreamtest.Query("q", "rue jules ferry 64110 mazeres-lezons", "limit", "5"), upstreamtest.File(t, "testdata/search_mazeres.json"))
	s.Expect("/geocodage/reverse", upstreamtest.Query("lat", "45.3616477", "lon", "5.593008", "limit", "1"), upstreamtest.File(t, "testdata/reverse.json"))
	c := New(s.Client(t, Name))
	r, err := c.Search(context.Background(), "rue jules ferry 64110 mazeres-lezons", 5)
	if err != nil || len(r.Features) != 1 || r.Features[0].Geometry.Coordinates[1] != 43.277531 || r.Features[0].Properties.Citycode != "64373" {
		t.Fatalf("search = %+v, %v", r, err)
	}
	rv, err := c.Reverse(context.Background(), 45.3616477, 5.593008)
	if err != nil || *rv.Features[0].Properties.Distance != 26 || rv.Features[0].Properties.Citycode != "38563" {
		t.Fatalf("reverse = %+v, %v", rv, err)
	}
}

func TestShortQueryIsAClientError(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect("/geocodage/search", upstreamtest.Query("q", "ab", "limit", "5"), upstreamtest.FileStatus(t, "testdata/bad_q.json", 400))
	_, err := New(s.Client(t, Name)).Search(context.Background(), "ab", 5)
	if upstream.StatusOf(err) != 400 || len(s.Requests()) != 1 {
		t.Fatalf("err = %v after %d calls", err, len(s.Requests()))
	}
}
