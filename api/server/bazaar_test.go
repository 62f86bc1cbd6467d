package server_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/render"
	"github.com/peage/appliance/api/server"
	"github.com/peage/appliance/settle/x402"
)

// boundCatalog is the default catalog with every route bound, so every paid route reaches
// its 402 (the handler never runs unpaid).
func boundCatalog(t testing.TB) *catalog.Catalog {
	t.Helper()
	return boundCatalogWith(t, nil)
}

// boundCatalogWith binds the entries of each of first (the discovery documents), then every
// other entry but those left to a handler answering {"ok":true}.
func boundCatalogWith(t testing.TB, first func(*catalog.Catalog) error, leave ...string) *catalog.Catalog {
	t.Helper()
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	if first != nil {
		if err := first(cat); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range cat.Unbound() {
		if slices.Contains(leave, id) {
			continue
		}
		if err := cat.Bind(id, func(context.Context, *catalog.Request) (any, error) { return map[string]any{"ok": true}, nil }, nil); err != nil {
			t.Fatal(err)
		}
	}
	return cat
}

// publicBase is the box's public address in these tests: the Bazaar drops an icon on a
// loopback or IP-literal host, so the declarations are rendered as a box on the internet's.
const publicBase = "https://peage.example"

// bazaarCheck is run by node: @x402/extensions 2.27's own Bazaar code reads every challenge
// as a Bazaar facilitator does (the payload echoes the 402's resource and extensions, as the
// official client builds it) and reports what it refused.
const bazaarCheck = `
import { readFileSync } from "node:fs";
import { validateDiscoveryExtension, validateDiscoveryExtensionSpec, extractDiscoveryInfo,
  extractDiscoveryInfoV1, sanitizeResourceServiceMetadata } from "@x402/extensions/bazaar";
const cases = JSON.parse(readFileSync(process.argv[2], "utf8"));
const problems = {};
const fail = (id, msg) => (problems[id] ??= []).push(msg);
for (const c of cases) {
  const pr = c.v2;
  const ext = pr.extensions?.bazaar;
  if (!ext) { fail(c.id, "no extensions.bazaar"); continue; }
  for (const [name, r] of [["schema", validateDiscoveryExtension(ext)], ["spec", validateDiscoveryExtensionSpec(ext)]]) {
    if (!r.valid) fail(c.id, name + ": " + r.errors.join("; "));
  }
  const payload = { x402Version: 2, resource: pr.resource, accepted: pr.accepts[0], payload: {}, extensions: pr.extensions };
  // Validated just above: the extraction need not compile the schema a second time.
  const found = extractDiscoveryInfo(payload, pr.accepts[0], false);
  if (!found) { fail(c.id, "extractDiscoveryInfo found nothing"); continue; }
  if (found.discoveryInfo.input.type !== c.transport) fail(c.id, "input.type " + found.discoveryInfo.input.type);
  if (c.transport === "http" && found.method !== c.method) fail(c.id, "method " + found.method);
  if (c.transport === "mcp" && found.toolName !== c.tool) fail(c.id, "toolName " + found.toolName);
  const meta = sanitizeResourceServiceMetadata(pr.resource);
  if (meta.serviceName !== pr.resource.serviceName || !meta.iconUrl || (meta.tags ?? []).length !== pr.resource.tags.length)
    fail(c.id, "service metadata dropped: " + JSON.stringify(meta));
  if (c.v1) {
    const v1 = extractDiscoveryInfoV1(c.v1.accepts[0]);
    if (!v1 || v1.input.method !== c.method) fail(c.id, "legacy body: no v1 discovery info");
  }
}
console.log(JSON.stringify(problems));
`

// TestBazaarDeclarationOnEveryPaidRoute: every paid route's 402, over HTTP and as an MCP
// tool, carries a Bazaar declaration that @x402/extensions 2.27 validates and extracts, with
// the service metadata it keeps; its header stays under 3 KB and its description under 500
// characters, with both schemes offered (the largest challenge).
func TestBazaarDeclarationOnEveryPaidRoute(t *testing.T) {
	pay := paywall.DefaultConfig()
	pay.PayTo = apitest.TestPayTo
	pay.ReceiverAuthorizer = "0x00000000000000000000000000000000000000aa"
	cat := boundCatalog(t)
	h := apitest.Start(t, cat, apitest.Options{Pay: pay, Configure: func(c *server.Config) { c.BaseURL = publicBase }})
	type testCase struct {
		ID        string         `json:"id"`
		Transport string         `json:"transport"`
		Method    string         `json:"method"`
		Tool      string         `json:"tool,omitempty"`
		V2        map[string]any `json:"v2"`
		V1        map[string]any `json:"v1,omitempty"`
	}
	var cases []testCase
	paid := 0
	for _, e := range cat.Entries() {
		if e.Kind != catalog.Paid {
			continue
		}
		paid++
		resp, body := call(t, h, e.Method, e.Path, e.Example)
		if resp.StatusCode != 402 {
			t.Fatalf("%s: %d %s, want 402", e.ID, resp.StatusCode, body)
		}
		header := resp.Header.Get("Payment-Required")
		if len(header) > paywall.MaxChallengeHeader {
			t.Errorf("%s: PAYMENT-REQUIRED is %d bytes, over %d", e.ID, len(header), paywall.MaxChallengeHeader)
		}
		raw, err := base64.StdEncoding.DecodeString(header)
		if err != nil {
			t.Fatal(err)
		}
		c := testCase{ID: e.ID, Transport: "http", Method: e.Method}
		if json.Unmarshal(raw, &c.V2) != nil || json.Unmarshal(body, &c.V1) != nil {
			t.Fatalf("%s: challenge not JSON", e.ID)
		}
		if d, _ := apitest.At(c.V2, "resource", "description").(string); d == "" || len(d) >= 500 {
			t.Errorf("%s: resource description of %d characters", e.ID, len(d))
		}
		cases = append(cases, c)
		obj, err := h.Server.ChallengeObject(e, paywall.PaymentRequired(""))
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, testCase{ID: e.ID + " (mcp)", Transport: "mcp", Method: e.Method, Tool: e.ToolName(), V2: obj})
	}
	file := filepath.Join(t.TempDir(), "challenges.json")
	b, _ := json.Marshal(cases)
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// Ajv compiles each of the ~260 schemas: minutes on a loaded 2-core machine.
	out, stderr, err := apitest.Node(t, 6*time.Minute, bazaarCheck, file)
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr)
	}
	var problems map[string][]string
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &problems); err != nil {
		t.Fatalf("node output %q: %v\n%s", out, err, stderr)
	}
	for id, p := range problems {
		t.Errorf("%s: %s", id, strings.Join(p, " | "))
	}
	if paid < 120 || len(cases) != 2*paid {
		t.Fatalf("checked %d declarations of %d paid routes", len(cases), paid)
	}
}

