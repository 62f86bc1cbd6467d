package hackernews

import (
	"context"
	"testing"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestItemDecodesTheNestedThread(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect("/api/v1/items/22665398", nil, upstreamtest.File(t, "testdata/item_22665398.json"))
	s.Expect("/api/v1/items/1", nil, upstreamtest.JSON(404, `{"status":404,"error":"Not Found"}`))
	c := New(s.Client(t, Name))
	it, err := c.Item(context.Background(), 22665398)
	if err != nil {
		t.Fatal(err)
	}
	if it.ID != 22665398 || it.Type != "story" || *it.Title != "Ask HN: Who is hiring right now?" || *it.Author != "whoishiring" ||
		it.URL != nil || *it.Points != 1083 || it.CreatedAt != "2020-03-23T16:13:49.000Z" || len(it.Children) != 2 {
		t.Fatalf("story = %+v", it)
	}
	// The deepest branch: coldpie > fxtentacle > coldpie > awnfuron > dang > awnfuron.
	n := it.Children[1]
	var path []string
	for {
		path = append(path, *n.Author)
		if len(n.Children) == 0 {
			break
		}
		n = n.Children[len(n.Children)-1]
		if *n.Author == "djmips" { // coldpie's last reply is djmips; follow fxtentacle instead
			n = it.Children[1].Children[1]
		}
	}
	if got := len(path); got != 6 || path[5] != "awnfuron" || n.ID != 22666472 || n.Type != "comment" || n.Title != nil || n.Points != nil {
		t.Errorf("deepest branch %v ends at %+v", path, n)
	}
	if _, err := c.Item(context.Background(), 1); !upstream.IsNotFound(err) {
		t.Errorf("missing item: %v, want not found", err)
	}
}
