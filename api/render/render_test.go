package render

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/internal/goldenfile"
)

func testRenderer(t *testing.T) *Renderer {
	t.Helper()
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	// A few bound routes, so "available" renders both ways.
	for _, id := range []string{"fr.tva", "fr.iban", "extract"} {
		_ = cat.Bind(id, func(context.Context, *catalog.Request) (any, error) { return nil, nil }, nil)
	}
	// The DVF example year follows the clock (the data covers the last five years); pin it so
	// the golden files do not change on New Year's Day.
	cat.Entry("fr.valeurs-foncieres").Example["annee"] = "2025"
	pay := paywall.DefaultConfig()
	pay.PayTo = "0x000000000000000000000000000000000000dEaD"
	pay.ReceiverAuthorizer = "0x000000000000000000000000000000000000bEEF"
	return New(cat, Info{BaseURL: "https://peage.example", Pay: pay, Version: "test"})
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if goldenfile.Update() {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./api/render -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from the golden file; review the change and run go test ./api/render -update", name)
	}
}

func TestGoldenRenderings(t *testing.T) {
	r := testRenderer(t)
	cases := map[string][]byte{
		"catalog.golden.json":      JSON(r.Catalog()),
		"openapi.golden.json":      JSON(r.OpenAPI()),
		"llms.golden.txt":          []byte(r.LLMSTxt()),
		"x402.golden.json":         JSON(r.X402()),
		"agent-skills.golden.json": JSON(r.AgentSkills()),
		"mcp-manifest.golden.json": JSON(r.MCPManifest()),
		"mcp-tools.golden.json":    JSON(r.Tools()),
	}
	for name, got := range cases {
		t.Run(name, func(t *testing.T) { golden(t, name, got) })
	}
}

// TestOpenAPIIsValid runs the document through a real OpenAPI 3.1 validator (libopenapi's
// schema validation against the official 3.1 meta-schema).
func TestOpenAPIIsValid(t *testing.T) {
	r := testRenderer(t)
	doc, err := libopenapi.NewDocument(JSON(r.OpenAPI()))
	if err != nil {
		t.Fatal(err)
	}
	if v := doc.GetVersion(); v != "3.1.0" {
		t.Fatalf("version %s", v)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("validator: %v", errs)
	}
	ok, verrs := v.ValidateDocument()
	if !ok {
		for _, e := range verrs {
			t.Errorf("%s: %s", e.Message, e.Reason)
			for _, se := range e.SchemaValidationErrors {
				t.Errorf("  %s at %s", se.Reason, se.Location)
			}
		}
	}
	model, merrs := doc.BuildV3Model()
	if len(merrs) > 0 {
		t.Fatalf("model: %v", merrs)
	}
	if n := model.Model.Paths.PathItems.Len(); n < 150 {
		t.Fatalf("only %d paths", n)
	}
}