// TestIconOnlyOnAPublicHost: the declaration names the box's icon where the Bazaar keeps it;
// on an address every facilitator drops it from (an IP literal, a loopback name), the 402
// does not carry its bytes.
func TestIconOnlyOnAPublicHost(t *testing.T) {
	for _, c := range []struct{ base, icon string }{
		{publicBase, publicBase + paywall.IconPath},
		{"http://peage.example:8402", "http://peage.example:8402" + paywall.IconPath},
		{"", ""}, // the harness's own, http://127.0.0.1:port
		{"http://localhost:8402", ""},
		{"http://[::1]:8402", ""},
		{"http://2130706433", ""},
		{"http://0x7f000001", ""},
	} {
		t.Run(c.base, func(t *testing.T) {
			cat := boundCatalog(t)
			h := apitest.Start(t, cat, apitest.Options{Configure: func(cfg *server.Config) {
				if c.base != "" {
					cfg.BaseURL = c.base
				}
			}})
			resp, body := call(t, h, "GET", "/v1/fr/tva", map[string]any{"siren": "542065479"})
			pr, err := x402.DecodeRequired(resp.Header.Get("Payment-Required"))
			if resp.StatusCode != 402 || err != nil {
				t.Fatalf("%d %s (%v)", resp.StatusCode, body, err)
			}
			if pr.Resource.IconURL != c.icon {
				t.Fatalf("iconUrl %q, want %q", pr.Resource.IconURL, c.icon)
			}
		})
	}
}

