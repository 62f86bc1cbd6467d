// Package chain serves the chain routes that read the chain itself over JSON-RPC:
// /v1/chain/block, gas, balance, allowance, tx and token, through api/upstream/chainrpc (Base
// mainnet in production, the embedded chain in `appliance dev`), /v1/chain/abi, which adds
// Sourcify's verified interfaces to the proxy slots read from the chain, and /v1/chain/address,
// 60 days of token payments from an indexer or the chain's logs, and /v1/chain/ens (ENS on
// Ethereum mainnet, Basenames on Base, EIP-3668 offchain lookups through the egress guard). Amounts are exact decimal
// text computed from the contract's decimals, never floats.
package chain

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream/blockscout"
	"github.com/peage/appliance/api/upstream/chainrpc"
	"github.com/peage/appliance/api/upstream/sourcify"
)

// Parts are the family's collaborators.
type Parts struct {
	// Client reads the chain; nil leaves every route unavailable (503 before any 402) with
	// ClientErr as the reason.
	Client    *chainrpc.Client
	ClientErr error
	// Sourcify serves /v1/chain/abi, which reads proxy slots through Client when the asked
	// chain is Client's and works without it otherwise; nil leaves the route unavailable.
	Sourcify *sourcify.Client
	// Indexer, when set, reads the address route's 60 days of transfers; nil reads the chain's
	// logs over the last LogsMaxBlocks blocks (default 10,000) and declares the truncation.
	Indexer       *blockscout.Client
	LogsMaxBlocks uint64
	// ENS serves /v1/chain/ens (Ethereum mainnet, and Basenames through Client).
	ENS ENSDeps
	Now func() time.Time
}

// Routes holds the family's handlers.
type Routes struct {
	d       Parts
	related []*catalog.Entry // the chain routes the gas answer links to
}

// With builds the family.
func With(d Parts) *Routes {
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Routes{d: d}
}

// Bind attaches the handlers; each is ready once a chain endpoint is configured.
func (r *Routes) Bind(c *catalog.Catalog) error {
	// The catalog may import only the standard library, so the EIP-55 check of addresses (it
	// needs Keccak-256) is installed here; it runs before any 402 like every format check.
	if err := c.RefineFormat("evm_address", chainrpc.CheckAddress); err != nil {
		return err
	}
	if err := c.RefineFormat("ens", func(s string) error { _, err := NormalizeENS(s); return err }); err != nil {
		return err
	}
	ready := func() error {
		if r.d.Client != nil {
			return nil
		}
		if r.d.ClientErr != nil {
			return fmt.Errorf("no chain endpoint: %w", r.d.ClientErr)
		}
		return chainrpc.ErrNotConfigured
	}
	for _, b := range []struct {
		id string
		h  catalog.Handler
	}{
		{"chain.block", r.block},
		{"chain.gas", r.gas},
		{"chain.balance", r.balance},
		{"chain.allowance", r.allowance},
		{"chain.tx", r.tx},
		{"chain.token", r.token},
		{"chain.address", r.address},
	} {
		if err := c.Bind(b.id, b.h, ready); err != nil {
			return err
		}
	}
	ensReady := func() error {
		if r.d.ENS.Client != nil {
			return nil
		}
		if r.d.ENS.ClientErr != nil {
			return fmt.Errorf("no Ethereum endpoint for ENS: %w", r.d.ENS.ClientErr)
		}
		return chainrpc.ErrNoENS
	}
	if err := c.Bind("chain.ens", r.ens, ensReady); err != nil {
		return err
	}
	if r.d.Sourcify != nil {
		if err := c.Bind("chain.abi", r.abi, r.d.Sourcify.Ready); err != nil {
			return err
		}
	}
	for _, e := range c.Entries() {
		if e.Family == "chain" && e.Kind == catalog.Paid && e.ID != "chain.gas" {
			r.related = append(r.related, e)
		}
	}
	return nil
}

// next maps the related chain routes that are available to an example request of each.
func (r *Routes) next() map[string]string {
	out := map[string]string{}
	for _, e := range r.related {
		if !e.Available() {
			continue
		}
		out[strings.TrimPrefix(e.ID, "chain.")] = exampleRequest(e)
	}
	return out
}

func exampleRequest(e *catalog.Entry) string {
	if len(e.Example) == 0 {
		return e.Path
	}
	q := url.Values{}
	keys := make([]string, 0, len(e.Example))
	for k := range e.Example {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		q.Set(k, fmt.Sprint(e.Example[k]))
	}
	return e.Path + "?" + q.Encode()
}

// fail says what an address that is not a token contract means for the route: param names the
// parameter it came from (a 400; "" when the address is the subject of the route: 404); the
// configured USDC failing is the appliance's problem, not the caller's. Any other failure is
// the connector's, mapped at the edge. Nothing is charged for any of these.
func (r *Routes) fail(err error, param string) error {
	var nt *chainrpc.NotTokenError
	if errors.As(err, &nt) {
		switch {
		case nt.Address == r.d.Client.USDC() && param != "":
			return apierr.Upstream(chainrpc.Name, err, "the configured USDC (chain.usdc) %s", nt.Error())
		case param != "":
			return apierr.BadParam(param, "%s", nt.Error())
		}
		return apierr.NotFound("%s", nt.Error())
	}
	return err
}

func network(id uint64) string { return fmt.Sprintf("eip155:%d", id) }
