package main

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
)

// feeModel prices a transaction as Base does: L2 execution gas at a gas price, plus the L1
// data fee the OP Stack charges for posting the transaction to Ethereum. The L1 fee is
// Fjord's (docs.base.org, base-chain/specs/upgrades/fjord/exec-engine):
//
//	l1FeeScaled         = baseFeeScalar*l1BaseFee*16 + blobBaseFeeScalar*l1BlobBaseFee
//	estimatedSizeScaled = max(minTransactionSize*1e6, intercept + fastlzCoef*fastlzSize)
//	l1Fee               = estimatedSizeScaled * l1FeeScaled / 1e12
//
// with fastlzSize taken as GasPriceOracle.getL1FeeUpperBound takes it (fjord/predeploys):
// size + size/255 + 16 for the signed transaction's size, an upper bound that covers 99.99% of
// transactions, so the L1 fee here is at most slightly high, never low.
type feeModel struct {
	l2GasPriceWei     uint64 // 0.01 gwei: Base's execution gas price, stated by the issue
	l1BaseFeeWei      uint64 // Ethereum's base fee
	l1BlobBaseFeeWei  uint64 // Ethereum's blob base fee
	baseFeeScalar     uint64 // Base's SystemConfig scalars (operator-set; they drift)
	blobBaseFeeScalar uint64
	ethUSD            float64
}

// Fjord's constants (exec-engine spec above), scaled by 1e6 as there.
const (
	fjordIntercept     = -42_585_600
	fjordFastlzCoef    = 836_500
	fjordMinTxSizeUnit = 100 * 1_000_000
)

// l1FeeWei is the L1 data fee of a signed transaction of size bytes (exact integers: the
// product overflows 64 bits).
func (m feeModel) l1FeeWei(size int) uint64 {
	flz := int64(size + size/255 + 16)
	est := big.NewInt(max(int64(fjordMinTxSizeUnit), fjordIntercept+fjordFastlzCoef*flz))
	scaled := new(big.Int).Mul(new(big.Int).SetUint64(m.baseFeeScalar), new(big.Int).SetUint64(m.l1BaseFeeWei))
	scaled.Mul(scaled, big.NewInt(16))
	scaled.Add(scaled, new(big.Int).Mul(new(big.Int).SetUint64(m.blobBaseFeeScalar), new(big.Int).SetUint64(m.l1BlobBaseFeeWei)))
	fee := est.Mul(est, scaled)
	return fee.Div(fee, big.NewInt(1_000_000_000_000)).Uint64()
}

// microUSD converts wei to millionths of a dollar (1 µUSD = one atomic USDC unit).
func (m feeModel) microUSD(wei float64) float64 { return wei * 1e-18 * m.ethUSD * 1e6 }

func (m feeModel) describe() string {
	return fmt.Sprintf("fee model (Base-like): L2 execution gas × %s gwei + Fjord L1 data fee = est. size × (%d × %s gwei × 16 + %d × %d wei) / 1e12, "+
		"est. size = max(100e6, %d + %d × (size + size/255 + 16)) for the signed transaction's size (GasPriceOracle.getL1FeeUpperBound); ETH at %.0f USD",
		gwei(m.l2GasPriceWei), m.baseFeeScalar, gwei(m.l1BaseFeeWei), m.blobBaseFeeScalar, m.l1BlobBaseFeeWei,
		fjordIntercept, fjordFastlzCoef, m.ethUSD)
}

func gwei(wei uint64) string { return fmt.Sprintf("%g", float64(wei)/1e9) }

// cost is what a set of transactions cost on the chain.
type cost struct {
	gas   uint64 // L2 execution gas, from the receipts
	l1Wei uint64 // L1 data fee of their signed bytes
	txs   int
}

func (c cost) add(o cost) cost { return cost{c.gas + o.gas, c.l1Wei + o.l1Wei, c.txs + o.txs} }

// wei is the all-in fee.
func (c cost) wei(m feeModel) float64 {
	return float64(c.gas)*float64(m.l2GasPriceWei) + float64(c.l1Wei)
}

// costOf reads txs' receipts and signed bytes.
func (b *bench) costOf(ctx context.Context, txs ...string) (cost, error) {
	var c cost
	for _, h := range txs {
		r, err := b.ch.Client().TransactionReceipt(ctx, common.HexToHash(h))
		if err != nil {
			return c, fmt.Errorf("receipt %s: %w", h, err)
		}
		tx, _, err := b.ch.Client().TransactionByHash(ctx, common.HexToHash(h))
		if err != nil {
			return c, fmt.Errorf("transaction %s: %w", h, err)
		}
		raw, err := tx.MarshalBinary()
		if err != nil {
			return c, err
		}
		c.gas += r.GasUsed
		c.l1Wei += b.fees.l1FeeWei(len(raw))
		c.txs++
	}
	return c, nil
}
