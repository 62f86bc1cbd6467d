package x402

import (
	"math/big"
	"testing"
)

func TestDecimal(t *testing.T) {
	cases := []struct {
		atomic   string
		decimals int
		want     string
	}{
		{"0", 6, "0"}, {"1", 6, "0.000001"}, {"5000", 6, "0.005"}, {"10000", 6, "0.01"},
		{"3500000", 6, "3.5"}, {"52000000", 6, "52"}, {"123456789012345678901", 6, "123456789012345.678901"},
		{"-2500000", 6, "-2.5"}, {"15", 0, "15"}, {"1500000000000000000", 18, "1.5"},
	}
	for _, c := range cases {
		n, _ := new(big.Int).SetString(c.atomic, 10)
		if got := Decimal(n, c.decimals); got != c.want {
			t.Errorf("Decimal(%s, %d) = %s, want %s", c.atomic, c.decimals, got, c.want)
		}
	}
}
