// Package settletest starts the dev facilitator on the embedded chain for the tests of the
// packages that pay through it, as `appliance dev` runs it.
package settletest

import (
	"context"
	"testing"

	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/client"
)

// StartDev starts the dev facilitator (embedded chain, funded payer) in the test's temporary
// directory, closes it when the test ends (a failed close fails the test) and returns a client
// of its socket, as the gate talks to it.
func StartDev(tb testing.TB) (*settle.Dev, *client.Client) {
	tb.Helper()
	dev, err := settle.StartDev(context.Background(), tb.TempDir(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := dev.Close(); err != nil {
			tb.Error(err)
		}
	})
	fc, err := client.New(dev.Addr())
	if err != nil {
		tb.Fatal(err)
	}
	return dev, fc
}
