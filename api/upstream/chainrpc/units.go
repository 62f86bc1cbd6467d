package chainrpc

import (
	"math/big"

	"github.com/peage/appliance/settle/x402"
)

// FormatUnits writes v / 10^decimals as exact decimal text, trailing fractional zeros dropped:
// amounts never go through a float.
func FormatUnits(v *big.Int, decimals uint8) string {
	if v == nil {
		return "0"
	}
	return x402.Decimal(v, int(decimals))
}
