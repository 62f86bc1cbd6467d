package catalog

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

func TestDefaultTableIsValid(t *testing.T) {
	c, err := Default(DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range c.Entries() {
		if e.Kind == Paid {
			n++
		}
	}
	if n < 120 {
		t.Fatalf("only %d paid routes in the table", n)
	}
	t.Logf("%d entries, %d paid", len(c.Entries()), n)
}

// TestEverySpecRouteIsDeclared reads the service interface (a snapshot kept in testdata) and
// checks that each path of its endpoint tables is in the catalog.
func TestEverySpecRouteIsDeclared(t *testing.T) {
	spec, err := os.ReadFile("testdata/service-interface.md")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Default(DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	n := DefaultNames()
	neutral := strings.NewReplacer("<classifieds_a>", n.ClassifiedsA, "<listings_b>", n.ListingsB,
		"<marketplace>", n.Marketplace, "<actor_marketplace>", n.ActorMarketplace)
	rowPath := regexp.MustCompile(`^\| (GET|POST) \| ([^|]+) \|`)
	seen := 0
	for _, line := range strings.Split(string(spec), "\n") {
		m := rowPath.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for _, p := range strings.Split(m[2], ",") {
			p = neutral.Replace(strings.TrimSpace(p))
			seen++
			if c.ByPath(p) == nil {
				t.Errorf("spec route %s %s is not in the catalog", m[1], p)
			}
		}
	}
	if seen < 130 {
		t.Fatalf("parsed only %d spec routes; the table format changed?", seen)
	}
	t.Logf("%d spec routes, all declared", seen)
}
