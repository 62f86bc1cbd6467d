package crypto

import "testing"

// TestHyperliquidCoin: the venues' symbols as Hyperliquid names their coins in predictedFundings.
func TestHyperliquidCoin(t *testing.T) {
	for in, want := range map[string]string{
		"BTCUSDT": "BTC", "AVAXUSDT": "AVAX", "1000PEPEUSDT": "kPEPE", "1000SHIBUSDT": "kSHIB", "1000BONKUSDT": "kBONK",
		"1000000MOGUSDT": "1000000MOG", "1000USDT": "1000", "1INCHUSDT": "1INCH",
	} {
		if got := hyperliquidCoin(in); got != want {
			t.Errorf("hyperliquidCoin(%s) = %s, want %s", in, got, want)
		}
	}
}