// TestOpenAPIRejectsABrokenDocument proves the validator above can fail.
func TestOpenAPIRejectsABrokenDocument(t *testing.T) {
	doc, err := libopenapi.NewDocument([]byte(`{"openapi":"3.1.0","info":{"title":"x","version":"1"},"paths":{"/a":{"get":{"parameters":[{"name":"q","in":"querystring"}],"responses":{"200":{"description":"ok"}}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	v, _ := validator.NewValidator(doc)
	if ok, _ := v.ValidateDocument(); ok {
		t.Fatal("a parameter with in:querystring passed validation")
	}
}

func TestUSD(t *testing.T) {
	for atomic, want := range map[uint64]string{0: "0", 5000: "0.005", 10000: "0.01", 3500000: "3.5", 52000000: "52", 1: "0.000001"} {
		if got := USD(atomic); got != want {
			t.Errorf("USD(%d) = %s, want %s", atomic, got, want)
		}
	}
}

func TestLLMSTxtListsEveryPaidRoute(t *testing.T) {
	r := testRenderer(t)
	txt := r.LLMSTxt()
	if !strings.HasPrefix(txt, "# ") || !strings.Contains(txt, "\n> ") {
		t.Fatal("llms.txt must start with an H1 title and a summary blockquote")
	}
	for _, e := range r.paid() {
		if !strings.Contains(txt, "("+r.info.BaseURL+e.Path+")") {
			t.Errorf("llms.txt lacks %s", e.Path)
		}
	}
}

// toolNamePattern is what several model APIs accept for a tool or function name.
var toolNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// TestToolNamesPassEveryModelAPI: an agent can hand the tool list straight to a model, so
// every name must match the strictest pattern in use and name one route only.
func TestToolNamesPassEveryModelAPI(t *testing.T) {
	r := testRenderer(t)
	tools := r.Tools()
	if len(tools) < 140 {
		t.Fatalf("only %d tools", len(tools))
	}
	seen := map[string]string{}
	for _, tool := range tools {
		if !toolNamePattern.MatchString(tool.Name) {
			t.Errorf("tool name %q does not match %s", tool.Name, toolNamePattern)
		}
		if prev, dup := seen[tool.Name]; dup {
			t.Errorf("tool name %q names both %s and %s", tool.Name, prev, tool.Title)
		}
		seen[tool.Name] = tool.Title
	}
}

// TestToolAnnotations: the MCP hints follow the route's nature, not its method: a POST that
// reads a page is read-only, a GET that sells proxy credentials is not; a route answered
// from the box's own rules is closed-world; a route with a JSON answer has its outputSchema,
// a binary one none.
func TestToolAnnotations(t *testing.T) {
	byName := map[string]Tool{}
	for _, tool := range testRenderer(t).Tools() {
		byName[tool.Name] = tool
	}
	cases := []struct {
		tool                            string
		readOnly, idempotent, openWorld bool
		outputSchema                    bool
	}{
		{"extract", true, true, true, true},
		{"chain_balance", true, true, true, true},
		{"fr_tva", true, true, false, true},
		{"fr_iban", true, true, false, true},
		{"screenshot", true, true, true, false},
		{"publish", false, false, true, true},
		{"callbacks", false, false, true, true},
		{"proxy_1gb", false, false, true, true},
		{"sms_number", false, false, true, true},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			tool, ok := byName[c.tool]
			if !ok {
				t.Fatal("not listed")
			}
			a := tool.Annotations
			if a.ReadOnlyHint != c.readOnly || a.IdempotentHint != c.idempotent || a.OpenWorldHint != c.openWorld {
				t.Fatalf("annotations %+v", a)
			}
			if !c.readOnly && (a.DestructiveHint == nil || *a.DestructiveHint) {
				t.Fatal("a route that creates something must say it only adds (destructiveHint false)")
			}
			if (tool.OutputSchema != nil) != c.outputSchema {
				t.Fatalf("outputSchema %v", tool.OutputSchema)
			}
			if len(tool.Icons) != 1 || tool.Icons[0].Src != "https://peage.example/icon.svg" {
				t.Fatalf("icons %+v", tool.Icons)
			}
		})
	}
}

// TestAnswerSchemaIsShared: OpenAPI's 200 schema and MCP's outputSchema are the one schema
// the catalog derives from the spec (Entry.OutputSchema), for every tool with a JSON answer.
func TestAnswerSchemaIsShared(t *testing.T) {
	r := testRenderer(t)
	paths := r.OpenAPI()["paths"].(map[string]any)
	shared := 0
	for _, tool := range r.Tools() {
		if tool.OutputSchema == nil {
			continue
		}
		method, path, _ := strings.Cut(tool.Title, " ")
		op := paths[path].(map[string]any)[strings.ToLower(method)].(map[string]any)
		schema := op["responses"].(map[string]any)["200"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"]
		if !reflect.DeepEqual(schema, tool.OutputSchema) {
			t.Errorf("%s: OpenAPI answers %v, MCP %v", tool.Name, schema, tool.OutputSchema)
		}
		shared++
	}
	if shared < 130 {
		t.Fatalf("only %d tools with an answer schema", shared)
	}
}

func TestToolName(t *testing.T) {
	long := strings.Repeat("a.", 40)
	cases := []struct{ id, want string }{
		{"fr.tva", "fr_tva"},
		{"fr.kyb.partial", "fr_kyb_partial"},
		{"fr.valeurs-foncieres", "fr_valeurs-foncieres"},
		{"extract", "extract"},
		{"petites-annonces.é", "petites-annonces__"},
		{long, long[:55] + "_"},
	}
	for _, c := range cases {
		got := ToolName(&catalog.Entry{ID: c.id})
		if c.id == long {
			// The hash suffix keeps two long IDs with the same first 55 characters apart.
			other := ToolName(&catalog.Entry{ID: long + "b"})
			if len(got) != 64 || !strings.HasPrefix(got, strings.ReplaceAll(c.want, ".", "_")) || got == other || !toolNamePattern.MatchString(got) {
				t.Errorf("ToolName(%q) = %q (other %q)", c.id, got, other)
			}
			continue
		}
		if got != c.want {
			t.Errorf("ToolName(%q) = %q, want %q", c.id, got, c.want)
		}
	}
}
