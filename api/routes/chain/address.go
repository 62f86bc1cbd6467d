package chain

import (
	"context"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream/blockscout"
	"github.com/peage/appliance/api/upstream/chainrpc"
)

// The address route's window and limits.
const (
	historyDays   = 60
	historyShown  = 100 // transfers listed, newest first
	indexerPage   = 100
	indexerPages  = 10 // 1,000 transfers read at most from the indexer
	defaultBlocks = 10_000
)

// EIP-3009 entry points: a transaction calling one of them moved the token on the payer's
// signature, which is how x402's exact scheme settles.
var eip3009Selectors = map[string]bool{
	"0xe3ee160e": true, // transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)
	"0xcf092995": true, // transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes) (smart-wallet payers)
	"0xef55bec6": true, // receiveWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)
}

// move is one transfer as the route counts it, whatever source read it.
type move struct {
	hash     string
	block    uint64
	at       time.Time
	logIndex uint64
	from, to string
	value    *big.Int
	x402     bool
}

// side sums one direction of the flow.
type side struct {
	count, x402 int
	total       *big.Int
	parties     map[string]bool
	last        time.Time
}

func (s *side) add(m move, party string) {
	s.count++
	s.total.Add(s.total, m.value)
	s.parties[strings.ToLower(party)] = true
	if m.x402 {
		s.x402++
	}
	if m.at.After(s.last) {
		s.last = m.at
	}
}

func (s *side) json(meta chainrpc.TokenMeta, partiesKey string) map[string]any {
	out := map[string]any{"count": s.count, "total": chainrpc.FormatUnits(s.total, meta.Decimals), "total_atomic": s.total.String(),
		partiesKey: len(s.parties), "x402_settlements": s.x402, "last_at": nil}
	if !s.last.IsZero() {
		out["last_at"] = s.last.Format(time.RFC3339)
	}
	return out
}

