// Compiles contracts/*.sol (the test USDC and wallet, the x402 batch-settlement channel contract and
// its ERC-3009 deposit collector) with the npm solc package pinned in settle/npm and writes, for
// each contract, <Name>.abi.json and <Name>.bin into the output directory (default: the package
// directory), and <Name>.runtime.bin for the contracts the embedded chain places at their
// canonical addresses in the genesis. The Go bindings are generated from these by abigen (see gen.go).
//
// usage: node gen/compile.mjs [outdir]
import { createRequire } from "node:module";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const pkg = resolve(here, "..");
const require = createRequire(join(pkg, "..", "npm", "package.json"));
const solc = require("solc");

// [source file, contract, written with its runtime code for the genesis]
const contracts = [
  ["TestUSDC.sol", "TestUSDC", false],
  ["TestUSDC.sol", "TestWallet", false],
  ["x402BatchSettlement.sol", "x402BatchSettlement", true],
  ["x402BatchSettlement.sol", "ERC3009DepositCollector", true],
];
const sources = {};
for (const [file] of contracts) {
  sources[file] = { content: readFileSync(join(pkg, "contracts", file), "utf8") };
}
const input = {
  language: "Solidity",
  sources,
  settings: {
    optimizer: { enabled: true, runs: 200 },
    evmVersion: "cancun",
    // No metadata hash: the bytecode then depends only on the source and the compiler.
    metadata: { bytecodeHash: "none" },
    outputSelection: { "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] } },
  },
};
const out = JSON.parse(solc.compile(JSON.stringify(input)));
const errors = (out.errors || []).filter((e) => e.severity === "error");
if (errors.length > 0) {
  for (const e of errors) console.error(e.formattedMessage);
  process.exit(1);
}
const outdir = resolve(process.argv[2] || pkg);
for (const [file, name, genesis] of contracts) {
  const c = out.contracts[file][name];
  writeFileSync(join(outdir, `${name}.abi.json`), JSON.stringify(c.abi, null, 2) + "\n");
  writeFileSync(join(outdir, `${name}.bin`), c.evm.bytecode.object + "\n");
  if (genesis) {
    writeFileSync(join(outdir, `${name}.runtime.bin`), c.evm.deployedBytecode.object + "\n");
  }
}
console.log(`compiled with solc ${solc.version()} into ${outdir}`);
