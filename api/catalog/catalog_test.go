package catalog

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strconv"
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

// TestEverySpecRouteIsDeclared reads the service interface (the snapshot in spec/, which the
// answers are derived from too) and checks that each path of its endpoint tables is in the
// catalog with the spec's method and list price (a free route at 0; where the spec's listings
// of a route differ, either listed price), and that every /partial route costs less than its
// full route.
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
	alternatives := listedPrices(t, string(spec))
	seen := 0
	for _, line := range strings.Split(string(spec), "\n") {
		m := specRoute.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		cells := strings.Split(strings.Trim(strings.ReplaceAll(line, `\|`, ""), "| "), " | ")
		paths := strings.Split(m[2], ",")
		var prices []string // the price column, one per path ("3.50, 15.00, 52.00"); none on the free tables
		if len(cells) == 5 {
			prices = strings.Split(cells[4], ",")
		}
		for i, p := range paths {
			p = neutral.Replace(strings.TrimSpace(p))
			seen++
			e := c.ByPath(p)
			if e == nil {
				t.Errorf("spec route %s %s is not in the catalog", m[1], p)
				continue
			}
			if e.Method != m[1] {
				t.Errorf("%s: the catalog documents %s, the spec %s", p, e.Method, m[1])
			}
			want := []uint64{0}
			if prices != nil {
				if len(prices) != len(paths) {
					t.Fatalf("%s: %d prices for %d paths", line, len(prices), len(paths))
				}
				want = []uint64{atomicUSD(t, prices[i])}
				want = append(want, alternatives[strings.TrimPrefix(p, "/v1/")]...)
			}
			if !slices.Contains(want, e.Price) {
				t.Errorf("%s costs %d atomic units, the spec lists %v", p, e.Price, want)
			}
		}
	}
	if seen < 130 {
		t.Fatalf("parsed only %d spec routes; the table format changed?", seen)
	}
	partials := 0
	for _, e := range c.Entries() {
		if full, ok := strings.CutSuffix(e.Path, "/partial"); ok {
			partials++
			switch f := c.ByPath(full); {
			case f == nil:
				t.Errorf("%s has no full route %s", e.Path, full)
			case e.Price >= f.Price:
				t.Errorf("%s costs %d, not less than its full route %s (%d)", e.Path, e.Price, full, f.Price)
			}
		}
	}
	if partials == 0 {
		t.Fatal("no /partial route in the catalog")
	}
	t.Logf("%d spec routes declared with their method and price, %d partial routes cheaper than their full route", seen, partials)
}

var (
	specRoute  = regexp.MustCompile(`^\| (GET|POST) \| ([^|]+) \|`)
	listedRule = regexp.MustCompile(`([a-z0-9/-]+(?: and [a-z0-9/-]+)?) ([0-9]+\.[0-9]+) or ([0-9]+\.[0-9]+)`)
)

// listedPrices reads the pricing rule naming the routes whose listings differ ("extract
// 0.005 or 0.01; search and search/news 0.003 or 0.01"): path after /v1/ to its prices.
func listedPrices(t *testing.T, spec string) map[string][]uint64 {
	_, rule, ok := strings.Cut(spec, "Listings differ for several routes:")
	if !ok {
		t.Fatal("the spec's pricing rule on differing listings is gone")
	}
	rule, _, _ = strings.Cut(rule, "\n")
	out := map[string][]uint64{}
	for _, m := range listedRule.FindAllStringSubmatch(rule, -1) {
		for _, p := range strings.Split(m[1], " and ") {
			out[p] = []uint64{atomicUSD(t, m[2]), atomicUSD(t, m[3])}
		}
	}
	if len(out) < 10 {
		t.Fatalf("read only %v from the pricing rule", out)
	}
	return out
}

// atomicUSD reads a USD price ("0.005", "52.00") as atomic units, without a float.
func atomicUSD(t *testing.T, s string) uint64 {
	whole, frac, _ := strings.Cut(strings.TrimSpace(s), ".")
	if len(frac) > 6 {
		t.Fatalf("price %q below the atomic unit", s)
	}
	n, err := strconv.ParseUint(whole+frac+strings.Repeat("0", 6-len(frac)), 10, 64)
	if err != nil {
		t.Fatalf("price %q: %v", s, err)
	}
	return n
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

func TestOverrideOnlyABoundEntry(t *testing.T) {
	cat, err := Default(DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	h := func(context.Context, *Request) (any, error) { return nil, nil }
	if err := cat.Override("fr.tva", h, nil); err == nil {
		t.Fatal("an entry no family bound was overridden")
	}
	if err := cat.Bind("fr.tva", h, nil); err != nil {
		t.Fatal(err)
	}
	if err := cat.Override("fr.tva", h, nil); err != nil {
		t.Fatalf("override of a bound entry: %v", err)
	}
}

// TestExitDependentRoutes: the routes whose answer depends on the box's exit are unblock (its
// country parameter) and the French listings read through the box's residential line, which
// need an exit in France; a fleet derives the box a call needs from these.
func TestExitDependentRoutes(t *testing.T) {
	c, err := Default(DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{ // entry → the exit its example call needs
		"unblock": "FR", "fr.petites-annonces": "FR", "fr.annonces-immo": "FR", "fr.immo": "FR", "fr.biens-sous-cotes": "FR",
	}
	for _, e := range c.Entries() {
		need, dependent := want[e.ID]
		if e.ExitDependent() != dependent {
			t.Errorf("%s: exit dependent %v, want %v", e.ID, e.ExitDependent(), dependent)
			continue
		}
		if !dependent {
			continue
		}
		args, err := e.Decode(e.Example)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.ExitFor(args); got != need {
			t.Errorf("%s: its example call needs an exit in %q, want %q", e.ID, got, need)
		}
	}

	for _, tc := range []struct {
		name string
		e    Entry
	}{
		{"fixed and asked for", route("web", "GET", "/v1/x", 1000, "x", S("country", "c")).exit("fr").exitFrom("country")},
		{"not a country", route("web", "GET", "/v1/x", 1000, "x").exit("france")},
		{"no such parameter", route("web", "GET", "/v1/x", 1000, "x").exitFrom("country")},
		{"not a string parameter", route("web", "GET", "/v1/x", 1000, "x", I("country", "c")).exitFrom("country")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New([]Entry{tc.e}); err == nil {
				t.Fatal("the catalog accepts it")
			}
		})
	}
}
