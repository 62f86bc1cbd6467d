#!/usr/bin/env bash
# Installs the npm packages the settle tests and the x402 bench need (solc for the test USDC,
# the reference x402 client and verifier), into settle/npm/node_modules, only when missing.
set -euo pipefail
cd "$(dirname "$0")/../../settle/npm"
need=0
for p in solc @x402/core @x402/evm @x402/fetch viem; do
	[ -f "node_modules/$p/package.json" ] || need=1
done
if [ "$need" = 1 ]; then
	if [ -f package-lock.json ]; then
		npm ci --no-audit --no-fund --loglevel=error
	else
		npm install --no-audit --no-fund --loglevel=error
	fi
fi
