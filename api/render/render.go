// Package render derives every machine-readable description of the service from the catalog:
// the JSON catalog at /, OpenAPI 3.1, llms.txt, the x402 resource list,
// agent skills, the MCP manifest and /v1/capabilities. Nothing here declares a route.
package render

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"sync"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/settle/x402"
)

// Info is what the renderings need beyond the table.
type Info struct {
	BaseURL string
	Pay     paywall.Config
	Version string // the appliance build version
}

// Renderer renders one catalog.
type Renderer struct {
	cat  *catalog.Catalog
	info Info
	memo sync.Map // document id → *rendered
}

// rendered is a document and the availability it was rendered under: documents change only
// when a route becomes available or unavailable, so they are rendered again only then.
type rendered struct {
	avail string
	raw   *catalog.Raw
}

func (r *Renderer) availability() string {
	b := make([]byte, 0, len(r.cat.Entries()))
	for _, e := range r.cat.Entries() {
		if e.Available() {
			b = append(b, '1')
		} else {
			b = append(b, '0')
		}
	}
	return string(b)
}

func (r *Renderer) memoized(id, contentType string, build func() []byte) catalog.Handler {
	return func(context.Context, *catalog.Request) (any, error) {
		avail := r.availability()
		if m, ok := r.memo.Load(id); ok && m.(*rendered).avail == avail {
			return m.(*rendered).raw, nil
		}
		raw := &catalog.Raw{ContentType: contentType, Body: build()}
		r.memo.Store(id, &rendered{avail: avail, raw: raw})
		return raw, nil
	}
}

func New(cat *catalog.Catalog, info Info) *Renderer {
	info.BaseURL = strings.TrimRight(info.BaseURL, "/")
	return &Renderer{cat: cat, info: info}
}

const (
	serviceName = "péage"
	serviceDesc = "Pay-per-call data, web-access and utility service for agents: each call is paid on its own in USDC over x402. No account, no API key: the payment is the credential."
	// apiVersion is the published description version of the interface (spec: Versioning).
	apiVersion = "1.0.0"
)

// Service names the service as every description does (the A2A card, rendered beside its
// endpoint in api/a2a, too): its name, description and published interface version.
var Service = struct{ Name, Description, Version string }{serviceName, serviceDesc, apiVersion}

// Family is a route family as every rendering names it.
type Family struct{ ID, Title string }

// Families are the route families in the order every rendering lists them (the A2A card's
// skills follow it too).
func Families() []Family {
	out := make([]Family, len(familyTitles))
	for i, f := range familyTitles {
		out[i] = Family{ID: f.id, Title: f.title}
	}
	return out
}

// familyTitles orders and names the families in every rendering.
var familyTitles = []struct{ id, title string }{
	{"web", "Web access (real browser, residential exit in France)"},
	{"fr", "French public data"},
	{"uk", "UK company data"},
	{"us", "US public-company data"},
	{"util", "Utilities"},
	{"chain", "Blockchain (Base)"},
	{"crypto", "Crypto markets"},
	{"social", "Community"},
	{"search", "Web search"},
	{"llm", "Language models"},
	{"infra", "Infrastructure for agents"},
	{"free", "Free routes"},
	{"discovery", "Discovery"},
}

// USD renders atomic USDC units as a decimal string: 5000 → "0.005".
func USD(atomic uint64) string {
	return x402.Decimal(new(big.Int).SetUint64(atomic), x402.USDCDecimals)
}

// listed are the entries shown to clients (every route but the resource addresses).
func (r *Renderer) listed() []*catalog.Entry {
	var out []*catalog.Entry
	for _, e := range r.cat.Entries() {
		if e.Kind != catalog.Resource {
			out = append(out, e)
		}
	}
	return out
}

func (r *Renderer) paid() []*catalog.Entry {
	var out []*catalog.Entry
	for _, e := range r.cat.Entries() {
		if e.Kind == catalog.Paid {
			out = append(out, e)
		}
	}
	return out
}

// RouteInfo is one route in the JSON catalog.
type RouteInfo struct {
	ID            string         `json:"id"`
	Method        string         `json:"method"`
	Methods       []string       `json:"methods"`
	Path          string         `json:"path"`
	URL           string         `json:"url"`
	Family        string         `json:"family"`
	Summary       string         `json:"summary"`
	Kind          string         `json:"kind"`
	Price         string         `json:"price_usd"`
	Amount        string         `json:"amount"`
	Tier          catalog.Tier   `json:"tier"`
	Available     bool           `json:"available"`
	Status        string         `json:"status,omitempty"`
	FreeFirstCall bool           `json:"free_first_call,omitempty"`
	Partial       string         `json:"partial,omitempty"`
	FreeTrial     string         `json:"free_trial,omitempty"`
	Produces      string         `json:"produces"`
	TimeoutS      int            `json:"timeout_seconds"`
	CacheTTLS     int            `json:"cache_ttl_seconds,omitempty"`
	Upstream      string         `json:"upstream,omitempty"`
	Params        map[string]any `json:"params"`
	Example       map[string]any `json:"example,omitempty"`
}

