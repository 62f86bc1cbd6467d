package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/mcp"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/render"
	"github.com/peage/appliance/api/routes/chain"
	"github.com/peage/appliance/api/upstream/chainrpc"
	"github.com/peage/appliance/internal/testenv"
	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/exact"
	"github.com/peage/appliance/settle/settletest"
	"github.com/peage/appliance/settle/x402"
)

// The interop tests run the official MCP clients against the real server on the embedded
// chain: the verifying gate over the settle daemon's facilitator, and the chain routes reading
// that chain, so that the tool called (chain_balance: the payer's balances) answers for real
// with an answer whose shape its outputSchema describes (an object, a nested object, an array
// of objects).

const (
	balanceTool  = "chain_balance"
	balancePrice = 5_000
)

type chainWorld struct {
	dev  *settle.Dev
	base string
}

func startChain(t *testing.T) *chainWorld {
	t.Helper()
	testenv.NeedsChain(t)
	dev, fc := settletest.StartDev(t)
	cfg := paywall.Config{Network: dev.Network, Asset: dev.Asset, PayTo: dev.PayTo, TokenName: dev.TokenName, TokenVersion: dev.TokenVersion, MaxTimeoutSeconds: 60}
	gate := paywall.New(cfg, paywall.Policy{Settlement: x402.ModeSync}, fc, paywall.GateOptions{})
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	cc := chainrpc.DefaultConfig()
	cc.RPC, cc.USDC, cc.RatePerSecond, cc.Burst, cc.Timeout = dev.RPCURL, dev.Asset, 1000, 1000, 5*time.Second
	rc, err := chainrpc.New(cc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.Close)
	if err := chain.With(chain.Parts{Client: rc}).Bind(cat); err != nil {
		t.Fatal(err)
	}
	h := apitest.Start(t, cat, apitest.Options{Gate: gate, Pay: cfg})
	r := render.New(cat, render.Info{BaseURL: h.BaseURL, Pay: cfg, Version: "test"})
	if err := mcp.New(cat, r, h.Server, h.Server, "test").Bind(cat); err != nil {
		t.Fatal(err)
	}
	// chain.balance gives each client its first call of the day: take it over HTTP, so that
	// every tools/call below is paid.
	resp, err := http.Get(h.BaseURL + "/v1/chain/balance?address=" + dev.Payer)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the free first call: %d", resp.StatusCode)
	}
	return &chainWorld{dev: dev, base: h.BaseURL}
}

func (w *chainWorld) balance(t *testing.T) int64 {
	t.Helper()
	b, err := w.dev.Chain.Balance(context.Background(), common.HexToAddress(w.dev.Payer))
	if err != nil {
		t.Fatal(err)
	}
	return b.Int64()
}

func (w *chainWorld) payerKey(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(w.dev.PayerKey)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// methodLog records the JSON-RPC method of every POST a client sends, and the Mcp-Method
// header beside it.
type methodLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *methodLog) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && req.Body != nil {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
		var m struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(b, &m)
		l.mu.Lock()
		l.calls = append(l.calls, m.Method+" "+req.Header.Get("Mcp-Method"))
		l.mu.Unlock()
	}
	return http.DefaultTransport.RoundTrip(req)
}

func (l *methodLog) sent() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.calls)
}

// validate checks instance against schema with a JSON Schema 2020-12 validator (the one
// go-sdk itself uses).
func validate(schema, instance any) error {
	b, err := json.Marshal(schema)
	if err != nil {
		return err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		return err
	}
	ib, err := json.Marshal(instance)
	if err != nil {
		return err
	}
	var v any
	if err := json.Unmarshal(ib, &v); err != nil {
		return err
	}
	return resolved.Validate(v)
}

// checkBalanceTool checks the listed tool: its answer schema, hints, icon, price and schemes.
func checkBalanceTool(t *testing.T, tool map[string]any) {
	t.Helper()
	out, _ := tool["outputSchema"].(map[string]any)
	if out == nil || out["type"] != "object" {
		t.Fatalf("%s has no object outputSchema: %v", balanceTool, tool["outputSchema"])
	}
	if props, _ := out["properties"].(map[string]any); props["tokens"] == nil || props["native"] == nil {
		t.Fatalf("%s outputSchema lacks the documented fields: %v", balanceTool, out)
	}
	ann, _ := tool["annotations"].(map[string]any)
	if ann["readOnlyHint"] != true || ann["idempotentHint"] != true || ann["openWorldHint"] != true {
		t.Fatalf("%s annotations %v", balanceTool, ann)
	}
	icons, _ := tool["icons"].([]any)
	if len(icons) != 1 || !strings.HasSuffix(icons[0].(map[string]any)["src"].(string), paywall.IconPath) {
		t.Fatalf("%s icons %v", balanceTool, icons)
	}
	meta, _ := tool["_meta"].(map[string]any)
	if meta["x402/amount"] != "5000" || !slices.Contains(meta["x402/schemes"].([]any), any("exact")) {
		t.Fatalf("%s _meta %v", balanceTool, meta)
	}
}

