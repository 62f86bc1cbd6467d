// Package blockscout is the connector of the address-history indexer: the Etherscan-compatible
// API that Blockscout serves at /api (base.blockscout.com for Base, keyless), action tokentx:
// the token transfers of an address, newest first, a page at a time. Plain JSON-RPC cannot
// answer 60 days of history on public endpoints (eth_getLogs ranges are capped), an indexer can.
package blockscout

import (
	"context"
	"math/big"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/wire"
)

// Name is the registry name.
const Name = "blockscout"

// Client reads transfer histories.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

func (c *Client) Ready() error { return c.h.Ready() }

// Transfer is one row of tokentx.
type Transfer struct {
	Hash     string
	Block    uint64
	Time     time.Time
	LogIndex uint64
	From, To string
	Value    *big.Int
	Symbol   string
	Decimals int
	// Selector is the first four bytes of the transaction's input (Blockscout) or its methodId
	// (Etherscan), "" when the indexer gives neither.
	Selector string
}

type row struct {
	BlockNumber  wire.Int  `json:"blockNumber"`
	TimeStamp    wire.Int  `json:"timeStamp"`
	Hash         string    `json:"hash"`
	LogIndex     wire.Int  `json:"logIndex"`
	From         string    `json:"from"`
	To           string    `json:"to"`
	Value        wire.Text `json:"value"`
	TokenSymbol  string    `json:"tokenSymbol"`
	TokenDecimal wire.Int  `json:"tokenDecimal"`
	Input        string    `json:"input"`
	MethodID     string    `json:"methodId"`
}

type answer struct {
	Status  string         `json:"status"`
	Message string         `json:"message"`
	Result  wire.List[row] `json:"result"`
}

// TokenTransfers reads one page (1-based, size rows) of the transfers of token to and from
// address, newest first. No transfer at all is an empty page, not an error.
func (c *Client) TokenTransfers(ctx context.Context, address, token string, page, size int) ([]Transfer, error) {
	q := url.Values{"module": {"account"}, "action": {"tokentx"}, "address": {strings.ToLower(address)},
		"contractaddress": {strings.ToLower(token)}, "sort": {"desc"}, "page": {strconv.Itoa(page)}, "offset": {strconv.Itoa(size)}}
	var a answer
	if err := c.h.GetJSON(ctx, "", q, &a); err != nil {
		return nil, err
	}
	if a.Status != "1" {
		// Status 0 with an empty result is how the API says "none" ("No token transfers
		// found"); with anything else it is a refusal (bad key, rate limit, bad parameter).
		if len(a.Result) == 0 && strings.HasPrefix(strings.ToLower(a.Message), "no ") {
			return nil, nil
		}
		return nil, &upstream.Error{Upstream: Name, Op: "GET tokentx", Err: errRefused(a.Message)}
	}
	out := make([]Transfer, 0, len(a.Result))
	for i, r := range a.Result {
		v, ok := new(big.Int).SetString(string(r.Value), 10)
		if !ok {
			return nil, upstream.BadAnswer(Name, "GET tokentx", 200, "result["+strconv.Itoa(i)+"].value", errRefused("not an integer: "+string(r.Value)))
		}
		t := Transfer{Hash: r.Hash, Block: uint64(r.BlockNumber.V), Time: time.Unix(r.TimeStamp.V, 0).UTC(), LogIndex: uint64(r.LogIndex.V),
			From: r.From, To: r.To, Value: v, Symbol: r.TokenSymbol, Decimals: int(r.TokenDecimal.V)}
		switch {
		case len(r.MethodID) == 10:
			t.Selector = strings.ToLower(r.MethodID)
		case len(r.Input) >= 10 && strings.HasPrefix(r.Input, "0x"):
			t.Selector = strings.ToLower(r.Input[:10])
		}
		out = append(out, t)
	}
	return out, nil
}

type errRefused string

func (e errRefused) Error() string { return string(e) }