func (r *Renderer) routeInfo(e *catalog.Entry) RouteInfo {
	return RouteInfo{
		ID: e.ID, Method: e.Method, Methods: e.Methods(), Path: e.Path, URL: r.info.BaseURL + e.Path,
		Family: e.Family, Summary: e.Summary, Kind: e.Kind.String(),
		Price: USD(e.Price), Amount: strconv.FormatUint(e.Price, 10), Tier: e.Tier,
		Available: e.Available(), Status: e.Status, FreeFirstCall: e.FreeFirstCall,
		Partial: e.Partial, FreeTrial: e.FreeTrial, Produces: e.MediaType(),
		TimeoutS: int(e.Timeout.Seconds()), CacheTTLS: int(e.CacheTTL.Seconds()), Upstream: e.Upstream,
		Params: e.Schema(), Example: e.Example,
	}
}

// Catalog is the machine-readable catalog served at /.
func (r *Renderer) Catalog() map[string]any {
	routes := make([]RouteInfo, 0, len(r.cat.Entries()))
	for _, e := range r.listed() {
		routes = append(routes, r.routeInfo(e))
	}
	return map[string]any{
		"name":        serviceName,
		"description": serviceDesc,
		"version":     apiVersion,
		"build":       r.info.Version,
		"x402Version": 2,
		"payment":     r.payment(),
		"tiers":       tiers(),
		"discovery":   r.discoveryLinks(),
		"routes":      routes,
	}
}

// schemes are the x402 schemes every paid route's 402 offers.
func (r *Renderer) schemes() []string {
	if r.info.Pay.BatchOffered() {
		return []string{x402.SchemeExact, x402.SchemeBatchSettlement}
	}
	return []string{x402.SchemeExact}
}

// schemesText says how to pay, for the prose documents.
func (r *Renderer) schemesText() string {
	if r.info.Pay.BatchOffered() {
		return "scheme exact, one USDC authorization per call; or scheme batch-settlement, one deposit into a channel then one signed cumulative voucher per call"
	}
	return "scheme exact"
}

func (r *Renderer) payment() map[string]any {
	p := map[string]any{
		"scheme": "exact", "schemes": r.schemes(), "network": r.info.Pay.Network, "asset": r.info.Pay.Asset, "payTo": r.info.Pay.PayTo,
		"asset_name": r.info.Pay.TokenName, "decimals": 6,
		"headers": map[string]string{"challenge": "PAYMENT-REQUIRED", "payment": "PAYMENT-SIGNATURE (v2) or X-PAYMENT (v1)", "receipt": "PAYMENT-RESPONSE"},
	}
	if pay := r.info.Pay; pay.BatchOffered() {
		p["batch_settlement"] = map[string]any{"receiverAuthorizer": pay.ReceiverAuthorizer, "withdrawDelay": pay.WithdrawDelaySeconds,
			"minDeposit": strconv.FormatUint(pay.MinDeposit, 10), "spec": batchSpec}
	}
	return p
}

// batchSpec is the batch-settlement scheme's specification.
const batchSpec = "https://github.com/coinbase/x402/blob/main/specs/schemes/batch-settlement/scheme_batch_settlement_evm.md"

func tiers() []map[string]any {
	t := []struct {
		tier   catalog.Tier
		amount uint64
	}{{catalog.TierFree, 0}, {catalog.TierMicro, 5_000}, {catalog.TierStandard, 10_000}, {catalog.TierPro, 20_000},
		{catalog.TierComposed, 50_000}, {catalog.TierPremium, 100_000}, {catalog.TierReport, 500_000}, {catalog.TierDeep, 1_000_000}}
	out := make([]map[string]any, 0, len(t)+1)
	for _, x := range t {
		out = append(out, map[string]any{"tier": x.tier, "usd": USD(x.amount), "amount": strconv.FormatUint(x.amount, 10)})
	}
	return append(out, map[string]any{"tier": catalog.TierMetered, "usd": "per resource", "amount": "per resource"})
}

func (r *Renderer) discoveryLinks() map[string]string {
	links := map[string]string{}
	for _, e := range r.cat.Entries() {
		if e.Kind == catalog.Discovery || e.ID == "capabilities" {
			links[e.ID] = r.info.BaseURL + e.Path
		}
	}
	return links
}

