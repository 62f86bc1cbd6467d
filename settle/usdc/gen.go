package usdc

// The generate step: compile the Solidity with the pinned npm solc, then derive the Go bindings
// from the ABI and bytecode it wrote. Both outputs are checked in; TestGeneratedIsFresh fails
// when they no longer match the source.
//go:generate node gen/compile.mjs
//go:generate go run ./gen/bindgen
