// Package honeypot is the connector of honeypot.is (keyless): a buy and a sell of the token
// simulated against its main pair, with the taxes measured and the pair's liquidity.
package honeypot

import (
	"context"
	"net/url"

	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/wire"
)

// Name is the registry name.
const Name = "honeypot-is"

// Client calls the API through the process-wide httpc client.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

// Ready is nil: no key is needed today.
func (c *Client) Ready() error { return c.h.Ready() }

// Result is the /v2/IsHoneypot answer (the fields read).
type Result struct {
	Token struct {
		Name         string   `json:"name"`
		Symbol       string   `json:"symbol"`
		TotalHolders wire.Int `json:"totalHolders"`
	} `json:"token"`
	Summary struct {
		Risk      string   `json:"risk"`
		RiskLevel wire.Int `json:"riskLevel"`
	} `json:"summary"`
	SimulationSuccess bool `json:"simulationSuccess"`
	HoneypotResult    *struct {
		IsHoneypot     bool   `json:"isHoneypot"`
		HoneypotReason string `json:"honeypotReason"`
	} `json:"honeypotResult"`
	SimulationResult *struct {
		BuyTax      wire.Float `json:"buyTax"`
		SellTax     wire.Float `json:"sellTax"`
		TransferTax wire.Float `json:"transferTax"`
	} `json:"simulationResult"`
	ContractCode *struct {
		OpenSource bool `json:"openSource"`
		IsProxy    bool `json:"isProxy"`
	} `json:"contractCode"`
	Pair *struct {
		Pair struct {
			Name    string `json:"name"`
			Address string `json:"address"`
		} `json:"pair"`
		Liquidity          wire.Float `json:"liquidity"`
		CreatedAtTimestamp wire.Int   `json:"createdAtTimestamp"`
	} `json:"pair"`
}

// IsHoneypot simulates address on chainID.
func (c *Client) IsHoneypot(ctx context.Context, chainID, address string) (*Result, error) {
	var out Result
	if err := c.h.GetJSON(ctx, "/v2/IsHoneypot", url.Values{"address": {address}, "chainID": {chainID}}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
