package chainrpc

import (
	"context"
	"errors"
	"math/big"
	"slices"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
)

// Event topics the tx route decodes.
var (
	topicTransfer          = crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))
	topicAuthorizationUsed = crypto.Keccak256Hash([]byte("AuthorizationUsed(address,bytes32)"))
)

// rpcTx and rpcReceipt are read field by field rather than as go-ethereum types, which do not
// know the OP-stack deposit transaction type (0x7e) every Base block starts with.
type rpcTx struct {
	Hash        common.Hash     `json:"hash"`
	From        common.Address  `json:"from"`
	To          *common.Address `json:"to"`
	Value       hexutil.Big     `json:"value"`
	Nonce       hexutil.Uint64  `json:"nonce"`
	Input       hexutil.Bytes   `json:"input"`
	Type        hexutil.Uint64  `json:"type"`
	BlockNumber *hexutil.Big    `json:"blockNumber"`
}

type rpcReceipt struct {
	Status            hexutil.Uint64  `json:"status"`
	BlockNumber       hexutil.Big     `json:"blockNumber"`
	GasUsed           hexutil.Uint64  `json:"gasUsed"`
	EffectiveGasPrice *hexutil.Big    `json:"effectiveGasPrice"`
	L1Fee             *hexutil.Big    `json:"l1Fee"` // OP stack only
	ContractAddress   *common.Address `json:"contractAddress"`
	Logs              []rpcLog        `json:"logs"`
}

type rpcLog struct {
	Address  common.Address `json:"address"`
	Topics   []common.Hash  `json:"topics"`
	Data     hexutil.Bytes  `json:"data"`
	LogIndex hexutil.Uint64 `json:"logIndex"`
}

// Tx is a transaction with its receipt, as the tx route reports it.
type Tx struct {
	ChainID  uint64
	Hash     string
	From     string
	To       string // "" for a contract creation
	Value    *big.Int
	Nonce    uint64
	Type     uint64
	Selector string // first four bytes of the input, "" for a plain transfer
	// Pending is set while the transaction is known but has no receipt; the fields below are
	// then zero.
	Pending     bool
	Success     bool
	Block       uint64
	GasUsed     uint64
	GasPrice    *big.Int // effective gas price; nil when the endpoint does not say
	L1Fee       *big.Int // OP-stack L1 data fee; nil elsewhere
	Created     string   // contract created, if any
	Transfers   []Transfer
	Settlements []Settlement
}

// Transfer is a decoded Transfer event. An ERC-721 transfer has a TokenID and no Value.
type Transfer struct {
	Token    TokenMeta
	Known    bool // Token's symbol and decimals could be read
	From, To string
	Value    *big.Int
	TokenID  *big.Int
	LogIndex uint64
}

// Settlement is an EIP-3009 payment (what x402's exact scheme settles): an AuthorizationUsed
// event of a token and the Transfer from the authorizer that the same call emitted.
type Settlement struct {
	Token    TokenMeta
	Known    bool // Token's symbol and decimals could be read
	Payer    string
	PayTo    string
	Value    *big.Int
	Nonce    string
	LogIndex uint64 // of the Transfer
}

// ErrTxNotFound is a hash the endpoint does not know.
var ErrTxNotFound = errors.New("transaction not found")

// Tx reads a transaction and its receipt in one request, then the symbols and decimals of the
// tokens its logs moved in a second one (none when it moved no token).
func (c *Client) Tx(ctx context.Context, hash string) (*Tx, error) {
	h := common.HexToHash(hash)
	var id hexutil.Uint64
	var tx *rpcTx
	var rc *rpcReceipt
	errs, err := c.batch(ctx, "tx", []call{
		{method: "eth_chainId", out: &id},
		{method: "eth_getTransactionByHash", args: []any{h}, out: &tx},
		{method: "eth_getTransactionReceipt", args: []any{h}, out: &rc},
	})
	if err != nil {
		return nil, err
	}
	if err := errors.Join(errs...); err != nil {
		return nil, c.callErr("tx", err)
	}
	if tx == nil {
		return nil, ErrTxNotFound
	}
	out := &Tx{ChainID: uint64(id), Hash: tx.Hash.Hex(), From: tx.From.Hex(), Value: tx.Value.ToInt(), Nonce: uint64(tx.Nonce), Type: uint64(tx.Type)}
	if tx.To != nil {
		out.To = tx.To.Hex()
	}
	if len(tx.Input) >= 4 {
		out.Selector = hexutil.Encode(tx.Input[:4])
	}
	if rc == nil {
		out.Pending = true
		return out, nil
	}
	out.Success = rc.Status == 1
	out.Block = rc.BlockNumber.ToInt().Uint64()
	out.GasUsed = uint64(rc.GasUsed)
	if rc.EffectiveGasPrice != nil {
		out.GasPrice = rc.EffectiveGasPrice.ToInt()
	}
	if rc.L1Fee != nil {
		out.L1Fee = rc.L1Fee.ToInt()
	}
	if rc.ContractAddress != nil && *rc.ContractAddress != (common.Address{}) {
		out.Created = rc.ContractAddress.Hex()
	}
	decodeLogs(out, rc.Logs)
	return out, c.fillMeta(ctx, out)
}

