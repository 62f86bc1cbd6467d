// Package chain is the facilitator's view of an EVM chain: reads for verification (nonce state,
// balance, ERC-1271) and a Sender that owns the hot key's account nonce, prices EIP-1559
// transactions, waits for receipts and replaces transactions that are stuck.
package chain

import (
	"context"
	"errors"
	"math/big"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/peage/appliance/settle/usdc"
)

// Backend is the subset of an Ethereum JSON-RPC client the facilitator uses. Both
// *ethclient.Client and the simulated backend's client satisfy it.
type Backend interface {
	ChainID(ctx context.Context) (*big.Int, error)
	CallContract(ctx context.Context, call ethereum.CallMsg, blockNumber *big.Int) ([]byte, error)
	CodeAt(ctx context.Context, account common.Address, blockNumber *big.Int) ([]byte, error)
	HeaderByNumber(ctx context.Context, number *big.Int) (*types.Header, error)
	PendingNonceAt(ctx context.Context, account common.Address) (uint64, error)
	NonceAt(ctx context.Context, account common.Address, blockNumber *big.Int) (uint64, error)
	SuggestGasTipCap(ctx context.Context) (*big.Int, error)
	EstimateGas(ctx context.Context, call ethereum.CallMsg) (uint64, error)
	SendTransaction(ctx context.Context, tx *types.Transaction) error
	TransactionReceipt(ctx context.Context, txHash common.Hash) (*types.Receipt, error)
	BalanceAt(ctx context.Context, account common.Address, blockNumber *big.Int) (*big.Int, error)
	FilterLogs(ctx context.Context, q ethereum.FilterQuery) ([]types.Log, error)
}

var token = usdc.NewTestUSDC()

// erc1271Magic is bytes4(keccak256("isValidSignature(bytes32,bytes)")).
var erc1271Magic = [4]byte{0x16, 0x26, 0xba, 0x7e}

// Reader answers verification's chain questions with eth_call.
type Reader struct {
	B Backend
	// Block, when set, is the block the reads are answered at (the latest otherwise): a view
	// that has processed the chain's events up to a block reads there, so that what it reads
	// and the events it processes after it meet without a gap.
	Block *big.Int
}

// AuthorizationState reads the token's EIP-3009 nonce state.
func (r Reader) AuthorizationState(ctx context.Context, tok, authorizer common.Address, nonce common.Hash) (bool, error) {
	out, err := r.B.CallContract(ctx, ethereum.CallMsg{To: &tok, Data: token.PackAuthorizationState(authorizer, nonce)}, r.Block)
	if err != nil {
		return false, err
	}
	return token.UnpackAuthorizationState(out)
}

// BalanceOf reads an ERC-20 balance.
func (r Reader) BalanceOf(ctx context.Context, tok, owner common.Address) (*big.Int, error) {
	out, err := r.B.CallContract(ctx, ethereum.CallMsg{To: &tok, Data: token.PackBalanceOf(owner)}, r.Block)
	if err != nil {
		return nil, err
	}
	return token.UnpackBalanceOf(out)
}

// IsValidSignature asks a contract wallet (ERC-1271). An account without code, or a wallet that
// reverts or answers anything but the magic value, is a "no".
func (r Reader) IsValidSignature(ctx context.Context, wallet common.Address, digest common.Hash, sig []byte) (bool, error) {
	code, err := r.B.CodeAt(ctx, wallet, nil)
	if err != nil {
		return false, err
	}
	if len(code) == 0 {
		return false, nil
	}
	out, err := r.B.CallContract(ctx, ethereum.CallMsg{To: &wallet, Data: usdc.NewTestWallet().PackIsValidSignature(digest, sig)}, nil)
	if err != nil {
		var de interface{ ErrorData() any }
		if errors.As(err, &de) {
			return false, nil // a revert is the wallet saying no
		}
		return false, err
	}
	return len(out) >= 4 && [4]byte(out[:4]) == erc1271Magic, nil
}
