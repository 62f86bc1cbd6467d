package chainrpc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"unicode/utf8"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"
)

// ERC-20 selectors (Keccak-256 of the signature, first four bytes).
var (
	selName        = []byte{0x06, 0xfd, 0xde, 0x03} // name()
	selSymbol      = []byte{0x95, 0xd8, 0x9b, 0x41} // symbol()
	selDecimals    = []byte{0x31, 0x3c, 0xe5, 0x67} // decimals()
	selTotalSupply = []byte{0x18, 0x16, 0x0d, 0xdd} // totalSupply()
	selBalanceOf   = []byte{0x70, 0xa0, 0x82, 0x31} // balanceOf(address)
	selAllowance   = []byte{0xdd, 0x62, 0xed, 0x3e} // allowance(address,address)
)

// NotTokenError says an address does not answer as an ERC-20 token: no code there, or a
// call every token answers failed or returned nothing.
type NotTokenError struct {
	Address string
	Reason  string
}

func (e *NotTokenError) Error() string { return e.Address + " is not an ERC-20 token: " + e.Reason }

// TokenMeta is what an amount needs to be written: the token's symbol and decimals.
type TokenMeta struct {
	Address  string
	Symbol   string
	Decimals uint8
}

// TokenAmount is an amount of a token in its smallest unit.
type TokenAmount struct {
	TokenMeta
	Value *big.Int
}

// Token is the data of the token route.
type Token struct {
	TokenMeta
	ChainID uint64
	Name    string
	// Bytes32 is set for tokens whose name() and symbol() return bytes32 (MKR and other early
	// tokens) rather than string.
	Bytes32 bool
	Supply  *big.Int
}

// Balances are the native balance and token balances of an address.
type Balances struct {
	ChainID uint64
	Block   uint64
	Wei     *big.Int
	Tokens  []TokenAmount
}

// Allowance is what spender may still take from owner.
type Allowance struct {
	ChainID uint64
	Token   TokenMeta
	Value   *big.Int
}

func ethCall(to common.Address, data []byte) []any {
	return []any{map[string]any{"to": to, "data": hexutil.Bytes(data)}, "latest"}
}

func withAddresses(sel []byte, addrs ...common.Address) []byte {
	out := append([]byte{}, sel...)
	for _, a := range addrs {
		out = append(out, common.LeftPadBytes(a.Bytes(), 32)...)
	}
	return out
}

// metaCalls are symbol() and decimals() of token, two elements of a batch.
func metaCalls(token common.Address, sym, dec *hexutil.Bytes) []call {
	return []call{
		{method: "eth_call", args: ethCall(token, selSymbol), out: sym},
		{method: "eth_call", args: ethCall(token, selDecimals), out: dec},
	}
}

// reverted tells a call the contract refused (the address is no token, or not this kind) from
// a failure of the endpoint (a rate limit, a node error): only the latter is the upstream's
// fault. Code 3 is the JSON-RPC code of a revert; nodes that omit it still say "revert".
func reverted(err error) bool {
	if err == nil {
		return false
	}
	var re rpc.Error
	if errors.As(err, &re) && re.ErrorCode() == 3 {
		return true
	}
	return strings.Contains(strings.ToLower(err.Error()), "revert")
}

// meta decodes symbol() and decimals() of token from their batch results.
func (c *Client) meta(token common.Address, sym, dec hexutil.Bytes, symErr, decErr error) (TokenMeta, bool, error) {
	m := TokenMeta{Address: token.Hex()}
	for _, err := range []error{symErr, decErr} {
		if err != nil && !reverted(err) {
			return m, false, c.callErr("token "+token.Hex(), err)
		}
	}
	if decErr != nil {
		return m, false, &NotTokenError{Address: token.Hex(), Reason: "decimals() reverted"}
	}
	d, err := uint256(dec)
	if err != nil {
		return m, false, &NotTokenError{Address: token.Hex(), Reason: "decimals() " + err.Error()}
	}
	if !d.IsUint64() || d.Uint64() > 255 {
		return m, false, &NotTokenError{Address: token.Hex(), Reason: "decimals() is " + d.String()}
	}
	m.Decimals = uint8(d.Uint64())
	var b32 bool
	if symErr == nil {
		m.Symbol, b32, _ = text(sym)
	}
	return m, b32, nil
}

// uint256 decodes one ABI word.
func uint256(b []byte) (*big.Int, error) {
	if len(b) == 0 {
		return nil, errors.New("returned nothing (no contract code there?)")
	}
	if len(b) < 32 {
		return nil, fmt.Errorf("returned %d bytes, not a 32-byte word", len(b))
	}
	return new(big.Int).SetBytes(b[:32]), nil
}

var stringType, _ = abi.NewType("string", "", nil)

// text decodes a name() or symbol() result: an ABI string, or a bytes32 padded with zeros as
// early tokens return. bytes32 reports which form it was.
func text(b []byte) (s string, bytes32 bool, err error) {
	if len(b) == 32 {
		t := string(bytes.TrimRight(b, "\x00"))
		if !utf8.ValidString(t) {
			return "", true, errors.New("bytes32 text is not UTF-8")
		}
		return t, true, nil
	}
	v, err := abi.Arguments{{Type: stringType}}.Unpack(b)
	if err != nil {
		return "", false, fmt.Errorf("not an ABI string: %w", err)
	}
	return v[0].(string), false, nil
}