// LLMSTxt renders /llms.txt following the llmstxt.org conventions: a title, a summary block,
// then one section per family with a link list.
func (r *Renderer) LLMSTxt() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n> %s\n\n", serviceName, serviceDesc)
	fmt.Fprintf(&b, "Every /v1 route accepts GET with query parameters and POST with a JSON body of the same names. "+
		"An unpaid call answers HTTP 402 with a PAYMENT-REQUIRED header (x402 v2, base64 JSON): sign the USDC "+
		"authorization it asks for (%s; network %s) and repeat the call with a PAYMENT-SIGNATURE header. "+
		"Bad parameters answer 400 before any payment is asked; a failed call is never charged. "+
		"Errors are JSON: {\"error\":{\"code\",\"message\",\"param\"}}.\n\n", r.schemesText(), r.info.Pay.Network)
	fmt.Fprintf(&b, "Machine-readable: [catalog](%s/), [OpenAPI](%s/openapi.json), [MCP](%s/mcp), [x402 resources](%s/.well-known/x402).\n",
		r.info.BaseURL, r.info.BaseURL, r.info.BaseURL, r.info.BaseURL)
	byFamily := map[string][]*catalog.Entry{}
	for _, e := range r.listed() {
		byFamily[e.Family] = append(byFamily[e.Family], e)
	}
	for _, f := range familyTitles {
		entries := byFamily[f.id]
		if len(entries) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n## %s\n\n", f.title)
		for _, e := range entries {
			price := USD(e.Price) + " USDC"
			switch {
			case e.Tier == catalog.TierMetered:
				price += " (metered package)"
			case e.Price == 0:
				price = "free"
			}
			var params []string
			for _, p := range e.Params {
				n := p.Name
				if !p.Required {
					n += "?"
				}
				params = append(params, n)
			}
			note := ""
			if !e.Available() {
				note = " [not available on this appliance]"
			}
			fmt.Fprintf(&b, "- [%s %s](%s%s): %s Params: %s. Price: %s.%s\n", e.Method, e.Path, r.info.BaseURL, e.Path,
				e.Summary, orNone(strings.Join(params, ", ")), price, note)
		}
	}
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// X402 renders /.well-known/x402 in the resource-list shape x402 indexers crawl.
func (r *Renderer) X402() map[string]any {
	var resources []string
	for _, e := range r.paid() {
		resources = append(resources, r.info.BaseURL+e.Path)
	}
	return map[string]any{
		"x402Version":  2,
		"version":      1,
		"resources":    resources,
		"instructions": fmt.Sprintf("Each resource answers 402 with a PAYMENT-REQUIRED challenge (%s, %s, USDC). Prices and parameters: %s/openapi.json.", strings.Join(r.schemes(), " or "), r.info.Pay.Network, r.info.BaseURL),
	}
}

// AgentSkills lists each paid route as a callable skill with its input schema and price.
func (r *Renderer) AgentSkills() map[string]any {
	var skills []map[string]any
	for _, e := range r.paid() {
		skills = append(skills, map[string]any{
			"id": e.ID, "name": e.ID, "description": e.Summary, "method": e.Method, "url": r.info.BaseURL + e.Path,
			"price_usd": USD(e.Price), "amount": strconv.FormatUint(e.Price, 10), "tier": e.Tier,
			"available": e.Available(), "input_schema": e.Schema(),
		})
	}
	return map[string]any{"name": serviceName, "version": apiVersion, "payment": "x402", "skills": skills}
}

// MCPManifest describes the MCP endpoint at /.well-known/mcp (and answers a plain GET /mcp).
func (r *Renderer) MCPManifest() map[string]any {
	return map[string]any{
		"name": serviceName, "version": apiVersion, "description": serviceDesc,
		"endpoint": r.info.BaseURL + "/mcp", "transport": "streamable-http",
		"protocolVersions": MCPProtocolVersions,
		"tools":            len(r.Tools()),
		"icon":             r.info.BaseURL + paywall.IconPath,
		"payment":          "x402: unpaid tools/call returns isError with the PaymentRequired object; pay with params._meta[\"x402/payment\"]",
	}
}

