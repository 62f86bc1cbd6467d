// The official MCP TypeScript SDK as an agent uses it against /mcp, at a given revision: it lists
// the tools, calls one unpaid (the x402 MCP transport answers isError with the PaymentRequired),
// signs the payment with @x402/evm's exact scheme, and calls again with it in
// _meta["x402/payment"]. The SDK validates the paid result's structuredContent against the
// tool's outputSchema itself (Client.callTool, with Ajv), and throws when it does not conform.
// It prints what it saw as JSON.
//
// usage: node mcp-client.mjs URL REVISION TOOL ARGS_JSON PRIVATE_KEY_HEX ASSET MAX_ATOMIC
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { privateKeyToAccount } from "viem/accounts";

const [url, revision, tool, argsJSON, key, asset, max] = process.argv.slice(2);
const args = JSON.parse(argsJSON);

// The client always opens with its newest revision (2025-11-25 in 1.32); to speak an older one
// it supports, the initialize it sends asks for that one, and the SDK then keeps what the server
// answers (header MCP-Protocol-Version on every later request).
const transport = new StreamableHTTPClientTransport(new URL(url));
const send = transport.send.bind(transport);
transport.send = (message, options) => {
  if (message.method === "initialize") {
    message = { ...message, params: { ...message.params, protocolVersion: revision } };
  }
  return send(message, options);
};

const client = new Client({ name: "peage-interop", version: "1.0.0" });
await client.connect(transport);

const { tools } = await client.listTools();
const listed = tools.find((t) => t.name === tool);
if (!listed) throw new Error(`tool ${tool} not listed`);

const unpaid = await client.callTool({ name: tool, arguments: args });
if (!unpaid.isError) throw new Error("the unpaid call succeeded");

const account = privateKeyToAccount(key.startsWith("0x") ? key : `0x${key}`);
const payer = new x402Client()
  .register("eip155:*", new ExactEvmScheme(account))
  .setSpendControls({ allowedAssets: [{ network: "eip155:*", asset, maxAmountPerPayment: max }] });
const payment = await payer.createPaymentPayload(unpaid.structuredContent);

const paid = await client.callTool({ name: tool, arguments: args, _meta: { "x402/payment": payment } });
await client.close();

console.log(JSON.stringify({
  protocolVersion: transport.protocolVersion,
  serverVersion: client.getServerVersion(),
  toolCount: tools.length,
  tool: listed,
  // The SDK compiled a validator from the listed outputSchema, and ran it on the paid result.
  outputValidated: typeof client.getToolOutputValidator(tool) === "function",
  unpaid: unpaid.structuredContent,
  paid: { isError: paid.isError ?? false, structuredContent: paid.structuredContent, meta: paid._meta ?? null },
}));
