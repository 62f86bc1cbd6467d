package chainrpc

import (
	"bytes"
	"context"
	"errors"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
)

// Storage slots where proxy standards keep their target.
var (
	slotEIP1967Impl   = common.HexToHash("0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc") // keccak("eip1967.proxy.implementation") - 1
	slotEIP1967Beacon = common.HexToHash("0xa3f0ad74e5423aebfd80d3ef4346578335a9a72aeaee59ff6cb3582b35133d50") // keccak("eip1967.proxy.beacon") - 1
	slotEIP1967Admin  = common.HexToHash("0xb53127684a568b3173ae13b9f8a6016e243e63b6e8ee1178d6a717850b5d6103") // keccak("eip1967.proxy.admin") - 1
	slotEIP1822       = common.HexToHash("0xc5f16f0fcc639fa48a6947836d9850f504798523bf8c9a3a87d5876cf622bcf7") // keccak("PROXIABLE")
	slotZeppelinOS    = common.HexToHash("0x7050c9e0f4ca769c69bd3a8ef740bc37934f8e2c036e5a723fd8ee048ed3f8c3") // keccak("org.zeppelinos.proxy.implementation")
)

// The runtime code of an EIP-1167 minimal proxy, around the 20-byte implementation address.
var (
	minimalPrefix = common.FromHex("363d3d373d3d3d363d73")
	minimalSuffix = common.FromHex("5af43d82803e903d91602b57fd5bf3")
)

var selImplementation = []byte{0x5c, 0x60, 0xda, 0x1b} // implementation()

// Proxy types as the abi route reports them.
const (
	ProxyEIP1967    = "EIP1967"
	ProxyBeacon     = "EIP1967Beacon"
	ProxyEIP1822    = "EIP1822"
	ProxyZeppelinOS = "ZeppelinOS"
	ProxyEIP1167    = "EIP1167"
)

// Proxy is what the chain says about a proxy: its standard, its implementation, and the
// beacon or admin when the standard keeps one.
type Proxy struct {
	Type           string
	Implementation string
	Beacon         string // EIP1967Beacon only
	Admin          string // EIP-1967 admin slot, when set
}

// ErrNoCode is an address without contract code.
var ErrNoCode = errors.New("no contract code at this address")

// DetectProxy reads the code and the standard proxy slots of addr in one request (and asks a
// beacon for its implementation in a second one). It returns nil for a contract that is no
// proxy of a known standard. It reads the chain only, so it works for unverified contracts.
func (c *Client) DetectProxy(ctx context.Context, addr string) (*Proxy, error) {
	a := common.HexToAddress(addr)
	var code hexutil.Bytes
	slots := []common.Hash{slotEIP1967Impl, slotEIP1967Beacon, slotEIP1967Admin, slotEIP1822, slotZeppelinOS}
	vals := make([]common.Hash, len(slots))
	calls := []call{{method: "eth_getCode", args: []any{a, "latest"}, out: &code}}
	for i, s := range slots {
		calls = append(calls, call{method: "eth_getStorageAt", args: []any{a, s, "latest"}, out: &vals[i]})
	}
	errs, err := c.batch(ctx, "proxy slots", calls)
	if err != nil {
		return nil, err
	}
	if err := errors.Join(errs...); err != nil {
		return nil, c.callErr("proxy slots", err)
	}
	if len(code) == 0 {
		return nil, ErrNoCode
	}
	if len(code) == len(minimalPrefix)+20+len(minimalSuffix) && bytes.HasPrefix(code, minimalPrefix) && bytes.HasSuffix(code, minimalSuffix) {
		return &Proxy{Type: ProxyEIP1167, Implementation: common.BytesToAddress(code[len(minimalPrefix) : len(minimalPrefix)+20]).Hex()}, nil
	}
	slotAddr := func(h common.Hash) string {
		if h == (common.Hash{}) {
			return ""
		}
		return common.BytesToAddress(h[12:]).Hex()
	}
	p := &Proxy{Admin: slotAddr(vals[2])}
	switch {
	case slotAddr(vals[0]) != "":
		p.Type, p.Implementation = ProxyEIP1967, slotAddr(vals[0])
	case slotAddr(vals[1]) != "":
		p.Type, p.Beacon = ProxyBeacon, slotAddr(vals[1])
		var impl hexutil.Bytes
		errs, err := c.batch(ctx, "beacon", []call{{method: "eth_call", args: ethCall(common.HexToAddress(p.Beacon), selImplementation), out: &impl}})
		if err != nil {
			return nil, err
		}
		// A beacon that does not answer leaves the implementation unknown, not the proxy.
		if errs[0] == nil && len(impl) >= 32 {
			p.Implementation = common.BytesToAddress(impl[12:32]).Hex()
		} else if errs[0] != nil && !reverted(errs[0]) {
			return nil, c.callErr("beacon", errs[0])
		}
	case slotAddr(vals[3]) != "":
		p.Type, p.Implementation = ProxyEIP1822, slotAddr(vals[3])
	case slotAddr(vals[4]) != "":
		p.Type, p.Implementation = ProxyZeppelinOS, slotAddr(vals[4])
	default:
		return nil, nil
	}
	return p, nil
}
