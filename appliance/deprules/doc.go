// Package deprules holds the tests that enforce the rules of ARCHITECTURE.md: the layers (the
// kernel in internal/ knows no daemon, the other daemons know nothing of the API, no route
// family imports another, only the composition root in appliance/ knows every part), which
// packages may import the chain, browser, proxy and HTTP-server libraries, and the shared log
// keys.
package deprules
