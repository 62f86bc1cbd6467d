package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/routes/fr"
	llmroutes "github.com/peage/appliance/api/routes/llm"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/exact"
	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/settletest"
	"github.com/peage/appliance/settle/x402"
)

// TestSolveNeverSellsADearerCapability (issue 34, item 2): /v1/solve, paid its flat 0.05 USDC
// on the embedded chain, refuses a task routed to a dearer capability (the 1 USDC agent-readiness
// audit, named or recognised) with a 400 naming it and its direct call, charging nothing; a
// cheaper capability is served and the ledger records the 0.05 actually charged.
func TestSolveNeverSellsADearerCapability(t *testing.T) {
	ctx := context.Background()
	dev, fc := settletest.StartDev(t)
	cfg := paywall.Config{Network: dev.Network, Asset: dev.Asset, PayTo: dev.PayTo, TokenName: dev.TokenName, TokenVersion: dev.TokenVersion, MaxTimeoutSeconds: 60}
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	specs, err := upstream.Resolve(upstream.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	french, err := fr.With(fr.Parts{Upstreams: specs})
	if err != nil {
		t.Fatal(err)
	}
	if err := french.Bind(cat); err != nil {
		t.Fatal(err)
	}
	if err := llmroutes.With(llmroutes.Parts{}).Bind(cat); err != nil {
		t.Fatal(err)
	}
	// The audit's answer does not matter here, its price does: bound, it would serve.
	audited := 0
	if err := cat.Bind("site.agent-readiness", func(context.Context, *catalog.Request) (any, error) {
		audited++
		return map[string]any{"score": 100}, nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	gate := paywall.New(cfg, paywall.Policy{Settlement: x402.ModeSync}, fc, paywall.GateOptions{})
	h := apitest.Start(t, cat, apitest.Options{CheckShapes: true, Gate: gate, Pay: cfg})
	key, err := settle.LoadKey(dev.PayerKey)
	if err != nil {
		t.Fatal(err)
	}
	solve := cat.Entry("solve")
	paid := func(t *testing.T, params map[string]any) answer {
		t.Helper()
		r := cfg.Requirements(solve)
		p, err := exact.NewPayload(key, 2, &r, &x402.ResourceInfo{URL: h.BaseURL + "/v1/solve"}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		sig, _ := x402.Encode(p)
		body, _ := json.Marshal(params)
		req, _ := http.NewRequest("POST", h.BaseURL+"/v1/solve", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(x402.HeaderPaymentSignature, sig)
		resp, err := h.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return answer{status: resp.StatusCode, body: b}
	}
	balance := func(a string) int64 {
		b, err := dev.Chain.Balance(ctx, common.HexToAddress(a))
		if err != nil {
			t.Fatal(err)
		}
		return b.Int64()
	}
	before := balance(dev.Payer)

	task := "check the agent readiness of https://example.com"
	for _, c := range []struct {
		name, param string
		params      map[string]any
	}{
		{"named", "capability", map[string]any{"task": task, "capability": "site.agent-readiness"}},
		{"recognised", "task", map[string]any{"task": task}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := paid(t, c.params)
			var e struct {
				Error struct{ Code, Param, Message string }
			}
			if err := json.Unmarshal(a.body, &e); a.status != 400 || err != nil || e.Error.Param != c.param ||
				!strings.Contains(e.Error.Message, "site.agent-readiness") || !strings.Contains(e.Error.Message, "GET /v1/site/agent-readiness") {
				t.Fatalf("%d %s, want a 400 naming %s and the direct call", a.status, a.body, c.param)
			}
		})
	}
	if audited != 0 || balance(dev.Payer) != before {
		t.Fatalf("the dearer capability ran %d times, the payer paid %d", audited, before-balance(dev.Payer))
	}
	if recs := dev.Facilitator.Ledger().List(ledger.Settled, ledger.Queued, ledger.Broadcast, ledger.Reserved); len(recs) != 0 {
		t.Fatalf("ledger holds %+v after refusals", recs)
	}
	p := (&world{h: h}).post(t, "/v1/solve/preview", map[string]any{"task": task}).json(t)
	if note, _ := p["note"].(string); !strings.Contains(note, "refuses") {
		t.Errorf("preview of the dearer task: %v", p)
	}

	// A capability cheaper than solve is served, at solve's price, and recorded as charged.
	a := paid(t, map[string]any{"task": "is FR14 2004 1010 0505 0001 3M02 606 a valid IBAN?"})
	if a.status != 200 {
		t.Fatalf("IBAN via solve: %d %s", a.status, a.body)
	}
	recs := dev.Facilitator.Ledger().List(ledger.Settled)
	if len(recs) != 1 || recs[0].Route != "solve" || recs[0].Amount != solve.Price {
		t.Fatalf("ledger %+v, want solve's one charge of %d", recs, solve.Price)
	}
	if paidNow := before - balance(dev.Payer); paidNow != int64(solve.Price) {
		t.Fatalf("payer paid %d, want %d", paidNow, solve.Price)
	}
}
