package a2a_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/peage/appliance/api/a2a"
	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/routes/fr"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/upstreamtest"
	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/internal/receipt"
	"github.com/peage/appliance/internal/testenv"
	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/settletest"
	"github.com/peage/appliance/settle/x402"
)

// agentScript is the A2A client: @a2a-js/sdk 1.3.0's ClientFactory reads the card and picks
// the interface it names, sends the call as a data part and, when the task asks for payment,
// has @x402/evm sign the requirements found in the status message's metadata (a2a-x402 v0.2,
// standalone flow) and sends them back with the taskId; then it reads the task with GetTask.
// It prints the card and the tasks in their v1.0 JSON form.
//
// usage: node script.mjs BASE_URL PRIVATE_KEY ASSET MAX_ATOMIC ROUTE PARAMS_JSON
const agentScript = `
import { ClientFactory, ServiceParameters, withA2AExtensions } from "@a2a-js/sdk/client";
import { AgentCard, Task, Role } from "@a2a-js/sdk";
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { privateKeyToAccount } from "viem/accounts";

const [base, key, asset, max, route, params] = process.argv.slice(2);
const extension = "https://github.com/google-agentic-commerce/a2a-x402/blob/main/spec/v0.2";
const client = await new ClientFactory().createFromUrl(base);
const card = await client.getAgentCard();
const options = { serviceParameters: ServiceParameters.create(withA2AExtensions(extension)) };

const first = await client.sendMessage({ message: {
  messageId: crypto.randomUUID(), role: Role.ROLE_USER,
  parts: [{ content: { $case: "data", value: { route, params: JSON.parse(params) } } }],
} }, options);
const out = { card: AgentCard.toJSON(card), first: Task.toJSON(first) };
const metadata = first.status?.message?.metadata ?? {};
if (metadata["x402.payment.status"] === "payment-required") {
  const signer = new x402Client()
    .register("eip155:*", new ExactEvmScheme(privateKeyToAccount(key.startsWith("0x") ? key : "0x" + key)))
    .setSpendControls({ allowedAssets: [{ network: "eip155:*", asset, maxAmountPerPayment: max }] });
  const payload = await signer.createPaymentPayload(metadata["x402.payment.required"]);
  const paid = await client.sendMessage({ message: {
    messageId: crypto.randomUUID(), role: Role.ROLE_USER, taskId: first.id, contextId: first.contextId,
    parts: [{ content: { $case: "text", value: "Here is the payment authorization." } }],
    metadata: { "x402.payment.status": "payment-submitted", "x402.payment.payload": payload },
  } }, options);
  out.paid = Task.toJSON(paid);
}
out.got = Task.toJSON(await client.getTask({ id: first.id }));
console.log(JSON.stringify(out));
`

// agentScript03 is the same agent with @a2a-js/sdk 0.3.14 (installed as a2a-sdk-v03), the
// A2A v0.3 client most deployed agents still run: its ClientFactory finds the endpoint in the
// card's top-level url and preferredTransport, and it speaks message/send and tasks/get with
// v0.3's shapes (kind discriminators, lower-case states); the payment is the same a2a-x402
// flow, its extension activated through X-A2A-Extensions. It prints the card and the tasks
// as it received them.
//
// usage: node script.mjs BASE_URL PRIVATE_KEY ASSET MAX_ATOMIC ROUTE PARAMS_JSON
const agentScript03 = `
import { ClientFactory, ServiceParameters, withA2AExtensions } from "a2a-sdk-v03/client";
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { privateKeyToAccount } from "viem/accounts";

const [base, key, asset, max, route, params] = process.argv.slice(2);
const extension = "https://github.com/google-agentic-commerce/a2a-x402/blob/main/spec/v0.2";
const client = await new ClientFactory().createFromUrl(base);
const card = await client.getAgentCard();
const options = { serviceParameters: ServiceParameters.create(withA2AExtensions(extension)) };

const first = await client.sendMessage({ message: {
  kind: "message", messageId: crypto.randomUUID(), role: "user",
  parts: [{ kind: "data", data: { route, params: JSON.parse(params) } }],
} }, options);
const out = { card, first };
const metadata = first.status?.message?.metadata ?? {};
if (metadata["x402.payment.status"] === "payment-required") {
  const signer = new x402Client()
    .register("eip155:*", new ExactEvmScheme(privateKeyToAccount(key.startsWith("0x") ? key : "0x" + key)))
    .setSpendControls({ allowedAssets: [{ network: "eip155:*", asset, maxAmountPerPayment: max }] });
  const payload = await signer.createPaymentPayload(metadata["x402.payment.required"]);
  out.paid = await client.sendMessage({ message: {
    kind: "message", messageId: crypto.randomUUID(), role: "user", taskId: first.id, contextId: first.contextId,
    parts: [{ kind: "text", text: "Here is the payment authorization." }],
    metadata: { "x402.payment.status": "payment-submitted", "x402.payment.payload": payload },
  } }, options);
}
out.got = await client.getTask({ id: first.id });
console.log(JSON.stringify(out));
`

