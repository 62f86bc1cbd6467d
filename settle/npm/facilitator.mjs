// The official TypeScript facilitator as a remote x402 v2 facilitator for the tests and the
// bench: @x402/core's x402Facilitator with @x402/evm's exact scheme, signing with a viem
// account on the given chain, served over HTTP as the standard facilitator API (POST /verify,
// POST /settle, GET /supported). It catalogues like a Bazaar facilitator: its onAfterSettle
// hook reads the payment's bazaar declaration with @x402/extensions' extractDiscoveryInfo, and
// GET /discovery/resources lists what it catalogued. Prints "listening PORT" once ready.
//
// With --crash-on-settle it exits when asked to settle: a facilitator lost while settling (the
// request sent, no answer). With --exit-after-verify it exits once it has answered a
// verification: a facilitator gone between the verification and the settlement of a call. With --confirmation-timeout-ms=N it waits at most
// N ms for a settlement's receipt, past which @x402/evm answers settlement_pending with the
// broadcast transaction (a slow chain).
//
// usage: node facilitator.mjs PORT RPC_URL CHAIN_ID SIGNER_KEY_HEX [--crash-on-settle] [--exit-after-verify] [--confirmation-timeout-ms=N]
import { createServer } from "node:http";
import { x402Facilitator } from "@x402/core/facilitator";
import { ExactEvmScheme } from "@x402/evm/exact/facilitator";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { BAZAAR, extractDiscoveryInfo } from "@x402/extensions/bazaar";
import { createWalletClient, defineChain, http, publicActions } from "viem";
import { privateKeyToAccount } from "viem/accounts";

const [port, rpc, chainId, key, ...flags] = process.argv.slice(2);
const crash = flags.includes("--crash-on-settle");
const exitAfterVerify = flags.includes("--exit-after-verify");
const timeoutFlag = flags.find((f) => f.startsWith("--confirmation-timeout-ms="));
const chain = defineChain({
  id: Number(chainId), name: "dev", nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
  rpcUrls: { default: { http: [rpc] } },
});
const account = privateKeyToAccount(key.startsWith("0x") ? key : `0x${key}`);
const client = createWalletClient({ account, chain, transport: http(rpc) }).extend(publicActions);
const signer = toFacilitatorEvmSigner(client, timeoutFlag ? { confirmationTimeoutMs: Number(timeoutFlag.split("=")[1]) } : {});

const catalogued = [];
const facilitator = new x402Facilitator()
  .register(`eip155:${chainId}`, new ExactEvmScheme(signer))
  .registerExtension(BAZAAR)
  .onAfterSettle(async ({ paymentPayload, requirements, result }) => {
    if (!result.success) return;
    const found = extractDiscoveryInfo(paymentPayload, requirements);
    if (found) catalogued.push(found);
  });

const read = (req) =>
  new Promise((resolve, reject) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => resolve(body));
    req.on("error", reject);
  });

createServer(async (req, res) => {
  // A facilitator stopping closes its connections: the last answer says so.
  const closing = exitAfterVerify && req.url === "/verify";
  const answer = (status, obj) => {
    res.writeHead(status, { "Content-Type": "application/json", ...(closing ? { Connection: "close" } : {}) });
    res.end(JSON.stringify(obj, (_, v) => (typeof v === "bigint" ? v.toString() : v)));
  };
  try {
    if (req.method === "GET" && req.url === "/supported") return answer(200, facilitator.getSupported());
    if (req.method === "GET" && req.url.startsWith("/discovery/resources"))
      return answer(200, { x402Version: 2, items: catalogued });
    if (req.url === "/settle" && crash) process.exit(3);
    if (req.method === "POST" && (req.url === "/verify" || req.url === "/settle")) {
      const { paymentPayload, paymentRequirements } = JSON.parse(await read(req));
      const out = req.url === "/verify"
        ? await facilitator.verify(paymentPayload, paymentRequirements)
        : await facilitator.settle(paymentPayload, paymentRequirements);
      // The listener closes before the answer leaves, so the settlement that follows is refused
      // at its dial (never sent), not reset by an exit racing its connection.
      if (closing) req.socket.server.close();
      answer(200, out);
      if (closing) res.on("finish", () => process.exit(3));
      return;
    }
    answer(404, { error: "not found" });
  } catch (err) {
    answer(500, { error: String(err?.message ?? err) });
  }
}).listen(Number(port), "127.0.0.1", () => console.log(`listening ${port}`));
