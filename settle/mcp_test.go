package settle_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/mcp"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/render"
	"github.com/peage/appliance/internal/receipt"
	"github.com/peage/appliance/internal/testenv"
	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/exact"
	"github.com/peage/appliance/settle/settletest"
	"github.com/peage/appliance/settle/x402"
)

// TestMCPToolCallIsPaid pays a tools/call the way the x402 MCP transport specifies: the unpaid
// call returns the PaymentRequired object, the paid one carries the payload in
// _meta["x402/payment"], settles on the embedded chain and returns the receipt in _meta.
func TestMCPToolCallIsPaid(t *testing.T) {
	testenv.NeedsChain(t)
	ctx := context.Background()
	dev, fc := settletest.StartDev(t)
	cfg := paywall.Config{Network: dev.Network, Asset: dev.Asset, PayTo: dev.PayTo, TokenName: dev.TokenName, TokenVersion: dev.TokenVersion, MaxTimeoutSeconds: 60}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	keys := testReceiptKeys(t, "http://"+ln.Addr().String())
	gate := paywall.New(cfg, paywall.Policy{Settlement: x402.ModeSync}, fc, paywall.GateOptions{Receipts: keys})
	var entries []catalog.Entry
	for _, e := range testCatalog(t).Entries() {
		entries = append(entries, *e)
	}
	entries = append(entries, catalog.Entry{Method: "POST", Path: "/mcp", Summary: "MCP", Kind: catalog.Discovery, Timeout: 30 * time.Second})
	cat, err := catalog.New(entries)
	if err != nil {
		t.Fatal(err)
	}
	h := apitest.Start(t, cat, apitest.Options{Gate: gate, Pay: cfg, Receipts: keys, Listener: ln})
	r := render.New(cat, render.Info{BaseURL: h.BaseURL, Pay: cfg, Version: "test"})
	if err := mcp.New(cat, r, h.Server, h.Server, "test").Bind(cat); err != nil {
		t.Fatal(err)
	}
	session, err := sdk.NewClient(&sdk.Implementation{Name: "payer", Version: "1"}, nil).
		Connect(ctx, &sdk.StreamableClientTransport{Endpoint: h.BaseURL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	w := &world{dev: dev, base: h.BaseURL, cfg: cfg}
	before := w.balance(t, dev.Payer)

	args := map[string]any{"q": "hello"}
	res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: "test.echo", Arguments: args})
	if err != nil || !res.IsError {
		t.Fatalf("unpaid call: %v %+v", err, res)
	}
	var pr x402.PaymentRequired
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &pr); err != nil || len(pr.Accepts) != 1 || pr.Accepts[0].Amount != "10000" || pr.Extensions[receipt.Extension] == nil {
		t.Fatalf("unpaid call's structuredContent (with its signed offers): %s", b)
	}

	key, err := settle.LoadKey(dev.PayerKey)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := exact.NewPayload(key, 2, &pr.Accepts[0], &pr.Resource, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	pb, _ := json.Marshal(payload)
	_ = json.Unmarshal(pb, &meta)
	res, err = session.CallTool(ctx, &sdk.CallToolParams{Name: "test.echo", Arguments: args, Meta: sdk.Meta{"x402/payment": meta}})
	if err != nil || res.IsError {
		t.Fatalf("paid call: %v %+v", err, res)
	}
	rb, _ := json.Marshal(res.Meta["x402/payment-response"])
	var settled x402.SettlementResponse
	if err := json.Unmarshal(rb, &settled); err != nil || !settled.Success || settled.Transaction == "" {
		t.Fatalf("receipt %s", rb)
	}
	// The signed receipt rides in the payment response, and its statement binds the tool's
	// result as the HTTP route would have delivered it.
	text := res.Content[0].(*sdk.TextContent).Text
	v, err := keys.Published().Verify(receipt.Evidence{PaymentResponse: base64.StdEncoding.EncodeToString(rb), Body: []byte(text),
		ResourceURL: h.BaseURL + "/v1/test/echo"}, time.Now())
	if err != nil || v.Statement.Settlement != receipt.Settled || v.Receipt.Transaction != settled.Transaction {
		t.Fatalf("tools/call receipt: %v %+v", err, v)
	}
	if moved := before - w.balance(t, dev.Payer); moved != price {
		t.Fatalf("payer paid %d, want %d", moved, price)
	}
}
