// Package deprules holds the tests that enforce the tree's rules (ARCHITECTURE.md): which
// packages may import the chain, browser, proxy and HTTP-server libraries, and that every log
// key is a shared constant of appliance/obs. `make lint` runs them.
package deprules
