package manifold_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/peage/appliance/api/upstream/manifold"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestSearchDecodesTheDocumentedAnswer(t *testing.T) {
	srv := upstreamtest.New(t)
	srv.Expect("/v0/search-markets", upstreamtest.Query("term", "blog post", "sort", "24-hour-vol", "filter", "open", "contractType", "BINARY", "limit", "20"),
		upstreamtest.File(t, filepath.Join("testdata", "markets_doc_example.json")))
	got, err := manifold.New(srv.Client(t, manifold.Name)).Search(context.Background(), "blog post", 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("markets %+v", got)
	}
	m := got[0]
	if m.ID != "EvIhzcJXwhL0HavaszD7" || m.Question != "Will I write a new blog post today?" ||
		m.URL != "https://manifold.markets/Austin/will-i-write-a-new-blog-post-today" || m.OutcomeType != "BINARY" ||
		!m.IsResolved || m.Probability.V != 0.8958175225896258 || m.TotalLiquidity.V != 102.65696071594805 ||
		!m.Volume24Hours.Valid || m.Volume24Hours.V != 0 || m.CloseTime.V != 1653893940000 {
		t.Errorf("market %+v", m)
	}
}
