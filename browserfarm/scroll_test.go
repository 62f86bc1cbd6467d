package browserfarm_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/peage/appliance/browserfarm"
)

// TestScrollFeed: a feed that grows when scrolled is scrolled until enough items are there,
// or until its end marker shows; one that does not grow stops as stalled, and a page
// without the list is read as it is.
func TestScrollFeed(t *testing.T) {
	cases := []struct {
		name, path, container string
		want                  int
		stop                  string
		items                 int // items in the HTML read
		end                   bool
	}{
		{"enough_items", "/feed", "#feed", 8, "want", 10, false},
		{"end_marker", "/feed", "#feed", 50, "end", 12, true},
		{"stalled", "/feed-stuck", "#feed", 8, "stalled", 5, false},
		{"no_container", "/feed", "#nothing", 8, "no_container", 5, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := do(t, browserfarm.Task{URL: env.URL(c.path),
				Scroll: &browserfarm.Scroll{Container: c.container, Items: "#feed li:not(.end)", Want: c.want, End: "#feed li.end"}})
			if err != nil {
				t.Fatal(err)
			}
			s := res.Scrolled
			if s == nil || s.Stop != c.stop || s.Items != c.items {
				t.Fatalf("scrolled %+v, want stop %s with %d items", s, c.stop, c.items)
			}
			if got := len(itemRead.FindAllString(res.HTML, -1)); got != c.items {
				t.Errorf("the page read has %d items, want %d", got, c.items)
			}
			if strings.Contains(res.HTML, "End of the list.") != c.end {
				t.Errorf("end marker in the page read: %v, want %v", !c.end, c.end)
			}
		})
	}
	if res, err := do(t, browserfarm.Task{URL: env.URL("/feed")}); err != nil || res.Scrolled != nil {
		t.Errorf("a task without Scroll: scrolled %+v, err %v", res.Scrolled, err)
	}
}

// itemRead is an item of the page read (the page's script only has "item " + n).
var itemRead = regexp.MustCompile(`>item [0-9]+</li>`)