type paidWorld struct {
	dev      *settle.Dev
	h        *apitest.Harness
	failing  *upstreamtest.Server
	receipts *receipt.Keyring
}

// startPaid serves the French family (the offline fr.tva, and geo-api's routes against a
// fixture server the test makes fail) with the real gate, facilitator and embedded chain,
// and the A2A endpoint bound as the composition root binds it.
func startPaid(t *testing.T) *paidWorld {
	t.Helper()
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
	failing := upstreamtest.New(t)
	failing.Handle(upstreamtest.ServerError())
	specs["geo-api"] = failing.Spec(t, "geo-api")
	french, err := fr.With(fr.Parts{Upstreams: specs, HTTP: httpc.Options{Contact: "test@example.org", Logger: obs.Discard()}})
	if err != nil {
		t.Fatal(err)
	}
	if err := french.Bind(cat); err != nil {
		t.Fatal(err)
	}
	keys := apitest.ReceiptKeys(t, "https://a2a.example")
	gate := paywall.New(cfg, paywall.Policy{Settlement: x402.ModeSync}, fc, paywall.GateOptions{Receipts: keys})
	h := apitest.Start(t, cat, apitest.Options{Gate: gate, Pay: cfg, Receipts: keys})
	if err := a2a.New(cat, h.Server, h.Server, a2a.Options{BaseURL: h.BaseURL}).Bind(cat); err != nil {
		t.Fatal(err)
	}
	return &paidWorld{dev: dev, h: h, failing: failing, receipts: keys}
}

func (w *paidWorld) balance(t *testing.T, a string) int64 {
	t.Helper()
	b, err := w.dev.Chain.Balance(context.Background(), common.HexToAddress(a))
	if err != nil {
		t.Fatal(err)
	}
	return b.Int64()
}

// agent runs an official client's script against the server and returns what it printed.
func (w *paidWorld) agent(t *testing.T, c officialClient, route string, params map[string]any) map[string]any {
	t.Helper()
	if _, err := os.Stat(filepath.Join(apitest.NodeModules(t), c.pkg, "package.json")); err != nil {
		t.Fatal(c.pkg + " is not installed in settle/npm; run ops/setup.d/x402.sh")
	}
	key, err := os.ReadFile(w.dev.PayerKey)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := json.Marshal(params)
	stdout, stderr, err := apitest.Node(t, 2*time.Minute, c.script, w.h.BaseURL, strings.TrimSpace(string(key)), w.dev.Asset, "100000", route, string(p))
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("node output %q: %v\n%s", stdout, err, stderr)
	}
	return out
}

// verifyTaskReceipt reads a completed task as the server sends it (getTask, the version's
// method, the artifact's bytes as they are on the wire) and checks with the box's verifier that its receipt and
// delivery statement are valid and bind that artifact, the route and the settlement.
func (w *paidWorld) verifyTaskReceipt(t *testing.T, getTask, id, path string) {
	t.Helper()
	a := rpc(t, w.h, nil, `{"jsonrpc":"2.0","id":2,"method":"`+getTask+`","params":{"id":"`+id+`"}}`)
	var task struct {
		Status struct {
			Message struct {
				Metadata map[string]json.RawMessage `json:"metadata"`
			} `json:"message"`
		} `json:"status"`
		Artifacts []struct {
			Parts []struct {
				Data      json.RawMessage `json:"data"`
				MediaType string          `json:"mediaType"`
			} `json:"parts"`
		} `json:"artifacts"`
	}
	if a.Error != nil || json.Unmarshal(a.Result, &task) != nil || len(task.Artifacts) != 1 || len(task.Artifacts[0].Parts) != 1 {
		t.Fatalf("GetTask %s: %s %+v", id, a.Result, a.Error)
	}
	var receipts []json.RawMessage
	if err := json.Unmarshal(task.Status.Message.Metadata[a2a.MetaReceipts], &receipts); err != nil || len(receipts) != 1 {
		t.Fatalf("task %s receipts %s", id, task.Status.Message.Metadata[a2a.MetaReceipts])
	}
	part := task.Artifacts[0].Parts[0]
	v, err := w.receipts.Published().Verify(receipt.Evidence{PaymentResponse: base64.StdEncoding.EncodeToString(receipts[0]),
		Body: part.Data, ContentType: part.MediaType, ResourceURL: w.h.BaseURL + path}, time.Now())
	if err != nil {
		t.Fatalf("the task's receipt does not verify against its artifact: %v", err)
	}
	var settled x402.SettlementResponse
	if err := json.Unmarshal(receipts[0], &settled); err != nil {
		t.Fatal(err)
	}
	if v.Statement.Settlement != receipt.Settled || v.Receipt.Transaction == "" || v.Receipt.Transaction != settled.Transaction ||
		v.Statement.Request.Path != path || !strings.EqualFold(v.Receipt.Payer, w.dev.Payer) {
		t.Errorf("receipt %+v statement %+v, settlement %+v", v.Receipt, v.Statement, settled)
	}
	// One byte changed in the artifact and the statement no longer binds it.
	forged := append([]byte(nil), part.Data...)
	forged[len(forged)-2] ^= 1
	if _, err := w.receipts.Published().Verify(receipt.Evidence{PaymentResponse: base64.StdEncoding.EncodeToString(receipts[0]), Body: forged}, time.Now()); err == nil {
		t.Error("a changed artifact verifies against the task's receipt")
	}
}

