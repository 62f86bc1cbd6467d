package relay

import (
	"strconv"
	"testing"
)

// TestBoxCacheIsBounded: the gateway's cache of package → box holds at most its bound, however
// many packages are sold while it runs, and still answers the package put last.
func TestBoxCacheIsBounded(t *testing.T) {
	c := boxCache{max: 10}
	for i := range 35 {
		c.put(strconv.Itoa(i), "box-"+strconv.Itoa(i%3))
		c.put(strconv.Itoa(i), "box-"+strconv.Itoa(i%3)) // a second put of one package counts once
	}
	held := 0
	c.m.Range(func(any, any) bool { held++; return true })
	if held > 10 || held == 0 {
		t.Fatalf("the cache holds %d entries, want 1 to 10", held)
	}
	if box, ok := c.get("34"); !ok || box != "box-1" {
		t.Fatalf("the last package put: %q %v, want box-1", box, ok)
	}
}