func topicAddress(h common.Hash) string { return common.BytesToAddress(h[12:]).Hex() }

// decodeLogs finds the token transfers of a receipt, then pairs each AuthorizationUsed event
// with the Transfer from its authorizer on the same token, which is how an EIP-3009 settlement
// shows in a receipt whoever submitted it.
func decodeLogs(out *Tx, logs []rpcLog) {
	for _, l := range logs {
		if len(l.Topics) == 0 || l.Topics[0] != topicTransfer {
			continue
		}
		t := Transfer{Token: TokenMeta{Address: l.Address.Hex()}, LogIndex: uint64(l.LogIndex)}
		switch {
		case len(l.Topics) == 3 && len(l.Data) == 32: // ERC-20: the amount is data
			t.From, t.To, t.Value = topicAddress(l.Topics[1]), topicAddress(l.Topics[2]), new(big.Int).SetBytes(l.Data)
		case len(l.Topics) == 4 && len(l.Data) == 0: // ERC-721: the token id is the third topic
			t.From, t.To, t.TokenID = topicAddress(l.Topics[1]), topicAddress(l.Topics[2]), l.Topics[3].Big()
		default:
			continue
		}
		out.Transfers = append(out.Transfers, t)
	}
	used := map[int]bool{}
	for _, l := range logs {
		if len(l.Topics) != 3 || l.Topics[0] != topicAuthorizationUsed {
			continue
		}
		payer := topicAddress(l.Topics[1])
		for i, t := range out.Transfers {
			if used[i] || t.Value == nil || t.Token.Address != l.Address.Hex() || t.From != payer {
				continue
			}
			used[i] = true
			out.Settlements = append(out.Settlements, Settlement{Token: TokenMeta{Address: t.Token.Address}, Payer: payer, PayTo: t.To,
				Value: t.Value, Nonce: l.Topics[2].Hex(), LogIndex: t.LogIndex})
			break
		}
	}
}

// fillMeta reads symbol and decimals of every ERC-20 the transaction moved, in one request. A
// token that does not answer stays unknown (its amounts are then given in base units only):
// the transaction is still described.
func (c *Client) fillMeta(ctx context.Context, out *Tx) error {
	var tokens []common.Address
	for _, t := range out.Transfers {
		a := common.HexToAddress(t.Token.Address)
		if t.Value != nil && !slices.Contains(tokens, a) {
			tokens = append(tokens, a)
		}
	}
	if len(tokens) == 0 {
		return nil
	}
	res := make([][2]hexutil.Bytes, len(tokens))
	var calls []call
	for i, t := range tokens {
		calls = append(calls, metaCalls(t, &res[i][0], &res[i][1])...)
	}
	errs, err := c.batch(ctx, "tx token data", calls)
	if err != nil {
		return err
	}
	metas := map[string]TokenMeta{}
	for i, t := range tokens {
		m, _, err := c.meta(t, res[i][0], res[i][1], errs[2*i], errs[2*i+1])
		var nt *NotTokenError
		switch {
		case errors.As(err, &nt):
			continue
		case err != nil:
			return err
		}
		metas[m.Address] = m
	}
	for i := range out.Transfers {
		if m, ok := metas[out.Transfers[i].Token.Address]; ok {
			out.Transfers[i].Token, out.Transfers[i].Known = m, true
		}
	}
	for i := range out.Settlements {
		if m, ok := metas[out.Settlements[i].Token.Address]; ok {
			out.Settlements[i].Token, out.Settlements[i].Known = m, true
		}
	}
	return nil
}
