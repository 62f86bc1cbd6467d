package chain

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream/chainrpc"
	"github.com/peage/appliance/api/upstream/sourcify"
)

// abi answers the verified interface of a contract. Proxies are recognised from the chain
// itself (EIP-1967 implementation and beacon slots, EIP-1822, ZeppelinOS, EIP-1167 clones) when
// the asked chain is the one [chain] rpc reads, otherwise from Sourcify's own proxy resolution;
// the implementation's ABI is then the one answered. Nothing verified, neither the contract nor
// its implementation, is a 404 and is not charged.
func (r *Routes) abi(ctx context.Context, req *catalog.Request) (any, error) {
	addr := chainrpc.Checksummed(req.Args.Str("address"))
	chainID := req.Args.Int("chain_id")

	var proxy *chainrpc.Proxy
	proxySource := ""
	onChain := false
	if r.d.Client != nil {
		id, err := r.d.Client.ChainID(ctx)
		if err != nil {
			return nil, r.fail(err, "")
		}
		if onChain = int64(id) == chainID; onChain {
			p, err := r.d.Client.DetectProxy(ctx, addr)
			switch {
			case errors.Is(err, chainrpc.ErrNoCode):
				return nil, apierr.NotFound("no contract code at %s on chain %d", addr, chainID)
			case err != nil:
				return nil, r.fail(err, "")
			}
			proxy, proxySource = p, "chain"
		}
	}

	own, err := r.lookup(ctx, chainID, addr)
	if err != nil {
		return nil, err
	}
	if !onChain && own != nil && own.Proxy != nil && own.Proxy.IsProxy && len(own.Proxy.Implementations) > 0 {
		p := &chainrpc.Proxy{Implementation: chainrpc.Checksummed(own.Proxy.Implementations[len(own.Proxy.Implementations)-1].Address)}
		if own.Proxy.ProxyType != nil {
			p.Type = *own.Proxy.ProxyType
		}
		proxy, proxySource = p, "sourcify"
	}
	var impl *sourcify.Contract
	if proxy != nil && proxy.Implementation != "" {
		if impl, err = r.lookup(ctx, chainID, proxy.Implementation); err != nil {
			return nil, err
		}
	}
	if own == nil && impl == nil {
		if proxy != nil && proxy.Implementation != "" {
			return nil, apierr.NotFound("%s on chain %d is a %s proxy of %s, and neither is verified on Sourcify", addr, chainID, proxy.Type, proxy.Implementation)
		}
		return nil, apierr.NotFound("%s on chain %d is not verified on Sourcify", addr, chainID)
	}

	// The interface answered: the implementation's when it is verified, else the contract's own.
	iface, abiOf, abiSource := own, addr, "contract"
	if impl != nil {
		iface, abiOf, abiSource = impl, proxy.Implementation, "implementation"
	}
	sum, err := chainrpc.Summarize(iface.ABI)
	if err != nil {
		return nil, apierr.Upstream(sourcify.Name, err, "Sourcify sent an ABI that cannot be read: %v", err)
	}
	out := map[string]any{
		"address":    addr,
		"chain":      chainrpc.ChainName(uint64(chainID)),
		"chain_id":   chainID,
		"verified":   own != nil,
		"match":      nil,
		"abi_of":     abiOf,
		"abi_source": abiSource,
		"abi":        nonNil(iface.ABI),
		"functions":  signatures(sum.Functions, "selector"),
		"events":     signatures(sum.Events, "topic"),
		"errors":     signatures(sum.Errors, "selector"),
		"proxy":      nil,
		"source":     "sourcify",
	}
	describe(out, own)
	if proxy != nil {
		p := map[string]any{"type": proxy.Type, "implementation": nilIfEmpty(proxy.Implementation), "detected_from": proxySource,
			"implementation_verified": impl != nil}
		if proxy.Beacon != "" {
			p["beacon"] = proxy.Beacon
		}
		if proxy.Admin != "" {
			p["admin"] = proxy.Admin
		}
		if impl != nil {
			describe(p, impl)
		}
		if own != nil && impl != nil {
			p["abi"] = nonNil(own.ABI) // the proxy's own functions (upgradeTo, admin, …)
		}
		out["proxy"] = p
	}
	return out, nil
}

// lookup asks Sourcify; an unverified contract is nil without error.
func (r *Routes) lookup(ctx context.Context, chainID int64, addr string) (*sourcify.Contract, error) {
	c, err := r.d.Sourcify.Contract(ctx, chainID, addr)
	var uc *sourcify.UnsupportedChainError
	switch {
	case errors.Is(err, sourcify.ErrNotVerified):
		return nil, nil
	case errors.As(err, &uc):
		return nil, apierr.BadParam("chain_id", "%s", uc.Error())
	case err != nil:
		return nil, err
	}
	return c, nil
}

// describe adds what Sourcify says of a verified contract: its name, compiler and match.
func describe(m map[string]any, c *sourcify.Contract) {
	if c == nil {
		return
	}
	m["match"] = c.Match
	m["verified_at"] = nilIfEmpty(c.VerifiedAt)
	if c.Compilation != nil {
		m["contract_name"] = nilIfEmpty(c.Compilation.Name)
		m["compiler_version"] = nilIfEmpty(c.Compilation.CompilerVersion)
		m["language"] = nilIfEmpty(c.Compilation.Language)
	}
}

func signatures(l []chainrpc.Signature, hashKey string) []map[string]any {
	out := make([]map[string]any, 0, len(l))
	for _, s := range l {
		m := map[string]any{"signature": s.Signature, hashKey: s.Selector}
		if s.StateMutability != "" {
			m["state_mutability"] = s.StateMutability
		}
		if s.Anonymous {
			m["anonymous"] = true
		}
		out = append(out, m)
	}
	return out
}

func nonNil(l []json.RawMessage) []json.RawMessage {
	if l == nil {
		return []json.RawMessage{}
	}
	return l
}
