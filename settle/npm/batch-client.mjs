// The official buyer of the API's batch-settlement tests: @x402/fetch with @x402/evm's
// batch-settlement client scheme (channel state in the client's memory, chain reads through
// viem), registered alone so it answers every 402 with batch-settlement. It runs a list of
// steps and prints, as JSON, every HTTP exchange it made: what it paid with, the status, the
// 402's error and the receipt.
//
// usage: node batch-client.mjs '{"rpc":..., "chainId":..., "key":..., "asset":..., "cap":..., "steps":[...]}'
// steps: {"op":"pay","url":U,"n":N}        N calls through the wrapped fetch
//        {"op":"skew","url":U,"delta":"-5000"}  shift the client's own charged cumulative amount
//        {"op":"refund","url":U,"amount":"..."} cooperative refund (amount optional)
import { wrapFetchWithPayment, x402Client, decodePaymentResponseHeader } from "@x402/fetch";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { BatchSettlementEvmScheme } from "@x402/evm/batch-settlement/client";
import { toClientEvmSigner } from "@x402/evm";
import { createPublicClient, defineChain, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";

const cfg = JSON.parse(process.argv[2]);
const chain = defineChain({
  id: cfg.chainId, name: "dev", nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
  rpcUrls: { default: { http: [cfg.rpc] } },
});
const account = privateKeyToAccount(cfg.key.startsWith("0x") ? cfg.key : `0x${cfg.key}`);
const signer = toClientEvmSigner(account, createPublicClient({ chain, transport: http(cfg.rpc) }));
const scheme = new BatchSettlementEvmScheme(signer);
const client = new x402Client()
  .register("eip155:*", scheme)
  .setSpendControls({ allowedAssets: [{ network: "eip155:*", asset: cfg.asset, maxAmountPerPayment: cfg.cap }] });

const exchanges = [];
// Records each exchange from its headers only: the wrapper reads the bodies itself.
async function recordingFetch(input, init) {
  const req = new Request(input, init);
  const sent = req.headers.get("PAYMENT-SIGNATURE");
  const res = await fetch(req);
  const x = { url: req.url, status: res.status };
  if (sent) {
    const p = JSON.parse(Buffer.from(sent, "base64").toString());
    x.type = p.payload.type;
    x.max = p.payload.voucher?.maxClaimableAmount;
    x.deposit = p.payload.deposit?.amount;
    x.header = sent;
  }
  const required = res.headers.get("PAYMENT-REQUIRED");
  if (required && res.status === 402) x.error = decodePaymentRequiredHeader(required).error ?? "";
  const receipt = res.headers.get("PAYMENT-RESPONSE");
  if (receipt) x.receipt = decodePaymentResponseHeader(receipt);
  exchanges.push(x);
  return res;
}

const pay = wrapFetchWithPayment(recordingFetch, client);
const results = [];
for (const step of cfg.steps) {
  if (step.op === "pay") {
    for (let i = 0; i < step.n; i++) {
      const res = await pay(step.url);
      const body = await res.text();
      results.push({ op: "pay", status: res.status, body: res.status === 200 ? "" : body });
    }
  } else if (step.op === "skew") {
    const requirements = decodePaymentRequiredHeader((await fetch(step.url)).headers.get("PAYMENT-REQUIRED"))
      .accepts.find((a) => a.scheme === "batch-settlement");
    const config = scheme.buildChannelConfig(requirements);
    const { computeChannelId } = await import("@x402/evm/batch-settlement/client");
    const key = computeChannelId(config, requirements.network).toLowerCase();
    const ctx = await scheme.storage.get(key);
    ctx.chargedCumulativeAmount = (BigInt(ctx.chargedCumulativeAmount) + BigInt(step.delta)).toString();
    await scheme.storage.set(key, ctx);
    results.push({ op: "skew", charged: ctx.chargedCumulativeAmount });
  } else if (step.op === "refund") {
    try {
      const r = await scheme.refund(step.url, step.amount ? { amount: step.amount, fetch: recordingFetch } : { fetch: recordingFetch });
      results.push({ op: "refund", receipt: r });
    } catch (e) {
      results.push({ op: "refund", error: String(e.message ?? e) });
    }
  }
}
process.stdout.write(JSON.stringify({ results, exchanges }) + "\n", () => process.exit(0));
