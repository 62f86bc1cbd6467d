// Command bindgen writes the Go bindings of the test contracts from the ABI and bytecode that
// gen/compile.mjs produced. It calls go-ethereum's abigen library (BindV2) directly rather than
// the abigen command, whose CLI pulls in most of geth's dependency tree.
//
// usage: go run ./settle/usdc/gen/bindgen [dir]
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/peage/appliance/settle/usdc/gen/bindings"
)

func main() {
	dir := "."
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	for _, c := range bindings.Contracts {
		code, err := bindings.Generate(dir, c)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bindgen:", err)
			os.Exit(1)
		}
		if err := os.WriteFile(filepath.Join(dir, bindings.FileName(c)), code, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "bindgen:", err)
			os.Exit(1)
		}
	}
}
