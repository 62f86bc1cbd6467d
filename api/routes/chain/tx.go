package chain

import (
	"context"
	"errors"
	"math/big"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream/chainrpc"
)

// Selectors of the EIP-3009 calls an x402 facilitator submits, named in the answer.
var methods = map[string]string{
	"0xa9059cbb": "transfer",
	"0x23b872dd": "transferFrom",
	"0x095ea7b3": "approve",
	"0xe3ee160e": "transferWithAuthorization",
	"0xcf092995": "transferWithAuthorization",
	"0xef55bec6": "receiveWithAuthorization",
}

type transfer struct {
	Standard string  `json:"standard"` // erc20 or erc721
	Token    string  `json:"token"`
	Symbol   string  `json:"symbol"`
	Decimals *uint8  `json:"decimals"` // null when the token did not say
	From     string  `json:"from"`
	To       string  `json:"to"`
	Amount   *string `json:"amount"` // null for an ERC-721 or a token without decimals
	Atomic   *string `json:"amount_atomic"`
	TokenID  *string `json:"token_id,omitempty"`
	LogIndex uint64  `json:"log_index"`
}

type settlement struct {
	Token    string  `json:"token"`
	Symbol   string  `json:"symbol"`
	Payer    string  `json:"payer"`
	PayTo    string  `json:"pay_to"`
	Amount   *string `json:"amount"`
	Atomic   string  `json:"amount_atomic"`
	Nonce    string  `json:"nonce"`
	LogIndex uint64  `json:"log_index"`
}

func strp(s string) *string { return &s }

func (r *Routes) tx(ctx context.Context, req *catalog.Request) (any, error) {
	t, err := r.d.Client.Tx(ctx, req.Args.Str("hash"))
	if errors.Is(err, chainrpc.ErrTxNotFound) {
		return nil, apierr.NotFound("transaction %s is not known to the chain endpoint", req.Args.Str("hash"))
	}
	if err != nil {
		return nil, r.fail(err, "")
	}
	out := map[string]any{
		"hash":      t.Hash,
		"chain":     chainrpc.ChainName(t.ChainID),
		"chain_id":  t.ChainID,
		"from":      t.From,
		"to":        nilIfEmpty(t.To),
		"value_eth": chainrpc.FormatUnits(t.Value, 18),
		"value_wei": t.Value.String(),
		"nonce":     t.Nonce,
		"type":      t.Type,
		"method":    nil,
		"selector":  nilIfEmpty(t.Selector),
	}
	if m, ok := methods[t.Selector]; ok {
		out["method"] = m
	}
	if t.Pending {
		out["status"], out["success"] = "pending", nil
		out["transfers"], out["x402_settlements"], out["x402"] = []transfer{}, []settlement{}, false
		return out, nil
	}
	out["status"], out["success"] = "failed", t.Success
	if t.Success {
		out["status"] = "success"
	}
	out["block_number"], out["gas_used"] = t.Block, t.GasUsed
	out["contract_created"] = nilIfEmpty(t.Created)
	out["effective_gas_price_wei"], out["fee_wei"], out["fee_eth"] = nil, nil, nil
	if t.GasPrice != nil {
		fee := new(big.Int).Mul(t.GasPrice, new(big.Int).SetUint64(t.GasUsed))
		if t.L1Fee != nil {
			fee.Add(fee, t.L1Fee)
		}
		out["effective_gas_price_wei"], out["fee_wei"], out["fee_eth"] = t.GasPrice.String(), fee.String(), chainrpc.FormatUnits(fee, 18)
	}
	out["l1_fee_wei"] = nil
	if t.L1Fee != nil {
		out["l1_fee_wei"] = t.L1Fee.String()
	}
	transfers := make([]transfer, 0, len(t.Transfers))
	for _, x := range t.Transfers {
		o := transfer{Standard: "erc20", Token: x.Token.Address, Symbol: x.Token.Symbol, From: x.From, To: x.To, LogIndex: x.LogIndex}
		if x.TokenID != nil {
			o.Standard, o.TokenID = "erc721", strp(x.TokenID.String())
		} else {
			o.Atomic = strp(x.Value.String())
			if x.Known {
				d := x.Token.Decimals
				o.Decimals, o.Amount = &d, strp(chainrpc.FormatUnits(x.Value, d))
			}
		}
		transfers = append(transfers, o)
	}
	settlements := make([]settlement, 0, len(t.Settlements))
	for _, s := range t.Settlements {
		o := settlement{Token: s.Token.Address, Symbol: s.Token.Symbol, Payer: s.Payer, PayTo: s.PayTo, Atomic: s.Value.String(), Nonce: s.Nonce, LogIndex: s.LogIndex}
		if s.Known {
			o.Amount = strp(chainrpc.FormatUnits(s.Value, s.Token.Decimals))
		}
		settlements = append(settlements, o)
	}
	out["transfers"], out["x402_settlements"], out["x402"] = transfers, settlements, len(settlements) > 0
	return out, nil
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
