package chainrpc

import (
	"math/big"
	"strings"
)

// FormatUnits writes v / 10^decimals as exact decimal text, trailing fractional zeros dropped:
// amounts never go through a float.
func FormatUnits(v *big.Int, decimals uint8) string {
	if v == nil {
		return "0"
	}
	neg := v.Sign() < 0
	digits := new(big.Int).Abs(v).String()
	d := int(decimals)
	if len(digits) <= d {
		digits = strings.Repeat("0", d-len(digits)+1) + digits
	}
	whole, frac := digits[:len(digits)-d], strings.TrimRight(digits[len(digits)-d:], "0")
	s := whole
	if frac != "" {
		s += "." + frac
	}
	if neg {
		s = "-" + s
	}
	return s
}
