// Command bindgen writes the Go bindings of the test tokens from the ABI and bytecode that
// gen/compile.mjs produced, through go-ethereum's abigen library (as settle/usdc does).
//
// usage: go run ./api/upstream/chainrpc/testtoken/gen/bindgen [dir]
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/peage/appliance/api/upstream/chainrpc/testtoken/gen/bindings"
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
