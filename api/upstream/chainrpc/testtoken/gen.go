// Package testtoken holds the ERC-20s the chain routes are tested against on the embedded
// chain: TestToken (standard, any decimals) and Bytes32Token (name and symbol as bytes32, like
// MKR), the proxies, and a minimal ENS (registry, public resolver, EIP-3668 offchain resolver;
// contracts/TestENS.sol) with ENS's selectors. The Solidity source is contracts/*.sol; the ABI and bytecode come from the
// pinned npm solc of settle/npm and the Go bindings from abigen. `go generate
// ./api/upstream/chainrpc/testtoken` redoes both steps; TestGeneratedIsFresh fails when the
// checked-in outputs no longer match the source. Nothing here is deployed to a real network.
package testtoken

//go:generate node gen/compile.mjs
//go:generate go run ./gen/bindgen
