// Package goplus is the connector of GoPlus Security's token_security API (keyless, per-IP
// limit): what a token contract lets its owner do, its taxes, holders and liquidity. Every flag
// is the text "0" or "1"; a missing flag means unknown, never safe.
package goplus

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/wire"
)

// Name is the registry name.
const Name = "goplus"

// ErrNoData means GoPlus answered without a record for the token.
var ErrNoData = errors.New("goplus has no record of this token")

// Client calls the API through the process-wide httpc client.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

// Ready is nil: the keyless tier needs nothing.
func (c *Client) Ready() error { return c.h.Ready() }

// Holder is one of the top holders (or LP holders); Percent is a fraction of the supply.
type Holder struct {
	Address    string     `json:"address"`
	Tag        string     `json:"tag"`
	IsContract wire.Int   `json:"is_contract"`
	Percent    wire.Float `json:"percent"`
	IsLocked   wire.Int   `json:"is_locked"`
}

// Security is one token's record. Flag fields are "1", "0" or "" (unknown).
type Security struct {
	TokenName            string   `json:"token_name"`
	TokenSymbol          string   `json:"token_symbol"`
	TotalSupply          string   `json:"total_supply"`
	IsHoneypot           string   `json:"is_honeypot"`
	CannotSellAll        string   `json:"cannot_sell_all"`
	CannotBuy            string   `json:"cannot_buy"`
	BuyTax               string   `json:"buy_tax"`
	SellTax              string   `json:"sell_tax"`
	IsOpenSource         string   `json:"is_open_source"`
	IsProxy              string   `json:"is_proxy"`
	IsMintable           string   `json:"is_mintable"`
	OwnerAddress         string   `json:"owner_address"`
	CanTakeBackOwnership string   `json:"can_take_back_ownership"`
	HiddenOwner          string   `json:"hidden_owner"`
	OwnerChangeBalance   string   `json:"owner_change_balance"`
	Selfdestruct         string   `json:"selfdestruct"`
	TransferPausable     string   `json:"transfer_pausable"`
	IsBlacklisted        string   `json:"is_blacklisted"`
	SlippageModifiable   string   `json:"slippage_modifiable"`
	HolderCount          string   `json:"holder_count"`
	Holders              []Holder `json:"-"` // read through rawSecurity, which tolerates null
	LPHolders            []Holder `json:"-"`
	Dex                  []struct {
		Name      string     `json:"name"`
		Liquidity wire.Float `json:"liquidity"`
		Pair      string     `json:"pair"`
	} `json:"dex"`
}

// rawSecurity reads the holder lists tolerantly (GoPlus sends null for an empty list).
type rawSecurity struct {
	Security
	RawHolders   wire.List[Holder] `json:"holders"`
	RawLPHolders wire.List[Holder] `json:"lp_holders"`
}

// TokenSecurity asks the record of address on chainID ("1", "8453").
func (c *Client) TokenSecurity(ctx context.Context, chainID, address string) (*Security, error) {
	addr := strings.ToLower(address)
	var out struct {
		Code    wire.Int               `json:"code"`
		Message string                 `json:"message"`
		Result  map[string]rawSecurity `json:"result"`
	}
	op := "GET /api/v1/token_security/" + chainID
	if err := c.h.GetJSON(ctx, "/api/v1/token_security/"+url.PathEscape(chainID), url.Values{"contract_addresses": {addr}}, &out); err != nil {
		return nil, err
	}
	if out.Code.V != 1 {
		return nil, &upstream.Error{Upstream: Name, Op: op, Status: 200, Err: fmt.Errorf("code %s: %s", strconv.FormatInt(out.Code.V, 10), out.Message)}
	}
	r, ok := out.Result[addr]
	if !ok {
		return nil, ErrNoData
	}
	s := r.Security
	s.Holders, s.LPHolders = r.RawHolders, r.RawLPHolders
	return &s, nil
}
