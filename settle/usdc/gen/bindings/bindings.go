// Package bindings renders the Go bindings of the test contracts; the generate step and the
// staleness test share it so both produce byte-identical files.
package bindings

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi/abigen"
)

// Contracts are the compiled contracts that get bindings.
var Contracts = []string{"TestUSDC", "TestWallet", "x402BatchSettlement", "ERC3009DepositCollector"}

// Genesis are the contracts whose runtime code (<c>.runtime.bin) the embedded chain places at
// their canonical addresses in the genesis.
var Genesis = []string{"x402BatchSettlement", "ERC3009DepositCollector"}

// FileName is the checked-in binding file of contract c.
func FileName(c string) string { return strings.ToLower(c) + "_bind.go" }

// Generate renders the binding of contract c from <dir>/<c>.abi.json and <dir>/<c>.bin.
func Generate(dir, c string) ([]byte, error) {
	abi, err := os.ReadFile(filepath.Join(dir, c+".abi.json"))
	if err != nil {
		return nil, err
	}
	bin, err := os.ReadFile(filepath.Join(dir, c+".bin"))
	if err != nil {
		return nil, err
	}
	code, err := abigen.BindV2([]string{c}, []string{string(abi)}, []string{strings.TrimSpace(string(bin))}, "usdc", nil, nil)
	if err != nil {
		return nil, fmt.Errorf("bind %s: %w", c, err)
	}
	return []byte(code), nil
}