// httpRequirements are the accepts of the route's HTTP 402, for comparison.
func (w *paidWorld) httpRequirements(t *testing.T, path string) any {
	t.Helper()
	resp, err := w.h.Client.Get(w.h.BaseURL + path)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	raw, err := base64.StdEncoding.DecodeString(resp.Header.Get(x402.HeaderPaymentRequired))
	if resp.StatusCode != http.StatusPaymentRequired || err != nil {
		t.Fatalf("GET %s = %d, PAYMENT-REQUIRED %v", path, resp.StatusCode, err)
	}
	return apitest.At(apitest.Decode(t, raw), "accepts")
}

func jsonText(v any) string { b, _ := json.Marshal(v); return string(b) }

// officialClient is one official A2A client: the script that drives it, the npm package it
// needs, the version's GetTask method and task states, and what it must find in the card.
type officialClient struct {
	name, pkg, script, getTask     string
	inputRequired, completed, fail string
	checkCard                      func(t *testing.T, card any, endpoint string)
}

var officialClients = []officialClient{
	{name: "v1.0 @a2a-js/sdk 1.3.0", pkg: "@a2a-js/sdk", script: agentScript, getTask: "GetTask",
		inputRequired: "TASK_STATE_INPUT_REQUIRED", completed: "TASK_STATE_COMPLETED", fail: "TASK_STATE_FAILED",
		checkCard: func(t *testing.T, card any, endpoint string) {
			iface := apitest.At(card, "supportedInterfaces", 0)
			if apitest.At(iface, "url") != endpoint || apitest.At(iface, "protocolBinding") != "JSONRPC" || apitest.At(iface, "protocolVersion") != "1.0" {
				t.Errorf("card interface %v", iface)
			}
		}},
	{name: "v0.3 @a2a-js/sdk 0.3.14", pkg: "a2a-sdk-v03", script: agentScript03, getTask: "tasks/get",
		inputRequired: "input-required", completed: "completed", fail: "failed",
		checkCard: func(t *testing.T, card any, endpoint string) {
			if apitest.At(card, "url") != endpoint || apitest.At(card, "preferredTransport") != "JSONRPC" || apitest.At(card, "protocolVersion") != "0.3.0" {
				t.Errorf("card's v0.3 interface: url %v, preferredTransport %v, protocolVersion %v",
					apitest.At(card, "url"), apitest.At(card, "preferredTransport"), apitest.At(card, "protocolVersion"))
			}
		}},
}

// TestOfficialClientPaysForATask (issue 28, item 2; v0.3 since): each official client, v1.0
// and v0.3, finds the JSON-RPC interface of its version in the card, its message creates a
// task in input-required carrying the HTTP 402's requirements, @x402/evm pays them on the
// embedded chain, and the paid message completes the task with the answer as a data artifact
// and the settlement's receipt, in the client's own shapes; its GetTask (tasks/get) reads the
// same task. A bad parameter fails the task before any requirement is issued, and a route
// whose upstream fails charges nothing.
func TestOfficialClientPaysForATask(t *testing.T) {
	testenv.NeedsNode(t)
	w := startPaid(t)
	for _, c := range officialClients {
		t.Run(c.name, func(t *testing.T) { w.payForATask(t, c) })
	}
}

