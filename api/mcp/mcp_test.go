package mcp_test

import (
	"context"
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/mcp"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/render"
)

func start(t *testing.T, gate paywall.Gate) (*apitest.Harness, *sdk.ClientSession) {
	t.Helper()
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	_ = cat.Bind("fr.tva", func(_ context.Context, r *catalog.Request) (any, error) {
		return map[string]any{"siren": r.Args.Str("siren")}, nil
	}, nil)
	h := apitest.Start(t, cat, apitest.Options{Gate: gate})
	pay := paywall.DefaultConfig()
	pay.PayTo = apitest.TestPayTo
	r := render.New(cat, render.Info{BaseURL: h.BaseURL, Pay: pay, Version: "test"})
	if err := mcp.New(cat, r, h.Server, h.Server, "test").Bind(cat); err != nil {
		t.Fatal(err)
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "peage-test", Version: "1"}, nil)
	session, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: h.BaseURL + "/mcp"}, nil)
	if err != nil {
		t.Fatalf("the official MCP client could not connect: %v", err)
	}
	t.Cleanup(func() { session.Close() })
	return h, session
}

func TestOfficialClientListsEveryRouteAsATool(t *testing.T) {
	_, session := start(t, nil)
	res, err := session.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range res.Tools {
		names[tool.Name] = true
		if tool.InputSchema == nil {
			t.Errorf("tool %s has no input schema", tool.Name)
		}
	}
	for _, want := range []string{"extract", "fr_tva", "chain_gas", "proxy_1gb", "free_extract"} {
		if !names[want] {
			t.Errorf("tool %s missing", want)
		}
	}
	if len(res.Tools) < 140 {
		t.Fatalf("only %d tools", len(res.Tools))
	}
}

func TestUnpaidToolCallReturnsThePaymentRequired(t *testing.T) {
	_, session := start(t, nil)
	res, err := session.CallTool(context.Background(), &sdk.CallToolParams{Name: "fr_tva", Arguments: map[string]any{"siren": "542065479"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError {
		t.Fatal("unpaid call succeeded")
	}
	b, _ := json.Marshal(res.StructuredContent)
	var pr struct {
		X402Version int `json:"x402Version"`
		Accepts     []struct {
			Amount string `json:"amount"`
		} `json:"accepts"`
	}
	if err := json.Unmarshal(b, &pr); err != nil || pr.X402Version != 2 || len(pr.Accepts) != 1 || pr.Accepts[0].Amount != "5000" {
		t.Fatalf("structuredContent %s", b)
	}
	if tc, ok := res.Content[0].(*sdk.TextContent); !ok || tc.Text != string(b) {
		t.Fatalf("content[0] must carry the same PaymentRequired as text")
	}
}

func TestToolCallRunsThroughTheGateAndValidation(t *testing.T) {
	gate := &apitest.RecordingGate{}
	_, session := start(t, gate)
	ctx := context.Background()
	res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: "fr_tva", Arguments: map[string]any{"siren": "542065479"}})
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if string(b) != `{"siren":"542065479"}` {
		t.Fatalf("structured %s", b)
	}
	res, err = session.CallTool(ctx, &sdk.CallToolParams{Name: "fr_tva", Arguments: map[string]any{"siren": "123"}})
	if err != nil || !res.IsError {
		t.Fatalf("bad siren accepted: %v %+v", err, res)
	}
	if charged, _ := gate.Counts(); charged != 1 {
		t.Fatalf("charged %d calls, want 1 (the bad one never reaches the gate)", charged)
	}
	res, err = session.CallTool(ctx, &sdk.CallToolParams{Name: "fr_iban", Arguments: map[string]any{"iban": "FR1420041010050500013M02606"}})
	if err != nil || !res.IsError {
		t.Fatalf("unbound route answered: %v %+v", err, res)
	}
}

// TestToolNames: the listed name and the route ID it replaced both reach the route; names that
// are neither, or that name a route that is not a tool, are refused.
func TestToolNames(t *testing.T) {
	gate := &apitest.RecordingGate{}
	_, session := start(t, gate)
	cases := []struct {
		name string
		ok   bool
	}{
		{"fr_tva", true},
		{"fr.tva", true}, // alias: the name tools/list gave before names had to match ^[a-zA-Z0-9_-]{1,64}$
		{"fr-tva", false},
		{"frtva", false},
		{"mcp", false}, // a route, but not a tool
		{"well-known_x402", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := session.CallTool(context.Background(), &sdk.CallToolParams{Name: c.name, Arguments: map[string]any{"siren": "542065479"}})
			switch {
			case c.ok && (err != nil || res.IsError):
				t.Fatalf("refused: %v %+v", err, res)
			case !c.ok && err == nil:
				t.Fatalf("accepted: %+v", res)
			}
		})
	}
	if charged, _ := gate.Counts(); charged != 2 {
		t.Fatalf("charged %d calls, want 2", charged)
	}
}
