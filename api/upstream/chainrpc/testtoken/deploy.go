package testtoken

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// Backend is what deploying and transacting need: the embedded chain's client satisfies it.
type Backend interface {
	bind.ContractBackend
	bind.DeployBackend
	BlockNumber(ctx context.Context) (uint64, error)
}

// Deployer sends the test tokens' transactions from one funded key and waits for each receipt,
// so that what a test reads next already includes it.
type Deployer struct {
	B       Backend
	Key     *ecdsa.PrivateKey
	ChainID int64
}

func (d Deployer) opts(ctx context.Context) *bind.TransactOpts {
	o := bind.NewKeyedTransactor(d.Key, big.NewInt(d.ChainID))
	o.Context = ctx
	return o
}

// Token deploys a TestToken whose whole supply goes to the deployer.
func (d Deployer) Token(ctx context.Context, name, symbol string, decimals uint8, supply *big.Int) (common.Address, error) {
	addr, tx, err := bind.DeployContract(d.opts(ctx), common.FromHex(TestTokenMetaData.Bin), d.B, NewTestToken().PackConstructor(name, symbol, decimals, supply))
	if err != nil {
		return common.Address{}, err
	}
	_, err = d.wait(ctx, tx)
	return addr, err
}

// Bytes32Token deploys a Bytes32Token (name and symbol as bytes32, decimals as uint256).
func (d Deployer) Bytes32Token(ctx context.Context, name, symbol string, decimals int64, supply *big.Int) (common.Address, error) {
	if len(name) > 32 || len(symbol) > 32 {
		return common.Address{}, errors.New("bytes32 text is at most 32 bytes")
	}
	var n, s [32]byte
	copy(n[:], name)
	copy(s[:], symbol)
	addr, tx, err := bind.DeployContract(d.opts(ctx), common.FromHex(Bytes32TokenMetaData.Bin), d.B, NewBytes32Token().PackConstructor(n, s, big.NewInt(decimals), supply))
	if err != nil {
		return common.Address{}, err
	}
	_, err = d.wait(ctx, tx)
	return addr, err
}

// SlotProxy deploys a delegating proxy whose target (an implementation, or a beacon for the
// EIP-1967 beacon slot) is kept in slot.
func (d Deployer) SlotProxy(ctx context.Context, slot common.Hash, target common.Address) (common.Address, error) {
	return d.deploy(ctx, SlotProxyMetaData.Bin, NewSlotProxy().PackConstructor(slot, target))
}

// Beacon deploys an upgrade beacon naming implementation.
func (d Deployer) Beacon(ctx context.Context, implementation common.Address) (common.Address, error) {
	return d.deploy(ctx, BeaconMetaData.Bin, NewBeacon().PackConstructor(implementation))
}

// MinimalProxy deploys an EIP-1167 clone of implementation: its creation code, written out,
// since a clone is bytecode rather than a compiled contract.
func (d Deployer) MinimalProxy(ctx context.Context, implementation common.Address) (common.Address, error) {
	code := "3d602d80600a3d3981f3" + "363d3d373d3d3d363d73" + common.Bytes2Hex(implementation.Bytes()) + "5af43d82803e903d91602b57fd5bf3"
	return d.deploy(ctx, code, nil)
}

func (d Deployer) deploy(ctx context.Context, bin string, args []byte) (common.Address, error) {
	addr, tx, err := bind.DeployContract(d.opts(ctx), common.FromHex(bin), d.B, args)
	if err != nil {
		return common.Address{}, err
	}
	_, err = d.wait(ctx, tx)
	return addr, err
}

// Transfer moves value of token (either kind: the ERC-20 surface is the same) to to.
func (d Deployer) Transfer(ctx context.Context, token, to common.Address, value *big.Int) (common.Hash, error) {
	return d.transact(ctx, token, "transfer", to, value)
}

// Approve lets spender take up to value of the deployer's token.
func (d Deployer) Approve(ctx context.Context, token, spender common.Address, value *big.Int) (common.Hash, error) {
	return d.transact(ctx, token, "approve", spender, value)
}

func (d Deployer) transact(ctx context.Context, token common.Address, method string, args ...any) (common.Hash, error) {
	tx, err := NewTestToken().Instance(d.B, token).Transact(d.opts(ctx), method, args...)
	if err != nil {
		return common.Hash{}, err
	}
	return d.wait(ctx, tx)
}

// wait polls for the receipt, then for the head to reach its block: the embedded chain seals
// blocks as transactions arrive, so a short poll beats bind.WaitMined's one-second ticker, and
// go-ethereum indexes a block's transactions just before it moves the head, so a receipt can be
// read while the next call's gas estimate still runs on the previous state.
func (d Deployer) wait(ctx context.Context, tx *types.Transaction) (common.Hash, error) {
	for {
		r, err := d.B.TransactionReceipt(ctx, tx.Hash())
		if err == nil {
			if r.Status != types.ReceiptStatusSuccessful {
				return tx.Hash(), fmt.Errorf("transaction %s reverted", tx.Hash().Hex())
			}
			if head, err := d.B.BlockNumber(ctx); err == nil && head >= r.BlockNumber.Uint64() {
				return tx.Hash(), nil
			}
		} else if !errors.Is(err, ethereum.NotFound) && !strings.Contains(err.Error(), "indexing is in progress") {
			return tx.Hash(), err
		}
		select {
		case <-ctx.Done():
			return tx.Hash(), ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}
