// The reference side of the verification benchmark: @x402/evm's exact facilitator verify, under
// Node, over the payloads the Go bench wrote. Chain reads are answered from memory (as the Go
// verifier's are), so both sides measure the same work: decoding, checks, EIP-712 hashing and
// ECDSA recovery. Prints {"ops":N,"seconds":S,"valid":V}.
//
// usage: node bench-verify.mjs PAYLOADS.json SECONDS
import { readFileSync } from "node:fs";
import { ExactEvmScheme } from "@x402/evm/exact/facilitator";

const [file, seconds] = process.argv.slice(2);
const cases = JSON.parse(readFileSync(file, "utf8"));
const asset = cases[0].requirements.asset.toLowerCase();
const signer = {
  address: "0x0000000000000000000000000000000000000001",
  getAddresses: () => ["0x0000000000000000000000000000000000000001"],
  // Payers are plain accounts; the asset is a contract.
  getCode: async ({ address }) => (address.toLowerCase() === asset ? "0x6080" : "0x"),
  readContract: async ({ functionName }) => {
    switch (functionName) {
      case "balanceOf":
        return 10n ** 15n;
      case "authorizationState":
        return false;
      default:
        return undefined; // transferWithAuthorization simulation: succeeds
    }
  },
};
const scheme = new ExactEvmScheme(signer);
const deadline = performance.now() + Number(seconds) * 1000;
const start = performance.now();
let ops = 0;
let valid = 0;
while (performance.now() < deadline) {
  const c = cases[ops % cases.length];
  const r = await scheme.verify(c.payload, c.requirements);
  if (r.isValid) valid++;
  ops++;
}
console.log(JSON.stringify({ ops, seconds: (performance.now() - start) / 1000, valid }));
