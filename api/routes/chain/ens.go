package chain

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream/chainrpc"
)

// baseReverse is the reverse namespace of Base's legacy reverse registrar: coin type
// 0x80000000 | 8453 (ENSIP-11).
const baseReverse = "80002105.reverse"

// ENSDeps are the ens route's collaborators.
type ENSDeps struct {
	// Client reads Ethereum mainnet (ENS) at Registry; nil leaves the route unavailable with
	// ClientErr as the reason.
	Client    *chainrpc.Client
	ClientErr error
	Registry  string
	// BasenamesRegistry on the family's Base client resolves *.base.eth and Base primary
	// names; "" leaves Basenames out.
	BasenamesRegistry string
	// Gateway fetches EIP-3668 gateways; its transport must go through the egress guard.
	Gateway *http.Client
}

// ensMapping is the ENSIP-15 normalisation the appliance can do without an ENSIP-15 library
// (none is published as a Go module the build can fetch): ASCII names are ENSIP-15 exactly
// (case folded; letters, digits, hyphen, underscore at a label's start only; no "--" in the
// third and fourth places); other names go through the UTS-46 mapping of ENSIP-1 and NFC, and
// emoji, which only ENSIP-15 defines, are refused.
var ensMapping = idna.New(idna.MapForLookup(), idna.Transitional(false), idna.BidiRule(), idna.StrictDomainName(false), idna.CheckHyphens(false))

// NormalizeENS returns the normalised form of an ENS name ending in .eth, or why it has none.
func NormalizeENS(name string) (string, error) {
	n := strings.TrimSuffix(strings.TrimSpace(name), ".")
	if n == "" || len(n) > 255 || !utf8.ValidString(n) {
		return "", errors.New("must be an ENS name ending in .eth")
	}
	ascii := true
	for _, r := range n {
		if r >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		n = strings.ToLower(n)
	} else {
		u, err := ensMapping.ToUnicode(n)
		if err != nil {
			return "", fmt.Errorf("cannot be normalised (ENSIP-15 names with emoji are not supported here): %v", err)
		}
		n = u
	}
	labels := strings.Split(n, ".")
	if len(labels) < 2 || labels[len(labels)-1] != "eth" {
		return "", errors.New("must be an ENS name ending in .eth")
	}
	for _, l := range labels {
		if l == "" {
			return "", errors.New("has an empty label")
		}
		if strings.HasPrefix(l, "xn--") || (len(l) >= 4 && l[2] == '-' && l[3] == '-') {
			return "", fmt.Errorf("label %q has hyphens in its third and fourth places, which ENSIP-15 refuses", l)
		}
		seen := false
		for _, r := range l {
			switch {
			case r == '_':
				if seen {
					return "", fmt.Errorf("label %q has an underscore after its start", l)
				}
			case r < utf8.RuneSelf && !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-'):
				return "", fmt.Errorf("label %q has %q, which ENS names cannot contain", l, r)
			default:
				seen = true
			}
		}
	}
	return n, nil
}

// ens answers a name's address and avatar, or an address's primary name, checked forward: a
// reverse record is the owner's claim, and counts only when the name resolves back to the
// address. Names under base.eth are Basenames, read on Base; an address without an ENS primary
// name is looked up in Base's reverse records too.
func (r *Routes) ens(ctx context.Context, req *catalog.Request) (any, error) {
	e := r.d.ENS
	gw := chainrpc.Gateway(nil)
	if e.Gateway != nil {
		gw = e.Gateway
	}
	if req.Args.Has("name") {
		name, err := NormalizeENS(req.Args.Str("name"))
		if err != nil {
			return nil, apierr.BadParam("name", "%v", err)
		}
		client, registry, chainName := e.Client, e.Registry, "ethereum"
		if strings.HasSuffix(name, ".base.eth") && e.BasenamesRegistry != "" && r.d.Client != nil {
			client, registry, chainName = r.d.Client, e.BasenamesRegistry, "base"
		}
		rec, err := client.Resolve(ctx, registry, name, gw)
		if errors.Is(err, chainrpc.ErrNoResolver) {
			return nil, apierr.NotFound("%s has no resolver on %s: it is not registered, or not set up", name, chainName)
		}
		if err != nil {
			return nil, err
		}
		return map[string]any{
			"input": req.Args.Str("name"), "name": rec.Name, "chain": chainName, "node": rec.Node, "resolver": rec.Resolver,
			"address": nilIfEmpty(rec.Address), "resolved": rec.Address != "", "avatar": nilIfEmpty(rec.Avatar),
			"wildcard": rec.Wildcard, "offchain": rec.Offchain,
		}, nil
	}

	addr := chainrpc.Checksummed(req.Args.Str("address"))
	out := map[string]any{"input": req.Args.Str("address"), "address": addr, "name": nil, "resolved": false, "avatar": nil,
		"chain": nil, "reverse_records": []map[string]any{}}
	type space struct {
		client           *chainrpc.Client
		registry, suffix string
		chain            string
		forwardClient    *chainrpc.Client
		forwardRegistry  string
	}
	spaces := []space{{e.Client, e.Registry, "addr.reverse", "ethereum", e.Client, e.Registry}}
	if e.BasenamesRegistry != "" && r.d.Client != nil {
		spaces = append(spaces, space{r.d.Client, e.BasenamesRegistry, baseReverse, "base", r.d.Client, e.BasenamesRegistry})
	}
	var records []map[string]any
	for _, s := range spaces {
		claimed, err := s.client.ReverseName(ctx, s.registry, addr, s.suffix, gw)
		if err != nil {
			return nil, err
		}
		if claimed == "" {
			continue
		}
		rec := map[string]any{"chain": s.chain, "name": claimed, "verified": false, "resolves_to": nil}
		records = append(records, rec)
		name, err := NormalizeENS(claimed)
		if err != nil || name != claimed {
			rec["problem"] = "the recorded name is not normalised"
			continue
		}
		fc, freg := s.forwardClient, s.forwardRegistry
		if s.chain == "ethereum" && strings.HasSuffix(name, ".base.eth") && len(spaces) > 1 {
			fc, freg = spaces[1].client, spaces[1].registry
		}
		fwd, err := fc.Resolve(ctx, freg, name, gw)
		switch {
		case errors.Is(err, chainrpc.ErrNoResolver):
			rec["problem"] = "the name has no resolver"
			continue
		case err != nil:
			return nil, err
		}
		rec["resolves_to"] = nilIfEmpty(fwd.Address)
		if !strings.EqualFold(fwd.Address, addr) {
			rec["problem"] = "the name does not resolve back to this address"
			continue
		}
		rec["verified"] = true
		if out["resolved"] == false {
			out["name"], out["resolved"], out["avatar"], out["chain"] = name, true, nilIfEmpty(fwd.Avatar), s.chain
		}
		break
	}
	if records != nil {
		out["reverse_records"] = records
	}
	return out, nil
}
