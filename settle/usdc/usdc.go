// Package usdc holds the test USDC of the embedded chain: its Solidity source
// (contracts/TestUSDC.sol, a 6-decimal token with USDC's EIP-3009 surface, and an ERC-1271 test
// wallet), the ABI and bytecode the pinned npm solc compiled from it, and the Go bindings
// abigen derived from those. `go generate ./settle/usdc` redoes both steps; the staleness test
// fails when the checked-in outputs no longer match the source.
package usdc
