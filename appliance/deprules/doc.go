// Package deprules holds the test that enforces the dependency rules of ARCHITECTURE.md:
// which packages may import the chain, browser, proxy and HTTP-server libraries.
package deprules