// address answers an address's payment history in one token over 60 days: sums in and out,
// x402 settlements recognised, the newest 100 transfers. The indexer reads the whole window
// when configured; without it the chain's logs cover the last chain.logs_max_blocks blocks,
// and an answer that does not reach 60 days back says so (truncated, with the reason).
func (r *Routes) address(ctx context.Context, req *catalog.Request) (any, error) {
	addr := chainrpc.Checksummed(req.Args.Str("address"))
	token := r.d.Client.USDC()
	if t := req.Args.Str("token"); t != "" {
		token = chainrpc.Checksummed(t)
	}
	now := r.d.Now().UTC()
	since := now.Add(-historyDays * 24 * time.Hour)

	var (
		moves     []move
		meta      chainrpc.TokenMeta
		chainID   uint64
		source    string
		truncated string
		window    = map[string]any{"days": historyDays, "from": since.Format(time.RFC3339), "to": now.Format(time.RFC3339)}
	)
	if r.d.Indexer != nil {
		source = "indexer"
		var err error
		if chainID, err = r.d.Client.ChainID(ctx); err != nil {
			return nil, r.fail(err, "")
		}
		if moves, meta, truncated, err = r.indexed(ctx, addr, token, since); err != nil {
			return nil, err
		}
		if meta.Symbol == "" { // no transfer told the token's data: the token itself does
			t, err := r.d.Client.Token(ctx, token)
			if err != nil {
				return nil, r.fail(err, "token")
			}
			meta = t.TokenMeta
		}
	} else {
		source = "rpc_logs"
		blocks := r.d.LogsMaxBlocks
		if blocks == 0 {
			blocks = defaultBlocks
		}
		h, err := r.d.Client.History(ctx, token, addr, since, blocks)
		if err != nil {
			return nil, r.fail(err, "token")
		}
		meta, chainID = h.Token, h.ChainID
		window["from_block"], window["to_block"] = h.FromBlock, h.ToBlock
		if !h.Complete {
			window["from"] = h.FromTime.Format(time.RFC3339)
			truncated = "no indexer is configured and the chain endpoint's logs were read over the last " +
				itoa(blocks) + " blocks only (since " + h.FromTime.Format(time.RFC3339) + "), not the whole 60 days"
		}
		for _, t := range h.Transfers {
			moves = append(moves, move{hash: t.Hash, block: t.Block, at: t.Time, logIndex: t.LogIndex, from: t.From, to: t.To, value: t.Value, x402: t.X402})
		}
	}

	in := &side{total: new(big.Int), parties: map[string]bool{}}
	out := &side{total: new(big.Int), parties: map[string]bool{}}
	listed := make([]map[string]any, 0, min(len(moves), historyShown))
	for _, m := range moves {
		incoming := strings.EqualFold(m.to, addr)
		outgoing := strings.EqualFold(m.from, addr)
		if incoming {
			in.add(m, m.from)
		}
		if outgoing {
			out.add(m, m.to)
		}
		if len(listed) == historyShown {
			continue
		}
		dir, party := "in", m.from
		switch {
		case incoming && outgoing:
			dir, party = "self", m.to
		case outgoing:
			dir, party = "out", m.to
		}
		listed = append(listed, map[string]any{"hash": m.hash, "block_number": m.block, "timestamp_iso": m.at.Format(time.RFC3339),
			"log_index": m.logIndex, "direction": dir, "counterparty": chainrpc.Checksummed(party),
			"amount": chainrpc.FormatUnits(m.value, meta.Decimals), "amount_atomic": m.value.String(), "x402": m.x402})
	}
	return map[string]any{
		"address":             addr,
		"chain":               chainrpc.ChainName(chainID),
		"chain_id":            chainID,
		"token":               map[string]any{"address": meta.Address, "symbol": meta.Symbol, "decimals": meta.Decimals},
		"window":              window,
		"source":              source,
		"incoming":            in.json(meta, "distinct_senders"),
		"outgoing":            out.json(meta, "distinct_recipients"),
		"transfers":           listed,
		"transfers_in_window": len(moves),
		"truncated":           truncated != "",
		"truncation":          nilIfEmpty(truncated),
		"x402_method":         "an x402 settlement is a transfer the payer authorised by EIP-3009 (an AuthorizationUsed event of the payer in the same transaction, or a transferWithAuthorization/receiveWithAuthorization call on the indexer path); permit- and upto-scheme settlements leave no such trace and are not counted",
	}, nil
}

// indexed reads the window from the indexer, newest first, a page at a time until a transfer
// is older than since; more than indexerPages pages is declared truncated. The token's symbol
// and decimals come with the rows.
func (r *Routes) indexed(ctx context.Context, addr, token string, since time.Time) ([]move, chainrpc.TokenMeta, string, error) {
	var out []move
	meta := chainrpc.TokenMeta{Address: token}
	for page := 1; page <= indexerPages; page++ {
		rows, err := r.d.Indexer.TokenTransfers(ctx, addr, token, page, indexerPage)
		if err != nil {
			return nil, meta, "", err
		}
		for _, t := range rows {
			if meta.Symbol == "" && t.Symbol != "" && t.Decimals >= 0 && t.Decimals <= 255 {
				meta.Symbol, meta.Decimals = t.Symbol, uint8(t.Decimals)
			}
			if t.Time.Before(since) {
				return out, meta, "", nil
			}
			out = append(out, fromIndexer(t))
		}
		if len(rows) < indexerPage {
			return out, meta, "", nil
		}
	}
	return out, meta, "more than " + itoa(indexerPages*indexerPage) + " transfers in 60 days: the sums cover the newest " +
		itoa(indexerPages*indexerPage) + " (back to " + out[len(out)-1].at.Format(time.RFC3339) + ")", nil
}

func fromIndexer(t blockscout.Transfer) move {
	return move{hash: t.Hash, block: t.Block, at: t.Time, logIndex: t.LogIndex, from: t.From, to: t.To, value: t.Value, x402: eip3009Selectors[t.Selector]}
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
