// Package usdc holds the contracts of the embedded chain: the test USDC (contracts/TestUSDC.sol,
// a 6-decimal token with USDC's EIP-3009 surface, and an ERC-1271 test wallet) and the project's
// own x402BatchSettlement with its ERC-3009 deposit collector (contracts/x402BatchSettlement.sol,
// written from the batch-settlement scheme's specification), the ABI and bytecode the pinned npm solc compiled from it, and the Go bindings
// abigen derived from those. `go generate ./settle/usdc` redoes both steps; the staleness test
// fails when the checked-in outputs no longer match the source.
package usdc

import _ "embed"

// The runtime code of the batch-settlement contracts, which the embedded chain places at the
// scheme's canonical addresses in its genesis (they have no constructor state to set up).
var (
	//go:embed x402BatchSettlement.runtime.bin
	BatchSettlementRuntime string
	//go:embed ERC3009DepositCollector.runtime.bin
	DepositCollectorRuntime string
)
