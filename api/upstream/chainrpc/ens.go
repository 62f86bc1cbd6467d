package chainrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/peage/appliance/api/upstream"
)

// ENS selectors (ENS's registry and public resolver, ENSIP-10, EIP-3668).
var (
	selResolver          = []byte{0x01, 0x78, 0xb8, 0xbf} // resolver(bytes32)
	selAddr              = []byte{0x3b, 0x3b, 0x57, 0xde} // addr(bytes32)
	selNameOf            = []byte{0x69, 0x1f, 0x34, 0x31} // name(bytes32)
	selText              = []byte{0x59, 0xd1, 0xd4, 0x3c} // text(bytes32,string)
	selSupportsInterface = []byte{0x01, 0xff, 0xc9, 0xa7} // supportsInterface(bytes4)
	selResolve           = []byte{0x90, 0x61, 0xb9, 0x23} // resolve(bytes,bytes): ENSIP-10 wildcard resolution
	selOffchainLookup    = []byte{0x55, 0x6f, 0x18, 0x30} // OffchainLookup(address,string[],bytes,bytes4,bytes)
)

// GatewayName is the upstream name an EIP-3668 gateway's failure carries.
const GatewayName = "ens-gateway"

// CCIP-read limits: EIP-3668 leaves them to the client.
const (
	maxLookups       = 4
	maxGatewayAnswer = 1 << 20
)

var (
	bytesT, _   = abi.NewType("bytes", "", nil)
	bytes32T, _ = abi.NewType("bytes32", "", nil)
	addressT, _ = abi.NewType("address", "", nil)
	stringsT, _ = abi.NewType("string[]", "", nil)
	bytes4T, _  = abi.NewType("bytes4", "", nil)
)

// Namehash is EIP-137's namehash of a normalised name.
func Namehash(name string) common.Hash {
	var node common.Hash
	if name == "" {
		return node
	}
	labels := strings.Split(name, ".")
	for i := len(labels) - 1; i >= 0; i-- {
		node = crypto.Keccak256Hash(node[:], crypto.Keccak256([]byte(labels[i])))
	}
	return node
}

// dnsEncode writes a name as DNS wire format labels, as ENSIP-10's resolve() takes it.
func dnsEncode(name string) []byte {
	var b []byte
	for _, l := range strings.Split(name, ".") {
		b = append(b, byte(len(l)))
		b = append(b, l...)
	}
	return append(b, 0)
}

// ErrNoResolver is a name no resolver answers for.
var ErrNoResolver = errors.New("no resolver is set for this name or any parent")

// ENSRecord is what a name resolves to.
type ENSRecord struct {
	Name     string
	Node     string
	Resolver string
	Address  string // "" when the resolver has no address record
	Avatar   string // the avatar text record, "" when none
	Wildcard bool   // answered by a parent's ENSIP-10 resolver
	Offchain bool   // answered through an EIP-3668 gateway
}

// Gateway fetches EIP-3668 gateway URLs; callers pass a client whose transport goes through
// the egress guard, since the URLs are chosen by whoever deployed the resolver.
type Gateway interface {
	Do(*http.Request) (*http.Response, error)
}