// MCPProtocolVersions are the MCP revisions /mcp speaks, newest first: 2026-07-28 statelessly
// (server/discover, per-request _meta), the older ones after an initialize handshake.
var MCPProtocolVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// Tool is one MCP tool derived from a route.
type Tool struct {
	Name        string         `json:"name"`
	Title       string         `json:"title,omitempty"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"inputSchema"`
	// OutputSchema is the catalog's answer schema (JSON Schema 2020-12, MCP's default dialect
	// since 2025-11-25, so no $schema: clients that compile it as draft-07 read it alike). A
	// binary answer has none, and its result carries no structuredContent.
	OutputSchema map[string]any  `json:"outputSchema,omitempty"`
	Annotations  ToolAnnotations `json:"annotations"`
	Icons        []Icon          `json:"icons,omitempty"`
	Meta         map[string]any  `json:"_meta,omitempty"`
}

// ToolAnnotations are MCP's behaviour hints, from the catalog: a route that creates
// something (Entry.Creates) is neither read-only nor idempotent, though only additive; one
// answered offline does not reach the open world.
type ToolAnnotations struct {
	ReadOnlyHint    bool  `json:"readOnlyHint"`
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	IdempotentHint  bool  `json:"idempotentHint"`
	OpenWorldHint   bool  `json:"openWorldHint"`
}

// Icon is an MCP icon (2025-11-25 and later).
type Icon struct {
	Src      string   `json:"src"`
	MimeType string   `json:"mimeType,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
}

// Icons is the service's icon, as MCP names it (tools, serverInfo).
func (r *Renderer) Icons() []Icon {
	return []Icon{{Src: r.info.BaseURL + paywall.IconPath, MimeType: "image/svg+xml", Sizes: []string{"any"}}}
}

// IsTool reports whether an entry is offered as an MCP tool: every paid or free route.
func IsTool(e *catalog.Entry) bool { return e.Kind == catalog.Paid || e.Kind == catalog.Free }

// ToolName is the MCP tool name of an entry (catalog.Entry.ToolName: the x402 Bazaar
// declaration of MCP tools names them too).
func ToolName(e *catalog.Entry) string { return e.ToolName() }

// Tools are the MCP tools: one per paid or free /v1 route (and free trials). A paid tool's
// _meta carries its price in atomic units and the schemes it is paid with.
func (r *Renderer) Tools() []Tool {
	var tools []Tool
	for _, e := range r.cat.Entries() {
		if !IsTool(e) {
			continue
		}
		price := "free"
		meta := map[string]any{"x402/amount": strconv.FormatUint(e.Price, 10), "available": e.Available()}
		if e.Price > 0 {
			price = USD(e.Price) + " USDC per call, paid over x402 (" + strings.Join(r.schemes(), " or ") + ")"
			meta["x402/schemes"] = r.schemes()
			meta["x402/network"] = r.info.Pay.Network
			meta["x402/asset"] = r.info.Pay.Asset
		}
		annotations := ToolAnnotations{ReadOnlyHint: !e.Creates, IdempotentHint: !e.Creates, OpenWorldHint: !e.Offline}
		if e.Creates {
			annotations.DestructiveHint = new(bool)
		}
		tools = append(tools, Tool{
			Name: ToolName(e), Title: e.Method + " " + e.Path,
			Description:  e.Summary + " Price: " + price + ".",
			InputSchema:  e.Schema(),
			OutputSchema: e.OutputSchema(),
			Annotations:  annotations,
			Icons:        r.Icons(),
			Meta:         meta,
		})
	}
	return tools
}

// Bind attaches the discovery handlers to their entries.
func (r *Renderer) Bind(c *catalog.Catalog) error {
	docs := map[string]func() map[string]any{
		"index":                        r.Catalog,
		"openapi.json":                 r.OpenAPI,
		"well-known.x402":              r.X402,
		"well-known.agent-skills.json": r.AgentSkills,
		"well-known.mcp":               r.MCPManifest,
	}
	for id, doc := range docs {
		h := r.memoized(id, "application/json", func() []byte { b, _ := json.Marshal(doc()); return b })
		if err := c.Bind(id, h, nil); err != nil {
			return err
		}
	}
	icon := &catalog.Raw{ContentType: "image/svg+xml", Header: map[string]string{"Cache-Control": "public, max-age=86400"}, Body: iconSVG}
	if err := c.Bind("icon.svg", func(context.Context, *catalog.Request) (any, error) { return icon, nil }, nil); err != nil {
		return err
	}
	return c.Bind("llms.txt", r.memoized("llms.txt", "text/plain; charset=utf-8", func() []byte { return []byte(r.LLMSTxt()) }), nil)
}

// iconSVG is the service's icon (paywall.IconPath), which the Bazaar shows beside its routes.
//
//go:embed icon.svg
var iconSVG []byte

// JSON is a stable, indented encoding for golden files.
func JSON(v any) []byte {
	b, _ := json.MarshalIndent(v, "", "  ")
	return append(b, '\n')
}
