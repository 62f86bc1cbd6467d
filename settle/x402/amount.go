package x402

import (
	"math/big"
	"strings"
)

// USDCDecimals is the number of decimals of USDC: 1 USDC = 1,000,000 atomic units.
const USDCDecimals = 6

// Decimal renders atomic units as exact decimal text with the token's decimals and no trailing
// zeros: 5000 with 6 decimals is "0.005". Money is never a float.
func Decimal(atomic *big.Int, decimals int) string {
	neg := atomic.Sign() < 0
	digits := new(big.Int).Abs(atomic).String()
	if len(digits) <= decimals {
		digits = strings.Repeat("0", decimals-len(digits)+1) + digits
	}
	whole, frac := digits[:len(digits)-decimals], strings.TrimRight(digits[len(digits)-decimals:], "0")
	s := whole
	if frac != "" {
		s += "." + frac
	}
	if neg {
		s = "-" + s
	}
	return s
}
