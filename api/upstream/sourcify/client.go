// Package sourcify is the connector of Sourcify (sourcify.dev), the open repository of verified
// contracts: the v2 lookup GET /v2/contract/{chainId}/{address} with the ABI, the compilation
// and Sourcify's own proxy resolution. A contract Sourcify has not verified is ErrNotVerified.
package sourcify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
)

// Name is the registry name.
const Name = "sourcify"

// Fields are the parts of a verified contract the connector asks for: `fields=all` would bring
// every source file and the compiler's whole input and output.
const Fields = "abi,compilation,proxyResolution"

// ErrNotVerified is a contract Sourcify has no match for (its 404).
var ErrNotVerified = errors.New("contract not verified on Sourcify")

// Client looks contracts up.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

func (c *Client) Ready() error { return c.h.Ready() }

// Contract is a verified contract as the v2 lookup returns it.
type Contract struct {
	Match         string `json:"match"` // exact_match or match
	CreationMatch string `json:"creationMatch"`
	RuntimeMatch  string `json:"runtimeMatch"`
	ChainID       string `json:"chainId"`
	Address       string `json:"address"`
	VerifiedAt    string `json:"verifiedAt"`
	MatchID       string `json:"matchId"`
	// ABI is kept as the JSON Sourcify sent: the route returns it as it is and summarises it.
	ABI         []json.RawMessage `json:"abi"`
	Compilation *Compilation      `json:"compilation"`
	Proxy       *ProxyResolution  `json:"proxyResolution"`
}

// Compilation names the contract and its compiler.
type Compilation struct {
	Language           string `json:"language"`
	Compiler           string `json:"compiler"`
	CompilerVersion    string `json:"compilerVersion"`
	Name               string `json:"name"`
	FullyQualifiedName string `json:"fullyQualifiedName"`
}

// ProxyResolution is what Sourcify found out about a proxy when it verified the contract.
type ProxyResolution struct {
	IsProxy         bool    `json:"isProxy"`
	ProxyType       *string `json:"proxyType"`
	Implementations []struct {
		Address string `json:"address"`
		Name    string `json:"name"`
	} `json:"implementations"`
}

// Contract looks up the verified contract at address on chainID. An unverified contract (404,
// or an answer whose match is null) is ErrNotVerified.
func (c *Client) Contract(ctx context.Context, chainID int64, address string) (*Contract, error) {
	path := fmt.Sprintf("/v2/contract/%d/%s", chainID, url.PathEscape(strings.ToLower(address)))
	var out Contract
	if err := c.h.GetJSON(ctx, path, url.Values{"fields": {Fields}}, &out); err != nil {
		switch upstream.StatusOf(err) {
		case 404:
			return nil, ErrNotVerified
		case 400: // the address is checked before the call: what is left is the chain
			return nil, &UnsupportedChainError{ChainID: chainID}
		}
		return nil, err
	}
	if out.Match == "" {
		return nil, ErrNotVerified
	}
	return &out, nil
}

// UnsupportedChainError is Sourcify's 400 for a chain it does not follow.
type UnsupportedChainError struct{ ChainID int64 }

func (e *UnsupportedChainError) Error() string {
	return fmt.Sprintf("Sourcify does not support chain %d", e.ChainID)
}
