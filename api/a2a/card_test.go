package a2a_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/peage/appliance/api/a2a"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/render"
	"github.com/peage/appliance/api/server"
	"github.com/peage/appliance/internal/goldenfile"
)

// TestCardGolden shows every change of the card in review, as the other discovery documents'
// goldens do (go test ./api/a2a -update rewrites it).
func TestCardGolden(t *testing.T) {
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	// The DVF example year follows the clock; pin it as the render goldens do.
	cat.Entry("fr.valeurs-foncieres").Example["annee"] = "2025"
	got := render.JSON(a2a.Card(cat, "https://peage.example", "/a2a"))
	path := filepath.Join("testdata", "agent-card.golden.json")
	if goldenfile.Update() {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./api/a2a -update creates it)", err)
	}
	if string(got) != string(want) {
		t.Fatal("the card differs from testdata/agent-card.golden.json; review the change and run go test ./api/a2a -update")
	}
}

// TestCardHasASkillPerFamilyNamingEveryRoute: a client can only call a route it can name, so
// every paid or free route appears in its family's skill, with the call's shape and a price.
func TestCardHasASkillPerFamilyNamingEveryRoute(t *testing.T) {
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	var card struct {
		Skills []struct {
			ID, Description string
			Examples        []string
		}
	}
	if err := json.Unmarshal(render.JSON(a2a.Card(cat, "https://peage.example", "/a2a")), &card); err != nil {
		t.Fatal(err)
	}
	skills := map[string]string{}
	for _, s := range card.Skills {
		skills[s.ID] = s.Description
		if !strings.Contains(s.Description, `{"route": "<route id or path>", "params": {...}}`) || !strings.Contains(s.Description, "USDC a call") {
			t.Errorf("skill %s does not say how to call it or what it costs: %s", s.ID, s.Description)
		}
		for _, ex := range s.Examples {
			var call struct {
				Route  string         `json:"route"`
				Params map[string]any `json:"params"`
			}
			if err := json.Unmarshal([]byte(ex), &call); err != nil || cat.Entry(call.Route) == nil {
				t.Errorf("skill %s example %s is not a call", s.ID, ex)
			}
		}
	}
	for _, e := range cat.Entries() {
		if render.IsTool(e) && !strings.Contains(skills[e.Family], e.ID+" ("+e.Method+" "+e.Path) {
			t.Errorf("route %s is not in skill %s", e.ID, e.Family)
		}
	}
}

// TestEndpointOutlastsEveryCall: a paid message (A2A) or tools/call (MCP) runs its route and
// its settlement inside the endpoint's call, so the endpoint's deadline must outlast both for
// every route; otherwise a call settled after it would be answered 504.
func TestEndpointOutlastsEveryCall(t *testing.T) {
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a2a", "mcp"} {
		endpoint := cat.Entry(id).Timeout
		for _, e := range cat.Entries() {
			if render.IsTool(e) && e.Timeout+server.SettleBudget > endpoint {
				t.Errorf("%s may take %s and its settlement %s: more than /%s's %s", e.ID, e.Timeout, server.SettleBudget, id, endpoint)
			}
		}
	}
}