// Resolve resolves a normalised name against the ENS registry at registry: the resolver of the
// name or of its nearest parent (one request for all of them), then its address and avatar,
// through resolve(bytes,bytes) when the resolver is an ENSIP-10 wildcard resolver, following
// EIP-3668 offchain lookups through gw.
func (c *Client) Resolve(ctx context.Context, registry, name string, gw Gateway) (*ENSRecord, error) {
	reg := common.HexToAddress(registry)
	var names []string
	for cur := name; ; {
		names = append(names, cur)
		i := strings.IndexByte(cur, '.')
		if i < 0 {
			break
		}
		cur = cur[i+1:]
	}
	outs := make([]hexutil.Bytes, len(names))
	var calls []call
	for i, n := range names {
		calls = append(calls, call{method: "eth_call", args: ethCall(reg, append(append([]byte{}, selResolver...), Namehash(n).Bytes()...)), out: &outs[i]})
	}
	errs, err := c.batch(ctx, "ens resolver", calls)
	if err != nil {
		return nil, err
	}
	var res common.Address
	found := -1
	for i := range names {
		if errs[i] != nil {
			return nil, c.callErr("ens resolver", errs[i])
		}
		if len(outs[i]) >= 32 {
			if a := common.BytesToAddress(outs[i][12:32]); a != (common.Address{}) {
				res, found = a, i
				break
			}
		}
	}
	if found < 0 {
		return nil, ErrNoResolver
	}
	node := Namehash(name)
	rec := &ENSRecord{Name: name, Node: node.Hex(), Resolver: res.Hex(), Wildcard: found > 0}
	extended, err := c.supports(ctx, res, selResolve)
	if err != nil {
		return nil, err
	}
	if !extended && found > 0 {
		return nil, ErrNoResolver // a parent's resolver that cannot answer for subnames
	}
	textCall, err := abi.Arguments{{Type: bytes32T}, {Type: stringT}}.Pack(node, "avatar")
	if err != nil {
		return nil, err
	}
	queries := [][]byte{append(append([]byte{}, selAddr...), node.Bytes()...), append(append([]byte{}, selText...), textCall...)}
	for i, q := range queries {
		data := q
		if extended {
			packed, err := abi.Arguments{{Type: bytesT}, {Type: bytesT}}.Pack(dnsEncode(name), q)
			if err != nil {
				return nil, err
			}
			data = append(append([]byte{}, selResolve...), packed...)
		}
		out, offchain, err := c.ccipCall(ctx, res, data, gw)
		if err != nil {
			if reverted(err) && i == 1 {
				continue // a resolver without text records
			}
			return nil, err
		}
		rec.Offchain = rec.Offchain || offchain
		if extended { // resolve() wraps the inner result as bytes
			v, err := abi.Arguments{{Type: bytesT}}.Unpack(out)
			if err != nil {
				return nil, c.callErr("ens resolve", fmt.Errorf("resolve() result: %w", err))
			}
			out = v[0].([]byte)
		}
		switch i {
		case 0:
			if len(out) >= 32 {
				if a := common.BytesToAddress(out[12:32]); a != (common.Address{}) {
					rec.Address = a.Hex()
				}
			}
		case 1:
			if len(out) > 0 {
				if s, _, err := text(out); err == nil {
					rec.Avatar = s
				}
			}
		}
	}
	return rec, nil
}

var stringT, _ = abi.NewType("string", "", nil)

// ReverseName reads the name record of addr's reverse node under suffix ("addr.reverse" on
// Ethereum, "80002105.reverse" for Base's legacy reverse registrar): the name addr's owner
// claims, "" when none. The claim means nothing until the name resolves back to addr.
func (c *Client) ReverseName(ctx context.Context, registry, addr, suffix string, gw Gateway) (string, error) {
	node := Namehash(strings.ToLower(common.HexToAddress(addr).Hex()[2:]) + "." + suffix)
	var out hexutil.Bytes
	errs, err := c.batch(ctx, "ens reverse", []call{{method: "eth_call", args: ethCall(common.HexToAddress(registry), append(append([]byte{}, selResolver...), node.Bytes()...)), out: &out}})
	if err != nil {
		return "", err
	}
	if errs[0] != nil {
		return "", c.callErr("ens reverse", errs[0])
	}
	if len(out) < 32 || common.BytesToAddress(out[12:32]) == (common.Address{}) {
		return "", nil
	}
	res := common.BytesToAddress(out[12:32])
	got, _, err := c.ccipCall(ctx, res, append(append([]byte{}, selNameOf...), node.Bytes()...), gw)
	if err != nil {
		if reverted(err) {
			return "", nil
		}
		return "", err
	}
	if len(got) == 0 {
		return "", nil
	}
	s, _, err := text(got)
	if err != nil {
		return "", c.callErr("ens reverse", fmt.Errorf("name() result: %w", err))
	}
	return s, nil
}

func (c *Client) supports(ctx context.Context, to common.Address, iface []byte) (bool, error) {
	data := append(append([]byte{}, selSupportsInterface...), common.RightPadBytes(iface, 32)...)
	var out hexutil.Bytes
	errs, err := c.batch(ctx, "ens supportsInterface", []call{{method: "eth_call", args: ethCall(to, data), out: &out}})
	if err != nil {
		return false, err
	}
	if errs[0] != nil {
		if reverted(errs[0]) {
			return false, nil
		}
		return false, c.callErr("ens supportsInterface", errs[0])
	}
	return len(out) >= 32 && out[31] == 1, nil
}

