package defillama

import (
	"context"
	"testing"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/upstreamtest"
	"github.com/peage/appliance/api/upstream/wire"
)

func TestStablecoins(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect("/stablecoins", upstreamtest.Query("includePrices", "true"), upstreamtest.File(t, "testdata/stablecoins_top25.json"))
	coins, err := New(s.Client(t, Name)).Stablecoins(context.Background())
	if err != nil || len(coins) != 25 {
		t.Fatalf("Stablecoins = %d coins, %v", len(coins), err)
	}
	if c := coins[0]; c.ID != "1" || c.Symbol != "USDT" || c.Name != "Tether" || c.PegType != "peggedUSD" ||
		c.Circulating["peggedUSD"].V != 183396003691.97812 || c.Price.Valid {
		t.Errorf("first = %+v", c)
	}
	if got := USDSupply(coins); got != 303966631334.55066 {
		t.Errorf("USDSupply = %v", got)
	}
}

func TestUSDSupplyCountsDollarPegsOnly(t *testing.T) {
	coins := []Stablecoin{
		{PegType: "peggedUSD", Circulating: map[string]wire.Float{"peggedUSD": {V: 10, Valid: true}}},
		{PegType: "peggedEUR", Circulating: map[string]wire.Float{"peggedEUR": {V: 5, Valid: true}}},
		{PegType: "peggedUSD", Circulating: map[string]wire.Float{}},
	}
	if got := USDSupply(coins); got != 10 {
		t.Errorf("USDSupply = %v, want 10", got)
	}
}

func TestStablecoinsDown(t *testing.T) {
	s := upstreamtest.New(t)
	s.Handle(upstreamtest.ServerError())
	if _, err := New(s.Client(t, Name)).Stablecoins(context.Background()); upstream.StatusOf(err) != 500 {
		t.Fatalf("err = %v", err)
	}
}