func asMap(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestGoSDKClientAtEachRevision: go-sdk v1.8.0's client at 2026-07-28 reaches the server by
// server/discover alone (no initialize) and sends the Mcp-Method header; at 2025-11-25 it opens
// with initialize. At each, it lists the tools, gets the PaymentRequired from an unpaid call,
// pays the second on the embedded chain, and the result's structuredContent conforms to the
// listed outputSchema; the receipt comes back in _meta["x402/payment-response"].
func TestGoSDKClientAtEachRevision(t *testing.T) {
	w := startChain(t)
	key, err := settle.LoadKey(w.dev.PayerKey)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		revision string
		opening  string // the first request the client sends
	}{
		{"2026-07-28", "server/discover server/discover"},
		{"2025-11-25", "initialize "},
	}
	for _, c := range cases {
		t.Run(c.revision, func(t *testing.T) {
			ctx := context.Background()
			log := &methodLog{}
			session, err := sdk.NewClient(&sdk.Implementation{Name: "peage-interop", Version: "1"}, nil).Connect(ctx,
				&sdk.StreamableClientTransport{Endpoint: w.base + "/mcp", HTTPClient: &http.Client{Transport: log}},
				&sdk.ClientSessionOptions{ProtocolVersion: c.revision})
			if err != nil {
				t.Fatal(err)
			}
			defer session.Close()
			if got := session.InitializeResult().ProtocolVersion; got != c.revision {
				t.Fatalf("negotiated %s, want %s", got, c.revision)
			}
			list, err := session.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var tool map[string]any
			for _, tl := range list.Tools {
				if tl.Name == balanceTool {
					tool = asMap(t, tl)
				}
			}
			if tool == nil || len(list.Tools) < 140 {
				t.Fatalf("%d tools, %s listed: %v", len(list.Tools), balanceTool, tool != nil)
			}
			checkBalanceTool(t, tool)
			sent := log.sent()
			if sent[0] != c.opening || (c.revision == "2026-07-28") == slices.ContainsFunc(sent, func(s string) bool { return strings.HasPrefix(s, "initialize") }) {
				t.Fatalf("requests sent: %v", sent)
			}
			if c.revision == "2026-07-28" && (list.TTLMs <= 0 || list.CacheScope != "public") {
				t.Fatalf("tools/list caching hints ttlMs=%d cacheScope=%q", list.TTLMs, list.CacheScope)
			}

			args := map[string]any{"address": w.dev.Payer}
			res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: balanceTool, Arguments: args})
			if err != nil || !res.IsError {
				t.Fatalf("unpaid call: %v %+v", err, res)
			}
			var pr x402.PaymentRequired
			b, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(b, &pr); err != nil || len(pr.Accepts) != 1 || pr.Accepts[0].Amount != "5000" {
				t.Fatalf("unpaid call's structuredContent: %s", b)
			}
			payload, err := exact.NewPayload(key, 2, &pr.Accepts[0], &pr.Resource, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			before := w.balance(t)
			res, err = session.CallTool(ctx, &sdk.CallToolParams{Name: balanceTool, Arguments: args, Meta: sdk.Meta{"x402/payment": asMap(t, payload)}})
			if err != nil || res.IsError {
				t.Fatalf("paid call: %v %+v", err, res)
			}
			if err := validate(tool["outputSchema"], res.StructuredContent); err != nil {
				t.Fatalf("structuredContent does not conform to the outputSchema: %v", err)
			}
			// The validator is not vacuous: the same answer with tokens as a string fails it.
			broken := asMap(t, res.StructuredContent)
			broken["tokens"] = "none"
			if validate(tool["outputSchema"], broken) == nil {
				t.Fatal("the outputSchema accepts tokens that are not an array")
			}
			if got := asMap(t, res.StructuredContent)["address"]; !strings.EqualFold(got.(string), w.dev.Payer) {
				t.Fatalf("balance of %v, want the payer's", got)
			}
			var receipt x402.SettlementResponse
			rb, _ := json.Marshal(res.Meta["x402/payment-response"])
			if err := json.Unmarshal(rb, &receipt); err != nil || !receipt.Success || receipt.Transaction == "" {
				t.Fatalf("receipt %s", rb)
			}
			if moved := before - w.balance(t); moved != balancePrice {
				t.Fatalf("payer paid %d, want %d", moved, balancePrice)
			}
		})
	}
}

