// Package goldenfile holds the -update flag of the golden-file tests, defined once for every
// package that has golden files: `go test ./api/render -update` rewrites them instead of
// comparing (apitest.Golden and the packages' own comparisons take Update()). It is imported by
// test files only, so that a package that defines no golden files gets no -update flag.
package goldenfile

import "flag"

var update = flag.Bool("update", false, "rewrite the golden files instead of comparing with them")

// Update reports whether this run rewrites the golden files.
func Update() bool { return *update }
