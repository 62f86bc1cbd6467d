package chain

import (
	"context"
	"math/big"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream/chainrpc"
)

// amount is a token amount written two ways: exact decimal text in the token's units, and the
// integer in its smallest unit.
type amount struct {
	Address  string `json:"address,omitempty"`
	Symbol   string `json:"symbol"`
	Decimals uint8  `json:"decimals"`
	Amount   string `json:"amount"`
	Atomic   string `json:"amount_atomic"`
}

func tokenAmount(m chainrpc.TokenMeta, v *big.Int) amount {
	return amount{Address: m.Address, Symbol: m.Symbol, Decimals: m.Decimals, Amount: chainrpc.FormatUnits(v, m.Decimals), Atomic: v.String()}
}

func (r *Routes) balance(ctx context.Context, req *catalog.Request) (any, error) {
	b, err := r.d.Client.Balances(ctx, req.Args.Str("address"), req.Args.List("tokens"))
	if err != nil {
		return nil, r.fail(err, "tokens")
	}
	tokens := make([]amount, 0, len(b.Tokens))
	for _, t := range b.Tokens {
		tokens = append(tokens, tokenAmount(t.TokenMeta, t.Value))
	}
	return map[string]any{
		"address":      chainrpc.Checksummed(req.Args.Str("address")),
		"chain":        chainrpc.ChainName(b.ChainID),
		"chain_id":     b.ChainID,
		"block_number": b.Block,
		"native":       amount{Symbol: "ETH", Decimals: 18, Amount: chainrpc.FormatUnits(b.Wei, 18), Atomic: b.Wei.String()},
		"tokens":       tokens,
	}, nil
}

// unlimited is 2^255: wallets approve type(uint256).max, and any allowance this large is
// beyond every supply, so it is reported as unlimited.
var unlimited = new(big.Int).Lsh(big.NewInt(1), 255)

func (r *Routes) allowance(ctx context.Context, req *catalog.Request) (any, error) {
	a, err := r.d.Client.Allowance(ctx, req.Args.Str("token"), req.Args.Str("owner"), req.Args.Str("spender"))
	if err != nil {
		return nil, r.fail(err, "token")
	}
	amt := tokenAmount(a.Token, a.Value)
	return map[string]any{
		"owner":         chainrpc.Checksummed(req.Args.Str("owner")),
		"spender":       chainrpc.Checksummed(req.Args.Str("spender")),
		"chain":         chainrpc.ChainName(a.ChainID),
		"chain_id":      a.ChainID,
		"token":         map[string]any{"address": a.Token.Address, "symbol": a.Token.Symbol, "decimals": a.Token.Decimals},
		"amount":        amt.Amount,
		"amount_atomic": amt.Atomic,
		"unlimited":     a.Value.Cmp(unlimited) >= 0,
	}, nil
}

func (r *Routes) token(ctx context.Context, req *catalog.Request) (any, error) {
	t, err := r.d.Client.Token(ctx, req.Args.Str("address"))
	if err != nil {
		return nil, r.fail(err, "")
	}
	enc := "string"
	if t.Bytes32 {
		enc = "bytes32"
	}
	return map[string]any{
		"address":             t.Address,
		"chain":               chainrpc.ChainName(t.ChainID),
		"chain_id":            t.ChainID,
		"name":                t.Name,
		"symbol":              t.Symbol,
		"decimals":            t.Decimals,
		"total_supply":        chainrpc.FormatUnits(t.Supply, t.Decimals),
		"total_supply_atomic": t.Supply.String(),
		"text_encoding":       enc,
	}, nil
}