// TestTypeScriptSDKClientAtEachRevision: @modelcontextprotocol/sdk 1.32.2's client, at
// 2025-11-25 and at 2025-06-18, lists the tools, pays a call with @x402/evm on the embedded
// chain and validates the result against the listed outputSchema itself (settle/npm/mcp-client.mjs).
func TestTypeScriptSDKClientAtEachRevision(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed; run ops/setup.sh")
	}
	npm := filepath.Join("..", "..", "settle", "npm")
	if _, err := os.Stat(filepath.Join(npm, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		t.Fatal("the MCP TypeScript SDK is not installed; run make setup")
	}
	w := startChain(t)
	for _, revision := range []string{"2025-11-25", "2025-06-18"} {
		t.Run(revision, func(t *testing.T) {
			before := w.balance(t)
			args, _ := json.Marshal(map[string]any{"address": w.dev.Payer})
			cmd := exec.Command(node, filepath.Join(npm, "mcp-client.mjs"), w.base+"/mcp", revision, balanceTool, string(args),
				w.payerKey(t), w.dev.Asset, "100000")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("node client: %v\n%s\n%s", err, out, stderr.String())
			}
			var got struct {
				ProtocolVersion string         `json:"protocolVersion"`
				ServerVersion   map[string]any `json:"serverVersion"`
				ToolCount       int            `json:"toolCount"`
				Tool            map[string]any `json:"tool"`
				OutputValidated bool           `json:"outputValidated"`
				Unpaid          struct {
					Accepts []struct {
						Amount string `json:"amount"`
					} `json:"accepts"`
				} `json:"unpaid"`
				Paid struct {
					IsError           bool           `json:"isError"`
					StructuredContent map[string]any `json:"structuredContent"`
					Meta              map[string]any `json:"meta"`
				} `json:"paid"`
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if got.ProtocolVersion != revision || got.ToolCount < 140 || got.ServerVersion["name"] != "peage" {
				t.Fatalf("revision %s, %d tools, server %v", got.ProtocolVersion, got.ToolCount, got.ServerVersion)
			}
			checkBalanceTool(t, got.Tool)
			if !got.OutputValidated || got.Paid.IsError || got.Paid.StructuredContent["tokens"] == nil {
				t.Fatalf("paid call: validated %v, %+v", got.OutputValidated, got.Paid)
			}
			if len(got.Unpaid.Accepts) != 1 || got.Unpaid.Accepts[0].Amount != "5000" {
				t.Fatalf("unpaid call's PaymentRequired %+v", got.Unpaid)
			}
			receipt, _ := got.Paid.Meta["x402/payment-response"].(map[string]any)
			if receipt["success"] != true || receipt["transaction"] == "" {
				t.Fatalf("receipt %v", got.Paid.Meta)
			}
			if moved := before - w.balance(t); moved != balancePrice {
				t.Fatalf("payer paid %d, want %d", moved, balancePrice)
			}
		})
	}
}

// TestRecordedAnswersConformToTheirOutputSchema: the answers the web routes gave on their test
// pages (api/routes/web TestGolden's golden files, real runs through the browser) validate
// against the outputSchema their tools list, so an MCP client that validates, as the
// TypeScript SDK does, accepts them.
func TestRecordedAnswersConformToTheirOutputSchema(t *testing.T) {
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	recorded := []struct{ golden, path string }{
		{"extract_article", "/v1/extract"}, {"extract_js", "/v1/extract"},
		{"extract_verified_article", "/v1/extract/verified"}, {"extract_verified_short", "/v1/extract/verified"},
		{"free_extract_article", "/free/extract"}, {"links_article", "/v1/links"}, {"meta_article", "/v1/meta"},
		{"tables", "/v1/web/tables"}, {"jsonld_article", "/v1/web/jsonld"}, {"contacts", "/v1/web/contacts"},
		{"prices", "/v1/web/prices"}, {"headings_article", "/v1/web/headings"}, {"forms", "/v1/web/forms"},
		{"images_article", "/v1/web/images"}, {"images", "/v1/web/images"}, {"navigation_article", "/v1/web/navigation"},
		{"changed_baseline", "/v1/web/changed"}, {"unblock_text", "/v1/unblock"}, {"unblock_plain_fetch", "/v1/unblock"},
	}
	documented := 0
	for _, c := range recorded {
		if len(cat.ByPath(c.path).OutputSchema()["properties"].(map[string]any)) > 0 {
			documented++
		}
		t.Run(c.golden, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("..", "routes", "web", "testdata", c.golden+".golden.json"))
			if err != nil {
				t.Fatal(err)
			}
			var answer map[string]any
			if err := json.Unmarshal(b, &answer); err != nil {
				t.Fatal(err)
			}
			if err := validate(cat.ByPath(c.path).OutputSchema(), answer); err != nil {
				t.Fatalf("the answer of %s does not conform to its outputSchema: %v", c.path, err)
			}
		})
	}
	if documented < 10 {
		t.Fatalf("only %d of the recorded answers have documented fields to check", documented)
	}
}