// TestDeclarationConstrainsWhatItSends: no part of a declaration's output schema, at any
// depth, is a schema that constrains nothing ({} for an untyped answer field, which the
// example answer names; additionalProperties true, JSON Schema's default): each would be
// bytes on every unpaid call.
func TestDeclarationConstrainsWhatItSends(t *testing.T) {
	cat := boundCatalog(t)
	h := apitest.Start(t, cat, apitest.Options{})
	var walk func(path string, v any) []string
	walk = func(path string, v any) []string {
		var found []string
		switch x := v.(type) {
		case map[string]any:
			if x["additionalProperties"] == true {
				found = append(found, path+".additionalProperties")
			}
			if props, ok := x["properties"].(map[string]any); ok {
				for name, p := range props {
					if m, ok := p.(map[string]any); ok && len(m) == 0 {
						found = append(found, path+".properties."+name)
					}
				}
			}
			for k, sub := range x {
				found = append(found, walk(path+"."+k, sub)...)
			}
		case []any:
			for _, sub := range x {
				found = append(found, walk(path, sub)...)
			}
		}
		return found
	}
	for _, e := range cat.Entries() {
		if e.Kind != catalog.Paid {
			continue
		}
		resp, body := call(t, h, e.Method, e.Path, e.Example)
		var pr map[string]any
		if resp.StatusCode != 402 || json.Unmarshal([]byte(decoded(t, resp.Header.Get("Payment-Required"))), &pr) != nil {
			t.Fatalf("%s: %d %s", e.ID, resp.StatusCode, body)
		}
		if found := walk("output", apitest.At(pr, "extensions", "bazaar", "schema", "properties", "output")); len(found) > 0 {
			t.Errorf("%s: schemas that constrain nothing at %v", e.ID, found)
		}
	}
}

// TestPaymentIdentifierDeclarationValidates: the 402's payment-identifier declaration is
// valid by @x402/extensions 2.27's validatePaymentIdentifier as sent (its info carries no id
// yet), echoed by a client that adds no id, and with the id the official client appends.
func TestPaymentIdentifierDeclarationValidates(t *testing.T) {
	cat := boundCatalog(t)
	h := apitest.Start(t, cat, apitest.Options{})
	resp, body := call(t, h, "GET", "/v1/fr/tva", map[string]any{"siren": "542065479"})
	if resp.StatusCode != 402 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	const check = `
import { validatePaymentIdentifier, appendPaymentIdentifierToExtensions } from "@x402/extensions/payment-identifier";
const pr = JSON.parse(Buffer.from(process.argv[2], "base64").toString());
const ext = pr.extensions["payment-identifier"];
const problems = [];
const sent = validatePaymentIdentifier(structuredClone(ext));
if (!sent.valid) problems.push("as sent: " + sent.errors.join("; "));
const echoed = appendPaymentIdentifierToExtensions(structuredClone(pr.extensions))["payment-identifier"];
const withId = validatePaymentIdentifier(echoed);
if (!withId.valid || !echoed.info.id) problems.push("with the client's id: " + (withId.errors ?? []).join("; "));
console.log(JSON.stringify(problems));
`
	out, stderr, err := apitest.Node(t, time.Minute, check, resp.Header.Get("Payment-Required"))
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr)
	}
	if strings.TrimSpace(out) != "[]" {
		t.Fatalf("payment-identifier declaration refused: %s", out)
	}
}

