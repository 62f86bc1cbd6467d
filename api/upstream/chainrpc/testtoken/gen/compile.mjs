// Compiles contracts/TestTokens.sol and contracts/TestENS.sol with the npm solc package pinned in settle/npm (the same
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

const files = ["TestTokens.sol", "TestENS.sol"];
const sources = Object.fromEntries(files.map((f) => [f, { content: readFileSync(join(pkg, "contracts", f), "utf8") }]));
const input = {
  language: "Solidity",
  sources,
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
const contracts = {
  "TestTokens.sol": ["TestToken", "Bytes32Token", "SlotProxy", "Beacon"],
  "TestENS.sol": ["TestENSRegistry", "TestPublicResolver", "TestOffchainResolver"],
};
for (const [file, names] of Object.entries(contracts)) for (const name of names) {
  const c = out.contracts[file][name];
  writeFileSync(join(outdir, `${name}.abi.json`), JSON.stringify(c.abi, null, 2) + "\n");
  writeFileSync(join(outdir, `${name}.bin`), c.evm.bytecode.object + "\n");
}
console.log(`compiled with solc ${solc.version()} into ${outdir}`);
