// Compiles contracts/TestTokens.sol with the npm solc package pinned in settle/npm (the same
// compiler and settings as the test USDC) and writes, for each contract, <Name>.abi.json and
// <Name>.bin into the output directory (default: the package directory).
//
// usage: node gen/compile.mjs [outdir]
import { createRequire } from "node:module";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const pkg = resolve(here, "..");
const require = createRequire(join(pkg, "..", "..", "..", "..", "settle", "npm", "package.json"));
const solc = require("solc");

const source = readFileSync(join(pkg, "contracts", "TestTokens.sol"), "utf8");
const input = {
  language: "Solidity",
  sources: { "TestTokens.sol": { content: source } },
  settings: {
    optimizer: { enabled: true, runs: 200 },
    evmVersion: "cancun",
    // No metadata hash: the bytecode then depends only on the source and the compiler.
    metadata: { bytecodeHash: "none" },
    outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
  },
};
const out = JSON.parse(solc.compile(JSON.stringify(input)));
const errors = (out.errors || []).filter((e) => e.severity === "error");
if (errors.length > 0) {
  for (const e of errors) console.error(e.formattedMessage);
  process.exit(1);
}
const outdir = resolve(process.argv[2] || pkg);
for (const name of ["TestToken", "Bytes32Token", "SlotProxy", "Beacon"]) {
  const c = out.contracts["TestTokens.sol"][name];
  writeFileSync(join(outdir, `${name}.abi.json`), JSON.stringify(c.abi, null, 2) + "\n");
  writeFileSync(join(outdir, `${name}.bin`), c.evm.bytecode.object + "\n");
}
console.log(`compiled with solc ${solc.version()} into ${outdir}`);
