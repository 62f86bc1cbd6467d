package chainrpc

import (
	"context"
	"errors"
	"math/big"
	"slices"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
)

// HistoryTransfer is one transfer of a token to or from an address.
type HistoryTransfer struct {
	Hash     string
	Block    uint64
	Time     time.Time
	LogIndex uint64
	From, To string
	Value    *big.Int
	// X402 is set when the same transaction used an EIP-3009 authorization of the sender on
	// the token (an AuthorizationUsed event): how x402's exact scheme settles.
	X402 bool
}

// History is what the chain's logs say of an address's transfers of a token over a window of
// blocks, newest first.
type History struct {
	ChainID   uint64
	Token     TokenMeta
	FromBlock uint64
	ToBlock   uint64
	FromTime  time.Time // timestamp of FromBlock
	ToTime    time.Time
	// Complete says the window reaches since: FromBlock is older, or is the genesis block.
	Complete  bool
	Transfers []HistoryTransfer
}

type histLog struct {
	Address     common.Address `json:"address"`
	Topics      []common.Hash  `json:"topics"`
	Data        hexutil.Bytes  `json:"data"`
	BlockNumber hexutil.Uint64 `json:"blockNumber"`
	TxHash      common.Hash    `json:"transactionHash"`
	LogIndex    hexutil.Uint64 `json:"logIndex"`
}

type blockStamp struct {
	Number    hexutil.Uint64 `json:"number"`
	Timestamp hexutil.Uint64 `json:"timestamp"`
}

func topicOf(a common.Address) common.Hash {
	return common.BytesToHash(common.LeftPadBytes(a.Bytes(), 32))
}

// History reads the transfers of token (USDC when empty) to and from addr over the last
// maxBlocks blocks with eth_getLogs, keeping those since since, in three requests: the head,
// the window's first block and the token's data; the logs in and out; the AuthorizationUsed
// events of the senders and the blocks' timestamps. Public endpoints cap eth_getLogs ranges
// (10,000 blocks is common), so a window shorter than since is reported as incomplete rather
// than walked in thousands of requests.
func (c *Client) History(ctx context.Context, token, addr string, since time.Time, maxBlocks uint64) (*History, error) {
	t := c.usdc
	if token != "" {
		t = common.HexToAddress(token)
	}
	a := common.HexToAddress(addr)
	var id hexutil.Uint64
	var head *blockStamp
	var sym, dec hexutil.Bytes
	calls := []call{
		{method: "eth_chainId", out: &id},
		{method: "eth_getBlockByNumber", args: []any{"latest", false}, out: &head},
	}
	calls = append(calls, metaCalls(t, &sym, &dec)...)
	errs, err := c.batch(ctx, "history head", calls)
	if err != nil {
		return nil, err
	}
	if err := errors.Join(errs[:2]...); err != nil {
		return nil, c.callErr("history head", err)
	}
	if head == nil {
		return nil, c.callErr("history head", errNoBlock)
	}
	m, _, err := c.meta(t, sym, dec, errs[2], errs[3])
	if err != nil {
		return nil, err
	}
	out := &History{ChainID: uint64(id), Token: m, ToBlock: uint64(head.Number), ToTime: time.Unix(int64(head.Timestamp), 0).UTC()}
	if out.ToBlock+1 > maxBlocks {
		out.FromBlock = out.ToBlock + 1 - maxBlocks
	}

	var first *blockStamp
	var in, outgoing []histLog
	filter := func(topics ...any) map[string]any {
		return map[string]any{"address": t, "fromBlock": hexutil.Uint64(out.FromBlock), "toBlock": hexutil.Uint64(out.ToBlock), "topics": topics}
	}
	errs, err = c.batch(ctx, "history logs", []call{
		{method: "eth_getBlockByNumber", args: []any{hexutil.Uint64(out.FromBlock), false}, out: &first},
		{method: "eth_getLogs", args: []any{filter(topicTransfer, nil, topicOf(a))}, out: &in},
		{method: "eth_getLogs", args: []any{filter(topicTransfer, topicOf(a))}, out: &outgoing},
	})
	if err != nil {
		return nil, err
	}
	if err := errors.Join(errs...); err != nil {
		return nil, c.callErr("history logs", err)
	}
	if first == nil {
		return nil, c.callErr("history logs", errNoBlock)
	}
	out.FromTime = time.Unix(int64(first.Timestamp), 0).UTC()
	out.Complete = out.FromBlock == 0 || !out.FromTime.After(since)

	logs := append(in, outgoing...)
	// A transfer to oneself is in both lists: keep it once.
	slices.SortFunc(logs, func(x, y histLog) int {
		if x.BlockNumber != y.BlockNumber {
			return int(int64(y.BlockNumber) - int64(x.BlockNumber))
		}
		return int(int64(y.LogIndex) - int64(x.LogIndex))
	})
	logs = slices.CompactFunc(logs, func(x, y histLog) bool { return x.TxHash == y.TxHash && x.LogIndex == y.LogIndex })
	if len(logs) == 0 {
		return out, nil
	}

	// The authorizers that may have signed an EIP-3009 transfer here are the senders.
	var senders []any
	var blocks []uint64
	for _, l := range logs {
		if len(l.Topics) == 3 {
			if s := l.Topics[1]; !slices.Contains(senders, any(s)) {
				senders = append(senders, s)
			}
		}
		if !slices.Contains(blocks, uint64(l.BlockNumber)) {
			blocks = append(blocks, uint64(l.BlockNumber))
		}
	}
	var auths []histLog
	stamps := make([]*blockStamp, len(blocks))
	calls = []call{{method: "eth_getLogs", args: []any{map[string]any{"address": t, "fromBlock": hexutil.Uint64(out.FromBlock),
		"toBlock": hexutil.Uint64(out.ToBlock), "topics": []any{topicAuthorizationUsed, senders}}}, out: &auths}}
	for i, b := range blocks {
		calls = append(calls, call{method: "eth_getBlockByNumber", args: []any{hexutil.Uint64(b), false}, out: &stamps[i]})
	}
	errs, err = c.batch(ctx, "history details", calls)
	if err != nil {
		return nil, err
	}
	if err := errors.Join(errs...); err != nil {
		return nil, c.callErr("history details", err)
	}
	times := map[uint64]time.Time{}
	for i, s := range stamps {
		if s == nil {
			return nil, c.callErr("history details", errNoBlock)
		}
		times[blocks[i]] = time.Unix(int64(s.Timestamp), 0).UTC()
	}
	type authKey struct {
		tx    common.Hash
		payer common.Hash
	}
	authorized := map[authKey]bool{}
	for _, l := range auths {
		if len(l.Topics) == 3 {
			authorized[authKey{l.TxHash, l.Topics[1]}] = true
		}
	}
	for _, l := range logs {
		if len(l.Topics) != 3 || len(l.Data) != 32 { // an ERC-721 Transfer has the same topic
			continue
		}
		when := times[uint64(l.BlockNumber)]
		if when.Before(since) {
			continue
		}
		out.Transfers = append(out.Transfers, HistoryTransfer{Hash: l.TxHash.Hex(), Block: uint64(l.BlockNumber), Time: when, LogIndex: uint64(l.LogIndex),
			From: topicAddress(l.Topics[1]), To: topicAddress(l.Topics[2]), Value: new(big.Int).SetBytes(l.Data),
			X402: authorized[authKey{l.TxHash, l.Topics[1]}]})
	}
	return out, nil
}
