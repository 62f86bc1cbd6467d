package chain

import (
	"context"
	"encoding/json"
	"math/big"
	"time"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream/chainrpc"
)

// gwei writes a wei amount in gwei as a JSON number with every digit kept: the spec's gwei
// fields are numbers, and a float would round Base's sub-gwei fees.
func gwei(wei *big.Int) json.Number {
	if wei == nil {
		return "0"
	}
	return json.Number(chainrpc.FormatUnits(wei, 9))
}

func (r *Routes) block(ctx context.Context, _ *catalog.Request) (any, error) {
	b, err := r.d.Client.Latest(ctx)
	if err != nil {
		return nil, r.fail(err, "")
	}
	ts := time.Unix(int64(b.Time), 0).UTC()
	// The embedded chain may stamp blocks a few seconds ahead of the clock: an age is never
	// negative.
	age := max(int64(r.d.Now().Sub(ts)/time.Second), 0)
	out := map[string]any{
		"chain":         chainrpc.ChainName(b.ChainID),
		"chain_id":      b.ChainID,
		"network":       network(b.ChainID),
		"block_number":  b.Number,
		"hash":          b.Hash,
		"parent_hash":   b.ParentHash,
		"miner":         b.Miner,
		"timestamp":     b.Time,
		"timestamp_iso": ts.Format(time.RFC3339),
		"age_seconds":   age,
		"gas_used":      b.GasUsed,
		"gas_limit":     b.GasLimit,
		"transactions":  b.TxCount,
		"base_fee_gwei": nil,
		"base_fee_wei":  nil,
	}
	if b.BaseFee != nil {
		out["base_fee_gwei"], out["base_fee_wei"] = gwei(b.BaseFee), b.BaseFee.String()
	}
	return out, nil
}

// The gas figures the estimates are for: a plain ETH transfer is exactly 21000; an ERC-20
// transfer and a USDC transferWithAuthorization (what an x402 settlement submits) are the
// spec's round figures for those calls.
var estimates = []struct {
	name string
	gas  int64
}{
	{"eth_transfer", 21_000},
	{"erc20_transfer", 65_000},
	{"usdc_transfer_x402", 80_000},
}

type estimate struct {
	Gas int64  `json:"gas"`
	Wei string `json:"wei"`
	ETH string `json:"eth"`
}

func (r *Routes) gas(ctx context.Context, req *catalog.Request) (any, error) {
	f, err := r.d.Client.Fees(ctx)
	if err != nil {
		return nil, r.fail(err, "")
	}
	est := map[string]estimate{}
	for _, e := range estimates {
		wei := new(big.Int).Mul(big.NewInt(e.gas), f.GasPrice)
		est[e.name] = estimate{Gas: e.gas, Wei: wei.String(), ETH: chainrpc.FormatUnits(wei, 18)}
	}
	// free_first_call is added by the gate, which alone knows whether this call was the free one.
	return map[string]any{
		"chain":             chainrpc.ChainName(f.Block.ChainID),
		"chain_id":          f.Block.ChainID,
		"network":           network(f.Block.ChainID),
		"block_number":      f.Block.Number,
		"gas_price_wei":     f.GasPrice.String(),
		"gas_price_gwei":    gwei(f.GasPrice),
		"base_fee_gwei":     gwei(f.Block.BaseFee),
		"priority_fee_gwei": gwei(f.Tip),
		"estimates":         est,
		"note":              "estimates are gas × gas_price_wei, the execution cost; an OP-stack chain such as Base adds an L1 data fee per transaction, which is not included",
		"source":            "eth_gasPrice, eth_maxPriorityFeePerGas and the latest block from the JSON-RPC endpoint " + r.d.Client.Endpoint(),
		"next":              r.next(),
		"this_route":        req.Route.Path,
	}, nil
}
