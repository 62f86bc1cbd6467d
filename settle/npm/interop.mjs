// The independent client of the interop test: the reference @x402/fetch with @x402/evm's exact
// scheme and a viem account pays for one GET and prints {status, body, receipt} as JSON.
//
// usage: node interop.mjs URL PRIVATE_KEY_HEX ASSET MAX_ATOMIC
import { wrapFetchWithPayment, x402Client, decodePaymentResponseHeader } from "@x402/fetch";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { privateKeyToAccount } from "viem/accounts";

const [url, key, asset, max] = process.argv.slice(2);
const account = privateKeyToAccount(key.startsWith("0x") ? key : `0x${key}`);
// The test token is not one of the client's default assets: allow it explicitly, with a cap.
const client = new x402Client()
  .register("eip155:*", new ExactEvmScheme(account))
  .setSpendControls({ allowedAssets: [{ network: "eip155:*", asset, maxAmountPerPayment: max }] });
const fetchWithPayment = wrapFetchWithPayment(fetch, client);
const res = await fetchWithPayment(url);
const body = await res.text();
const header = res.headers.get("PAYMENT-RESPONSE");
console.log(JSON.stringify({ status: res.status, body, receipt: header ? decodePaymentResponseHeader(header) : null }));
