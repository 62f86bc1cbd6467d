package chainrpc

import (
	"context"
	"encoding/json"
	"errors"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
)

// rpcBlock is the JSON-RPC block object, read field by field rather than as a go-ethereum
// header so that an OP-stack block (deposit transactions, extra fields) decodes all the same.
type rpcBlock struct {
	Number       hexutil.Uint64    `json:"number"`
	Hash         common.Hash       `json:"hash"`
	ParentHash   common.Hash       `json:"parentHash"`
	Timestamp    hexutil.Uint64    `json:"timestamp"`
	GasUsed      hexutil.Uint64    `json:"gasUsed"`
	GasLimit     hexutil.Uint64    `json:"gasLimit"`
	BaseFee      *hexutil.Big      `json:"baseFeePerGas"`
	Miner        common.Address    `json:"miner"`
	Transactions []json.RawMessage `json:"transactions"`
}

// Block is the latest block as the routes report it.
type Block struct {
	ChainID    uint64
	Number     uint64
	Hash       string
	ParentHash string
	Miner      string
	Time       uint64 // unix seconds
	GasUsed    uint64
	GasLimit   uint64
	BaseFee    *big.Int // nil before EIP-1559
	TxCount    int
}

func (b *rpcBlock) export(chainID uint64) *Block {
	out := &Block{ChainID: chainID, Number: uint64(b.Number), Hash: b.Hash.Hex(), ParentHash: b.ParentHash.Hex(), Miner: b.Miner.Hex(),
		Time: uint64(b.Timestamp), GasUsed: uint64(b.GasUsed), GasLimit: uint64(b.GasLimit), TxCount: len(b.Transactions)}
	if b.BaseFee != nil {
		out.BaseFee = b.BaseFee.ToInt()
	}
	return out
}

var errNoBlock = errors.New("the endpoint returned no latest block")

// Latest reads the chain id and the latest block in one request.
func (c *Client) Latest(ctx context.Context) (*Block, error) {
	var id hexutil.Uint64
	var b *rpcBlock
	errs, err := c.batch(ctx, "latest block", []call{
		{method: "eth_chainId", out: &id},
		{method: "eth_getBlockByNumber", args: []any{"latest", false}, out: &b},
	})
	if err != nil {
		return nil, err
	}
	if err := errors.Join(errs...); err != nil {
		return nil, c.callErr("latest block", err)
	}
	if b == nil {
		return nil, c.callErr("latest block", errNoBlock)
	}
	return b.export(uint64(id)), nil
}

// Fees are the figures of the gas route.
type Fees struct {
	Block    *Block
	GasPrice *big.Int // eth_gasPrice: base fee plus the suggested tip
	Tip      *big.Int // eth_maxPriorityFeePerGas
}

// Fees reads the chain id, the latest block, the gas price and the suggested tip in one request.
func (c *Client) Fees(ctx context.Context) (*Fees, error) {
	var id hexutil.Uint64
	var b *rpcBlock
	var price, tip hexutil.Big
	errs, err := c.batch(ctx, "gas", []call{
		{method: "eth_chainId", out: &id},
		{method: "eth_getBlockByNumber", args: []any{"latest", false}, out: &b},
		{method: "eth_gasPrice", out: &price},
		{method: "eth_maxPriorityFeePerGas", out: &tip},
	})
	if err != nil {
		return nil, err
	}
	if err := errors.Join(errs...); err != nil {
		return nil, c.callErr("gas", err)
	}
	if b == nil {
		return nil, c.callErr("gas", errNoBlock)
	}
	return &Fees{Block: b.export(uint64(id)), GasPrice: price.ToInt(), Tip: tip.ToInt()}, nil
}