func (w *paidWorld) payForATask(t *testing.T, c officialClient) {
	const price = 5_000 // fr.tva's, in the catalog

	t.Run("paid call completes", func(t *testing.T) {
		before, settled := w.balance(t, w.dev.PayTo), len(w.dev.Facilitator.Ledger().List(ledger.Settled))
		out := w.agent(t, c, "fr.tva", map[string]any{"siren": "303265045"})

		c.checkCard(t, out["card"], w.h.BaseURL+"/a2a")
		if ext := apitest.At(out, "card", "capabilities", "extensions", 0); apitest.At(ext, "uri") != a2a.ExtensionX402 || apitest.At(ext, "required") != true {
			t.Errorf("card extension %v", ext)
		}

		first := apitest.At(out, "first", "status")
		if apitest.At(first, "state") != c.inputRequired || apitest.At(first, "message", "metadata", a2a.MetaStatus) != "payment-required" {
			t.Fatalf("first answer %s", jsonText(first))
		}
		got := apitest.At(first, "message", "metadata", a2a.MetaRequired, "accepts")
		if want := w.httpRequirements(t, "/v1/fr/tva?siren=303265045"); jsonText(got) != jsonText(want) {
			t.Errorf("requirements over A2A %s\nover HTTP %s", jsonText(got), jsonText(want))
		}

		paid := apitest.At(out, "paid")
		if apitest.At(paid, "status", "state") != c.completed {
			t.Fatalf("paid answer %s", jsonText(paid))
		}
		if apitest.At(paid, "artifacts", 0, "parts", 0, "data", "tva") != "FR40303265045" {
			t.Errorf("artifact %s", jsonText(apitest.At(paid, "artifacts")))
		}
		meta := apitest.At(paid, "status", "message", "metadata")
		if apitest.At(meta, a2a.MetaStatus) != "payment-completed" || apitest.At(meta, a2a.MetaReceipts, 0, "success") != true ||
			apitest.At(meta, a2a.MetaReceipts, 0, "transaction") == "" || apitest.At(meta, a2a.MetaReceipts, 0, "transaction") == nil {
			t.Errorf("receipt metadata %s", jsonText(meta))
		}
		w.verifyTaskReceipt(t, c.getTask, apitest.At(paid, "id").(string), "/v1/fr/tva")
		if apitest.At(out, "got", "status", "state") != c.completed || apitest.At(out, "got", "id") != apitest.At(paid, "id") {
			t.Errorf("%s %s", c.getTask, jsonText(apitest.At(out, "got")))
		}
		if b := w.balance(t, w.dev.PayTo); b-before != price {
			t.Errorf("payTo received %d, want %d", b-before, price)
		}
		if n := len(w.dev.Facilitator.Ledger().List(ledger.Settled)); n != settled+1 {
			t.Errorf("the ledger records %d settled payments, want %d", n, settled+1)
		}
	})

	t.Run("bad parameter fails before any payment", func(t *testing.T) {
		settled := len(w.dev.Facilitator.Ledger().List(ledger.Settled))
		payer := w.balance(t, w.dev.Payer)
		out := w.agent(t, c, "fr.tva", map[string]any{"siren": "12"})
		first := apitest.At(out, "first", "status")
		if apitest.At(first, "state") != c.fail || out["paid"] != nil {
			t.Fatalf("first answer %s", jsonText(first))
		}
		if apitest.At(first, "message", "metadata", a2a.MetaRequired) != nil {
			t.Errorf("a bad call was offered payment requirements: %s", jsonText(first))
		}
		if apitest.At(first, "message", "parts", 1, "data", "error", "param") != "siren" {
			t.Errorf("the failure does not name the parameter: %s", jsonText(first))
		}
		if n := len(w.dev.Facilitator.Ledger().List(ledger.Settled)); n != settled || w.balance(t, w.dev.Payer) != payer {
			t.Errorf("settled %d (was %d), payer %d (was %d)", n, settled, w.balance(t, w.dev.Payer), payer)
		}
	})

	t.Run("failed route charges nothing", func(t *testing.T) {
		settled := len(w.dev.Facilitator.Ledger().List(ledger.Settled))
		payer := w.balance(t, w.dev.Payer)
		out := w.agent(t, c, "fr.commune", map[string]any{"cp": "44000"})
		if apitest.At(out, "first", "status", "state") != c.inputRequired {
			t.Fatalf("first answer %s", jsonText(apitest.At(out, "first")))
		}
		paid := apitest.At(out, "paid", "status")
		meta := apitest.At(paid, "message", "metadata")
		if apitest.At(paid, "state") != c.fail || apitest.At(meta, a2a.MetaStatus) != "payment-failed" ||
			jsonText(apitest.At(meta, a2a.MetaReceipts)) != "[]" || apitest.At(paid, "message", "parts", 1, "data", "error", "upstream") != "geo-api" {
			t.Errorf("paid answer %s", jsonText(paid))
		}
		if len(w.failing.Requests()) == 0 {
			t.Error("the route never called its upstream")
		}
		if n := len(w.dev.Facilitator.Ledger().List(ledger.Settled)); n != settled || w.balance(t, w.dev.Payer) != payer {
			t.Errorf("settled %d (was %d), payer %d (was %d)", n, settled, w.balance(t, w.dev.Payer), payer)
		}
	})
}
