package catalog

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/peage/appliance/api/apierr"
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

// TestEverySpecRouteIsDeclared reads the service interface (the snapshot in spec/, which the answers are derived from too) and
// checks that each path of its endpoint tables is in the catalog.
func TestEverySpecRouteIsDeclared(t *testing.T) {
	spec, err := os.ReadFile("spec/service-interface.md")
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

// TestBindCheckRunsAtDecoding: a family's check across parameters runs after the parameters
// decode (so before any 402), and only on input they accept.
func TestBindCheckRunsAtDecoding(t *testing.T) {
	c, err := Default(DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	if err := c.BindCheck("agent.task", func(a Args) error {
		seen = append(seen, a.Str("objective"))
		if a.Has("budget") && a.Float("budget") < 0.02 {
			return apierr.BadParam("budget", "too small for the plan")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	e := c.Entry("agent.task")
	if _, err := e.Decode(map[string]any{"objective": "read https://example.com/", "budget": 0.5}); err != nil {
		t.Errorf("accepted input refused: %v", err)
	}
	if _, err := e.Decode(map[string]any{"objective": "read https://example.com/", "budget": 0.01}); apierr.From(err).Param != "budget" {
		t.Errorf("the check's refusal is not returned: %v", err)
	}
	if _, err := e.Decode(map[string]any{"objective": "x"}); err == nil || len(seen) != 2 {
		t.Errorf("a parameter refusal must come first, without the check: %v, check saw %q", err, seen)
	}
	if err := c.BindCheck("no.such", func(Args) error { return nil }); err == nil {
		t.Error("a check bound to no entry")
	}
}

// TestBindTwiceFails: a second binding of an entry is an error naming it, at start, instead
// of silently replacing the first family's handler.
func TestBindTwiceFails(t *testing.T) {
	c, err := Default(DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	h := func(context.Context, *Request) (any, error) { return nil, nil }
	if err := c.Bind("dns", h, nil); err != nil {
		t.Fatal(err)
	}
	err = c.Bind("dns", h, nil)
	if err == nil || !strings.Contains(err.Error(), "dns") {
		t.Fatalf("binding dns twice: %v, want an error naming dns", err)
	}
	if slices.Contains(c.Unbound(), "dns") || !slices.Contains(c.Unbound(), "vin.decode") {
		t.Errorf("Unbound = %v, want vin.decode and not dns", c.Unbound())
	}
}