// ccipCall is an eth_call that follows EIP-3668: a revert with OffchainLookup sends the lookup
// to one of the contract's gateway URLs and calls its callback with the answer, at most
// maxLookups times. offchain reports whether a gateway answered.
func (c *Client) ccipCall(ctx context.Context, to common.Address, data []byte, gw Gateway) (out []byte, offchain bool, err error) {
	for range maxLookups + 1 {
		var res hexutil.Bytes
		errs, err := c.batch(ctx, "ens call", []call{{method: "eth_call", args: ethCall(to, data), out: &res}})
		if err != nil {
			return nil, offchain, err
		}
		if errs[0] == nil {
			return res, offchain, nil
		}
		rev := revertData(errs[0])
		if !bytes.HasPrefix(rev, selOffchainLookup) {
			if reverted(errs[0]) {
				return nil, offchain, errs[0]
			}
			return nil, offchain, c.callErr("ens call", errs[0])
		}
		v, err := abi.Arguments{{Type: addressT}, {Type: stringsT}, {Type: bytesT}, {Type: bytes4T}, {Type: bytesT}}.Unpack(rev[4:])
		if err != nil {
			return nil, offchain, c.callErr("ens offchain lookup", fmt.Errorf("OffchainLookup: %w", err))
		}
		sender, urls, callData, callback, extra := v[0].(common.Address), v[1].([]string), v[2].([]byte), v[3].([4]byte), v[4].([]byte)
		if sender != to {
			return nil, offchain, c.callErr("ens offchain lookup", fmt.Errorf("OffchainLookup sender %s is not the called contract %s", sender.Hex(), to.Hex()))
		}
		if gw == nil {
			return nil, offchain, &upstream.Error{Upstream: GatewayName, Op: "offchain lookup", Err: errors.New("offchain lookups are not enabled")}
		}
		answer, err := fetchGateway(ctx, gw, urls, sender, callData)
		if err != nil {
			return nil, offchain, err
		}
		offchain = true
		packed, err := abi.Arguments{{Type: bytesT}, {Type: bytesT}}.Pack(answer, extra)
		if err != nil {
			return nil, offchain, err
		}
		data = append(callback[:], packed...)
	}
	return nil, offchain, &upstream.Error{Upstream: GatewayName, Op: "offchain lookup", Err: fmt.Errorf("more than %d offchain lookups in a row", maxLookups)}
}

// revertData is the data of a reverted eth_call as nodes return it in the error's data field.
func revertData(err error) []byte {
	var de rpc.DataError
	if !errors.As(err, &de) {
		return nil
	}
	s, ok := de.ErrorData().(string)
	if !ok {
		return nil
	}
	b, err := hexutil.Decode(s)
	if err != nil {
		return nil
	}
	return b
}

// fetchGateway asks the gateway URLs in order, as EIP-3668 says: a URL with {data} is a GET
// with sender and data substituted, any other a POST of {"data","sender"}; a 4xx ends the
// lookup, a 5xx or an unreachable gateway passes to the next URL.
func fetchGateway(ctx context.Context, gw Gateway, urls []string, sender common.Address, callData []byte) ([]byte, error) {
	snd, dat := strings.ToLower(sender.Hex()), hexutil.Encode(callData)
	var last error = errors.New("the lookup names no gateway URL")
	for _, raw := range urls {
		target := strings.ReplaceAll(strings.ReplaceAll(raw, "{sender}", snd), "{data}", dat)
		u, err := url.Parse(target)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
			last = fmt.Errorf("gateway URL %q is not http(s)", raw)
			continue
		}
		var req *http.Request
		if strings.Contains(raw, "{data}") {
			req, err = http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
		} else {
			body, _ := json.Marshal(map[string]string{"data": dat, "sender": snd})
			req, err = http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
			if req != nil {
				req.Header.Set("Content-Type", "application/json")
			}
		}
		if err != nil {
			last = err
			continue
		}
		op := req.Method + " " + u.Host
		resp, err := gw.Do(req)
		if err != nil {
			last = &upstream.Error{Upstream: GatewayName, Op: op, Err: err}
			continue
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxGatewayAnswer))
		resp.Body.Close()
		switch {
		case err != nil:
			last = &upstream.Error{Upstream: GatewayName, Op: op, Err: err}
			continue
		case resp.StatusCode >= 500:
			last = &upstream.Error{Upstream: GatewayName, Op: op, Status: resp.StatusCode, Err: errors.New(resp.Status)}
			continue
		case resp.StatusCode >= 400:
			return nil, &upstream.Error{Upstream: GatewayName, Op: op, Status: resp.StatusCode, Err: errors.New(resp.Status)}
		}
		var a struct {
			Data string `json:"data"`
		}
		if err := json.Unmarshal(b, &a); err != nil {
			return nil, upstream.BadAnswer(GatewayName, op, resp.StatusCode, "", err)
		}
		out, err := hexutil.Decode(a.Data)
		if err != nil {
			return nil, upstream.BadAnswer(GatewayName, op, resp.StatusCode, "data", err)
		}
		return out, nil
	}
	return nil, last
}