// TestIconIsServed: the icon every declaration names is served by the box.
func TestIconIsServed(t *testing.T) {
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	if err := render.New(cat, render.Info{}).Bind(cat); err != nil {
		t.Fatal(err)
	}
	h := apitest.Start(t, cat, apitest.Options{})
	resp, body := call(t, h, "GET", paywall.IconPath, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/svg+xml" || !strings.Contains(string(body), "<svg") {
		t.Fatalf("icon: %d %s %.80s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
}

// TestColdProbe: an unpaid call with no parameter at all (empty query, empty body, "{}")
// answers every paid route's 402 with its Bazaar declaration, required parameters or not;
// a call that carries a parameter (here a misspelled one) is still the 400 naming the
// missing one, before any 402.
func TestColdProbe(t *testing.T) {
	cat := boundCatalog(t)
	h := apitest.Start(t, cat, apitest.Options{})
	probes := []struct {
		name        string
		method      string
		body        string
		contentType string
	}{
		{"GET without query", "GET", "", ""},
		{"POST without body", "POST", "", ""},
		{"POST {}", "POST", "{}", "application/json"},
	}
	for _, e := range cat.Entries() {
		if e.Kind != catalog.Paid {
			continue
		}
		for _, p := range probes {
			req, _ := http.NewRequest(p.method, h.BaseURL+e.Path, strings.NewReader(p.body))
			if p.contentType != "" {
				req.Header.Set("Content-Type", p.contentType)
			}
			resp, err := h.Client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			raw, _ := base64.StdEncoding.DecodeString(resp.Header.Get("Payment-Required"))
			var pr map[string]any
			if resp.StatusCode != 402 || json.Unmarshal(raw, &pr) != nil || apitest.At(pr, "extensions", "bazaar", "schema") == nil {
				t.Errorf("%s %s: %d %s, want 402 with the Bazaar schema", e.ID, p.name, resp.StatusCode, body)
			}
		}
		var missing *catalog.Param
		for i, p := range e.Params {
			if p.Required || p.OneOf != "" {
				missing = &e.Params[i]
				break
			}
		}
		if missing == nil {
			continue
		}
		resp, body := call(t, h, e.Method, e.Path, map[string]any{missing.Name + "x": "1"})
		var eb errBody
		if resp.StatusCode != 400 || json.Unmarshal(body, &eb) != nil || eb.Error.Param == "" {
			t.Errorf("%s with a misspelled %s: %d %s, want 400 naming the parameter", e.ID, missing.Name, resp.StatusCode, body)
		}
	}
}

// TestWellKnownX402AsCrawlersReadIt: /.well-known/x402 is the discovery document x402scan
// reads (version 1, resources as absolute URLs; instructions optional), it lists every paid
// route, and each listed resource answers the crawler's probe (no parameter, GET or POST)
// with a 402 carrying the Bazaar declaration.
func TestWellKnownX402AsCrawlersReadIt(t *testing.T) {
	cat := boundCatalogWith(t, func(c *catalog.Catalog) error {
		return render.New(c, render.Info{BaseURL: publicBase, Pay: paywall.DefaultConfig()}).Bind(c)
	})
	h := apitest.Start(t, cat, apitest.Options{Configure: func(c *server.Config) { c.BaseURL = publicBase }})
	status, doc := h.GetObject(t, "/.well-known/x402", nil)
	if status != 200 {
		t.Fatalf("/.well-known/x402: %d", status)
	}
	var parsed struct {
		Version      int      `json:"version"`
		Resources    []string `json:"resources"`
		Instructions string   `json:"instructions"`
	}
	b, _ := json.Marshal(doc)
	if err := json.Unmarshal(b, &parsed); err != nil || parsed.Version != 1 {
		t.Fatalf("not the crawlers' discovery document (version 1): %s", b)
	}
	listed := map[string]bool{}
	for _, r := range parsed.Resources {
		u, err := url.Parse(r)
		if err != nil || !u.IsAbs() || u.Scheme != "https" {
			t.Fatalf("resource %q is not an absolute URL", r)
		}
		listed[u.Path] = true
		for _, method := range []string{"GET", "POST"} {
			req, _ := http.NewRequest(method, h.BaseURL+u.Path, nil)
			resp, err := h.Client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			raw, _ := base64.StdEncoding.DecodeString(resp.Header.Get("Payment-Required"))
			if resp.StatusCode != 402 || !strings.Contains(string(raw), `"bazaar"`) {
				t.Errorf("crawler's %s probe of %s: %d, want 402 with the Bazaar declaration", method, r, resp.StatusCode)
			}
		}
	}
	for _, e := range cat.Entries() {
		if e.Kind == catalog.Paid && !listed[e.Path] {
			t.Errorf("paid route %s is not listed", e.Path)
		}
	}
}

// TestChallengeFitsOneWrite: every paid route's whole 402 (status line, headers with the
// PAYMENT-REQUIRED declaration, legacy body) fits the server's write buffer, so it leaves in
// one write; with fasthttp's default 4 KB, the larger ones took two syscalls, which was half
// the 402 path's CPU in the profile of ops/bench/api.
func TestChallengeFitsOneWrite(t *testing.T) {
	pay := paywall.DefaultConfig()
	pay.PayTo = apitest.TestPayTo
	pay.ReceiverAuthorizer = "0x00000000000000000000000000000000000000aa"
	cat := boundCatalog(t)
	h := apitest.Start(t, cat, apitest.Options{Pay: pay, Configure: func(c *server.Config) { c.BaseURL = publicBase }})
	largest, largestID := 0, ""
	for _, e := range cat.Entries() {
		if e.Kind != catalog.Paid {
			continue
		}
		resp, body := call(t, h, e.Method, e.Path, e.Example)
		if resp.StatusCode != 402 {
			t.Fatalf("%s: %d %s, want 402", e.ID, resp.StatusCode, body)
		}
		size := len("HTTP/1.1 402 Payment Required\r\n\r\n") + len(body)
		for k, vs := range resp.Header {
			for _, v := range vs {
				size += len(k) + len(": \r\n") + len(v)
			}
		}
		if size > largest {
			largest, largestID = size, e.ID
		}
	}
	if largest > server.WriteBufferSize {
		t.Fatalf("the 402 of %s is %d bytes, over the write buffer of %d", largestID, largest, server.WriteBufferSize)
	}
	t.Logf("largest 402: %s, %d bytes", largestID, largest)
}
