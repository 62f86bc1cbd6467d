package chain

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/peage/appliance/internal/obs"
)

// Log keys.
const (
	keyTx     = obs.KeyTx
	keyNonce  = obs.KeyAccountNonce
	keyErr    = obs.KeyErr
	keyTipWei = obs.KeyTipWei
)

// SenderOptions tune a Sender. Zero values take the defaults in brackets.
type SenderOptions struct {
	PollInterval   time.Duration // how often the head is read for the receipt waits [500ms]
	ReplaceAfter   time.Duration // re-price a transaction not mined after this long [30s]
	ReceiptTimeout time.Duration // give up waiting (the transaction may still land) [90s]
	Logger         *slog.Logger
}

// Sender submits transactions from one hot key. It owns the key's account nonce: transactions
// are signed and broadcast one at a time under a lock, so concurrent settlements never collide.
type Sender struct {
	b       Backend
	key     *ecdsa.PrivateKey
	from    common.Address
	chainID *big.Int
	signer  types.Signer
	opts    SenderOptions
	log     *slog.Logger

	heads *headWatch // shared by every Wait

	feeMu   sync.Mutex // held across the fees' reads (fees)
	tipHead uint64     // the head number tip was read at
	tip     *big.Int

	mu     sync.Mutex
	next   uint64
	loaded bool
}