// Token reads name, symbol, decimals, total supply and whether there is code at addr, in one
// request.
func (c *Client) Token(ctx context.Context, addr string) (*Token, error) {
	a := common.HexToAddress(addr)
	var id hexutil.Uint64
	var code, name, sym, dec, supply hexutil.Bytes
	calls := []call{
		{method: "eth_chainId", out: &id},
		{method: "eth_getCode", args: []any{a, "latest"}, out: &code},
		{method: "eth_call", args: ethCall(a, selName), out: &name},
		{method: "eth_call", args: ethCall(a, selTotalSupply), out: &supply},
	}
	calls = append(calls, metaCalls(a, &sym, &dec)...)
	errs, err := c.batch(ctx, "token", calls)
	if err != nil {
		return nil, err
	}
	for _, e := range errs[:2] {
		if e != nil {
			return nil, c.callErr("token", e)
		}
	}
	if len(code) == 0 {
		return nil, &NotTokenError{Address: a.Hex(), Reason: "no contract code at this address"}
	}
	m, symB32, err := c.meta(a, sym, dec, errs[4], errs[5])
	if err != nil {
		return nil, err
	}
	t := &Token{TokenMeta: m, ChainID: uint64(id), Bytes32: symB32}
	if errs[2] != nil && !reverted(errs[2]) {
		return nil, c.callErr("token", errs[2])
	}
	if errs[2] == nil {
		var b32 bool
		if t.Name, b32, err = text(name); err != nil {
			return nil, &NotTokenError{Address: a.Hex(), Reason: "name() " + err.Error()}
		}
		t.Bytes32 = t.Bytes32 || b32
	}
	if errs[3] != nil {
		if !reverted(errs[3]) {
			return nil, c.callErr("token", errs[3])
		}
		return nil, &NotTokenError{Address: a.Hex(), Reason: "totalSupply() reverted"}
	}
	if t.Supply, err = uint256(supply); err != nil {
		return nil, &NotTokenError{Address: a.Hex(), Reason: "totalSupply() " + err.Error()}
	}
	return t, nil
}

// Balances reads the native balance of owner and its balance of USDC and of each token, with
// their symbols and decimals, in one request: 3 calls per token plus 3.
func (c *Client) Balances(ctx context.Context, owner string, tokens []string) (*Balances, error) {
	o := common.HexToAddress(owner)
	list := []common.Address{c.usdc}
	seen := map[common.Address]bool{c.usdc: true}
	for _, t := range tokens {
		a := common.HexToAddress(t)
		if !seen[a] {
			seen[a] = true
			list = append(list, a)
		}
	}
	var id hexutil.Uint64
	var num hexutil.Uint64
	var wei hexutil.Big
	calls := []call{
		{method: "eth_chainId", out: &id},
		{method: "eth_blockNumber", out: &num},
		{method: "eth_getBalance", args: []any{o, "latest"}, out: &wei},
	}
	res := make([][3]hexutil.Bytes, len(list))
	for i, t := range list {
		calls = append(calls, call{method: "eth_call", args: ethCall(t, withAddresses(selBalanceOf, o)), out: &res[i][0]})
		calls = append(calls, metaCalls(t, &res[i][1], &res[i][2])...)
	}
	errs, err := c.batch(ctx, "balance", calls)
	if err != nil {
		return nil, err
	}
	if err := errors.Join(errs[:3]...); err != nil {
		return nil, c.callErr("balance", err)
	}
	out := &Balances{ChainID: uint64(id), Block: uint64(num), Wei: wei.ToInt()}
	for i, t := range list {
		e := errs[3+3*i : 6+3*i]
		m, _, err := c.meta(t, res[i][1], res[i][2], e[1], e[2])
		if err != nil {
			return nil, err
		}
		if e[0] != nil {
			if !reverted(e[0]) {
				return nil, c.callErr("balance", e[0])
			}
			return nil, &NotTokenError{Address: t.Hex(), Reason: "balanceOf() reverted"}
		}
		v, err := uint256(res[i][0])
		if err != nil {
			return nil, &NotTokenError{Address: t.Hex(), Reason: "balanceOf() " + err.Error()}
		}
		out.Tokens = append(out.Tokens, TokenAmount{TokenMeta: m, Value: v})
	}
	return out, nil
}

// Allowance reads allowance(owner, spender) of token (USDC when empty) with the token's symbol
// and decimals, in one request.
func (c *Client) Allowance(ctx context.Context, token, owner, spender string) (*Allowance, error) {
	t := c.usdc
	if token != "" {
		t = common.HexToAddress(token)
	}
	var id hexutil.Uint64
	var v, sym, dec hexutil.Bytes
	calls := []call{
		{method: "eth_chainId", out: &id},
		{method: "eth_call", args: ethCall(t, withAddresses(selAllowance, common.HexToAddress(owner), common.HexToAddress(spender))), out: &v},
	}
	calls = append(calls, metaCalls(t, &sym, &dec)...)
	errs, err := c.batch(ctx, "allowance", calls)
	if err != nil {
		return nil, err
	}
	if errs[0] != nil {
		return nil, c.callErr("allowance", errs[0])
	}
	m, _, err := c.meta(t, sym, dec, errs[2], errs[3])
	if err != nil {
		return nil, err
	}
	if errs[1] != nil {
		if !reverted(errs[1]) {
			return nil, c.callErr("allowance", errs[1])
		}
		return nil, &NotTokenError{Address: t.Hex(), Reason: "allowance() reverted"}
	}
	amt, err := uint256(v)
	if err != nil {
		return nil, &NotTokenError{Address: t.Hex(), Reason: "allowance() " + err.Error()}
	}
	return &Allowance{ChainID: uint64(id), Token: m, Value: amt}, nil
}