// NewSender reads the chain id and prepares a Sender for key.
func NewSender(ctx context.Context, b Backend, key *ecdsa.PrivateKey, opts SenderOptions) (*Sender, error) {
	id, err := b.ChainID(ctx)
	if err != nil {
		return nil, fmt.Errorf("chain id: %w", err)
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 500 * time.Millisecond
	}
	if opts.ReplaceAfter <= 0 {
		opts.ReplaceAfter = 30 * time.Second
	}
	if opts.ReceiptTimeout <= 0 {
		opts.ReceiptTimeout = 90 * time.Second
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Sender{b: b, key: key, from: crypto.PubkeyToAddress(key.PublicKey), chainID: id,
		signer: types.LatestSignerForChainID(id), opts: opts, log: log, heads: newHeadWatch(b, opts.PollInterval, log)}, nil
}

// Address is the hot key's address (it pays the gas).
func (s *Sender) Address() common.Address { return s.from }

// PollInterval is how often the head is read while receipts are awaited.
func (s *Sender) PollInterval() time.Duration { return s.opts.PollInterval }

// ReceiptTimeout is how long Wait waits for a receipt.
func (s *Sender) ReceiptTimeout() time.Duration { return s.opts.ReceiptTimeout }

// ChainID is the chain the sender signs for.
func (s *Sender) ChainID() *big.Int { return new(big.Int).Set(s.chainID) }

// RevertError is a call the chain refuses (estimation reverted): sending it would only burn gas.
type RevertError struct {
	Reason string
}

func (e *RevertError) Error() string { return "execution reverted: " + e.Reason }

// PendingError means the transaction was broadcast but no receipt came in time. It is not a
// failure: the transaction may still be mined, and the ledger keeps looking.
type PendingError struct {
	Hashes []common.Hash
}

func (e *PendingError) Error() string {
	return fmt.Sprintf("no receipt yet for %d broadcast transaction(s), last %s", len(e.Hashes), e.Hashes[len(e.Hashes)-1].Hex())
}

// Recorder is called with each signed transaction before it is broadcast, so the caller can
// write its hash durably first; an error aborts the broadcast.
type Recorder func(tx *types.Transaction) error

// Call is a transaction to send: a contract call with no value.
type Call struct {
	To   common.Address
	Data []byte
}

// Estimate simulates the call from the hot key and returns the gas limit to use.
func (s *Sender) Estimate(ctx context.Context, c Call) (uint64, error) {
	gas, err := s.b.EstimateGas(ctx, ethereum.CallMsg{From: s.from, To: &c.To, Data: c.Data})
	if err != nil {
		if isRevert(err) {
			return 0, &RevertError{Reason: err.Error()}
		}
		return 0, fmt.Errorf("estimate gas: %w", err)
	}
	return gas + gas/5, nil // headroom: state may change between estimation and inclusion
}

func isRevert(err error) bool {
	var de interface{ ErrorData() any }
	return errors.As(err, &de) || strings.Contains(err.Error(), "execution reverted")
}

// fees prices an EIP-1559 transaction: the suggested tip, and a fee cap that survives the base
// fee doubling (it rises at most 12.5% a block).
//
// The base fee comes from a header read within the last poll interval, the head watch's or
// one a send read, and the tip is read once a head: a tip and a header for each send were two
// of the six requests a settlement cost an endpoint (docs/gas.md). feeMu is held across the
// reads, so that sends with nothing fresh share them.
func (s *Sender) fees(ctx context.Context) (tip, feeCap *big.Int, err error) {
	s.feeMu.Lock()
	defer s.feeMu.Unlock()
	head := s.heads.fresh()
	if head == nil {
		if head, err = s.b.HeaderByNumber(ctx, nil); err != nil {
			return nil, nil, fmt.Errorf("latest header: %w", err)
		}
		s.heads.saw(head)
	}
	if n := head.Number.Uint64(); s.tip == nil || s.tipHead != n {
		t, err := s.b.SuggestGasTipCap(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("suggest tip: %w", err)
		}
		s.tip, s.tipHead = t, n
	}
	tip = new(big.Int).Set(s.tip)
	base := head.BaseFee
	if base == nil {
		base = new(big.Int)
	}
	feeCap = new(big.Int).Add(new(big.Int).Mul(base, big.NewInt(2)), tip)
	return tip, feeCap, nil
}

// Send signs c with the next account nonce, records it, and broadcasts it.
func (s *Sender) Send(ctx context.Context, c Call, gas uint64, record Recorder) (*types.Transaction, error) {
	tip, feeCap, err := s.fees(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for attempt := 0; ; attempt++ {
		if !s.loaded {
			n, err := s.b.PendingNonceAt(ctx, s.from)
			if err != nil {
				return nil, fmt.Errorf("account nonce: %w", err)
			}
			s.next, s.loaded = n, true
		}
		tx, err := s.sign(c, gas, s.next, tip, feeCap)
		if err != nil {
			return nil, err
		}
		if err := record(tx); err != nil {
			return nil, fmt.Errorf("record before broadcast: %w", err)
		}
		err = s.b.SendTransaction(ctx, tx)
		if err == nil {
			s.log.Debug("broadcast", keyTx, tx.Hash().Hex(), keyNonce, tx.Nonce())
			s.next++
			return tx, nil
		}
		// The node knows better than we do: reload the account nonce before the next send.
		s.loaded = false
		if attempt == 0 && strings.Contains(err.Error(), "nonce too low") {
			continue
		}
		return nil, fmt.Errorf("broadcast: %w", err)
	}
}

func (s *Sender) sign(c Call, gas, nonce uint64, tip, feeCap *big.Int) (*types.Transaction, error) {
	to := c.To
	tx := types.NewTx(&types.DynamicFeeTx{ChainID: s.chainID, Nonce: nonce, GasTipCap: tip, GasFeeCap: feeCap,
		Gas: gas, To: &to, Data: c.Data})
	return types.SignTx(tx, s.signer, s.key)
}

// Wait waits for a receipt of tx or of any replacement of it, and for the node's latest block
// to include it, so that what the caller reads next ("latest") sees the transaction: a node
// can answer the receipt before it moves its head (geth writes the lookup entry before it
// swaps the current block), and a load-balanced endpoint may ask a node that lags. A
// transaction not mined within ReplaceAfter is re-signed with the same account nonce and fees
// raised by a quarter (nodes require at least a tenth), recorded, and broadcast; whichever
// version is mined wins.
//
// It asks for its receipts at once, and when its replacement or receipt deadline comes; each
// time the Sender's shared head watch sees the head rise, it takes what the watch found in the
// new blocks' receipts, or asks again if the watch did not read them all. A receipt counts
// once the head read before asking for it has reached its block.
func (s *Sender) Wait(ctx context.Context, tx *types.Transaction, record Recorder) (*types.Receipt, error) {
	hashes := []common.Hash{tx.Hash()}
	last := tx
	leave := s.heads.join()
	defer leave()
	s.heads.await(tx.Hash())
	defer func() { s.heads.forget(hashes...) }()
	deadline := time.NewTimer(s.opts.ReceiptTimeout)
	defer deadline.Stop()
	replace := time.NewTimer(s.opts.ReplaceAfter)
	defer replace.Stop()
	var expired, replaceDue bool
	var mined *types.Receipt
	look, seenGaps := true, uint64(0)
	for {
		head, moved, gaps := s.heads.state()
		if look || gaps != seenGaps {
			mined = s.lookup(ctx, hashes)
		} else if r := s.heads.found(hashes); r != nil {
			mined = r
		}
		look, seenGaps = false, gaps
		if mined != nil {
			if head >= mined.BlockNumber.Uint64() || expired {
				return mined, nil
			}
			s.heads.poke()
		} else if expired {
			return nil, &PendingError{Hashes: hashes}
		}
		if mined == nil && replaceDue {
			if next, err := s.replace(ctx, last, record); err != nil {
				s.log.Warn("replacement not sent", keyTx, last.Hash().Hex(), keyErr, err)
			} else {
				// Awaited after its broadcast: a block read in between is covered by the
				// lookup that follows.
				s.heads.await(next.Hash())
				hashes = append(hashes, next.Hash())
				last = next
				look = true
			}
			replaceDue = false
			replace.Reset(s.opts.ReplaceAfter)
		}
		select {
		case <-ctx.Done():
			return nil, &PendingError{Hashes: hashes}
		case <-moved:
		case <-replace.C:
			replaceDue, look = true, true
		case <-deadline.C:
			expired, look = true, true
		}
	}
}

// lookup asks for the receipt of each hash in turn and returns the first one mined.
func (s *Sender) lookup(ctx context.Context, hashes []common.Hash) *types.Receipt {
	for _, h := range hashes {
		r, err := s.b.TransactionReceipt(ctx, h)
		if err == nil && r != nil {
			return r
		}
		// A node still indexing answers an error for a receipt it may well have.
		if err != nil && !errors.Is(err, ethereum.NotFound) && !strings.Contains(err.Error(), "indexing is in progress") {
			s.log.Warn("receipt lookup failed", keyTx, h.Hex(), keyErr, err)
		}
	}
	return nil
}

func (s *Sender) replace(ctx context.Context, old *types.Transaction, record Recorder) (*types.Transaction, error) {
	bump := func(v *big.Int) *big.Int {
		return new(big.Int).Add(v, new(big.Int).Add(new(big.Int).Div(v, big.NewInt(4)), big.NewInt(1)))
	}
	tip, feeCap := bump(old.GasTipCap()), bump(old.GasFeeCap())
	if sTip, sCap, err := s.fees(ctx); err == nil {
		tip, feeCap = maxBig(tip, sTip), maxBig(feeCap, sCap)
	}
	if feeCap.Cmp(tip) < 0 {
		feeCap = new(big.Int).Set(tip)
	}
	tx, err := s.sign(Call{To: *old.To(), Data: old.Data()}, old.Gas(), old.Nonce(), tip, feeCap)
	if err != nil {
		return nil, err
	}
	if err := record(tx); err != nil {
		return nil, err
	}
	if err := s.b.SendTransaction(ctx, tx); err != nil {
		return nil, err
	}
	s.log.Info("replaced stuck transaction", keyTx, tx.Hash().Hex(), keyNonce, tx.Nonce(), keyTipWei, tip.String())
	return tx, nil
}

func maxBig(a, b *big.Int) *big.Int {
	if a.Cmp(b) >= 0 {
		return a
	}
	return b
}
