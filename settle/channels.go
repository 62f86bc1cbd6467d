package settle

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/peage/appliance/settle/batch"
	"github.com/peage/appliance/settle/chain"
	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/usdc"
	"github.com/peage/appliance/settle/x402"
)

// The facilitator side of x402's batch-settlement scheme (settle/batch has the hashing): verify
// deposit, voucher and refund payloads against the on-chain channel, and settle deposits,
// claims, sweeps and cooperative refunds through the x402BatchSettlement contract at its
// canonical address, from the hot key. The receiver authorizer key (Options.ReceiverAuthorizer)
// signs claim batches and refunds; without it the scheme is off.

var settlementABI = usdc.NewX402BatchSettlement()

// BatchEnabled reports whether this facilitator handles batch-settlement.
func (f *Facilitator) BatchEnabled() bool { return f.o.ReceiverAuthorizer != nil }

// ReceiverAuthorizer is the address that signs claims and refunds (zero when the scheme is off).
func (f *Facilitator) ReceiverAuthorizer() common.Address {
	if f.o.ReceiverAuthorizer == nil {
		return common.Address{}
	}
	return crypto.PubkeyToAddress(f.o.ReceiverAuthorizer.PublicKey)
}

func (f *Facilitator) chainID() uint64 {
	id, _ := x402.ChainID(f.o.Network)
	return id
}

// Onchain is a channel as the contract holds it.
type Onchain struct {
	Balance, TotalClaimed, RefundNonce *big.Int
	WithdrawRequestedAt                uint64
	WithdrawAmount                     *big.Int // of the pending withdrawal (0 without one)
}

// State renders the snapshot the scheme's verify and settle answers carry.
func (o *Onchain) State(id common.Hash) *x402.ChannelState {
	return &x402.ChannelState{ChannelID: strings.ToLower(id.Hex()), Balance: o.Balance.String(), TotalClaimed: o.TotalClaimed.String(),
		WithdrawRequestedAt: o.WithdrawRequestedAt, RefundNonce: o.RefundNonce.String()}
}

// ReadChannel reads a channel's balance, totalClaimed, pending withdrawal and refund nonce:
// three calls made at once, since on a remote RPC each is a round trip. Every answer feeds the
// channel view (view.go), unless the channel changed meanwhile.
func (f *Facilitator) ReadChannel(ctx context.Context, id common.Hash) (*Onchain, error) {
	stamp := f.view.stamp(id)
	var (
		outs [3][]byte
		errs [3]error
		wg   sync.WaitGroup
	)
	for i, data := range [3][]byte{settlementABI.PackChannels(id), settlementABI.PackPendingWithdrawals(id), settlementABI.PackRefundNonce(id)} {
		wg.Go(func() { outs[i], errs[i] = f.o.Backend.CallContract(ctx, callMsg(batch.SettlementAddress, data), nil) })
	}
	wg.Wait()
	if err := errs[0]; err != nil {
		return nil, fmt.Errorf("read channel: %w", err)
	}
	ch, err := settlementABI.UnpackChannels(outs[0])
	if err != nil {
		return nil, fmt.Errorf("read channel: %w", err)
	}
	if err := errs[1]; err != nil {
		return nil, fmt.Errorf("read pending withdrawal: %w", err)
	}
	pw, err := settlementABI.UnpackPendingWithdrawals(outs[1])
	if err != nil {
		return nil, fmt.Errorf("read pending withdrawal: %w", err)
	}
	if err := errs[2]; err != nil {
		return nil, fmt.Errorf("read refund nonce: %w", err)
	}
	nonce, err := settlementABI.UnpackRefundNonce(outs[2])
	if err != nil {
		return nil, fmt.Errorf("read refund nonce: %w", err)
	}
	on := &Onchain{Balance: ch.Balance, TotalClaimed: ch.TotalClaimed, RefundNonce: nonce, WithdrawRequestedAt: pw.InitiatedAt.Uint64(),
		WithdrawAmount: pw.Amount}
	f.view.store(id, on, stamp)
	return on, nil
}

// batchCall is a checked batch-settlement payment: its config, channel id and voucher.
type batchCall struct {
	cfg     *batch.ChannelConfig
	id      common.Hash
	voucher *batch.Voucher
	deposit *batch.Deposit
	onchain *Onchain
}

func batchInvalid(bad *batch.Invalid, payer string) x402.BatchVerifyResponse {
	return x402.BatchVerifyResponse{InvalidReason: bad.Reason, InvalidMessage: bad.Detail, Payer: payer}
}

func bad(reason, format string, args ...any) *batch.Invalid {
	return &batch.Invalid{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

// ownBatch refuses requirements for another network, asset, receiver, authorizer or delay than
// this facilitator's, and payloads whose config disagrees with the requirements.
func (f *Facilitator) ownBatch(r *x402.BatchRequirements, cfg *batch.ChannelConfig) *batch.Invalid {
	switch {
	case !f.BatchEnabled():
		return bad(x402.ReasonBatchScheme, "batch-settlement is not enabled on this facilitator")
	case r.Scheme != x402.SchemeBatchSettlement:
		return bad(x402.ReasonBatchScheme, "scheme %q is not batch-settlement", r.Scheme)
	case x402.CAIP2(r.Network) != f.o.Network:
		return bad(x402.ReasonBatchNetworkMismatch, "this facilitator settles on %s", f.o.Network)
	case !common.IsHexAddress(r.Asset) || common.HexToAddress(r.Asset) != f.o.Asset:
		return bad(x402.ReasonBatchTokenMismatch, "this facilitator settles %s", f.o.Asset.Hex())
	case !common.IsHexAddress(r.PayTo) || common.HexToAddress(r.PayTo) != f.o.PayTo:
		return bad(x402.ReasonBatchReceiverMismatch, "this facilitator pays %s", f.o.PayTo.Hex())
	case r.Extra == nil || r.Extra.Name != f.o.TokenName || r.Extra.Version != f.o.TokenVersion:
		return bad(x402.ReasonBatchMissingEIP712Domain, "EIP-712 domain differs from the token's")
	case !common.IsHexAddress(r.Extra.ReceiverAuthorizer) || common.HexToAddress(r.Extra.ReceiverAuthorizer) != f.ReceiverAuthorizer():
		return bad(x402.ReasonBatchAuthorizerMismatch, "this facilitator's receiver authorizer is %s", f.ReceiverAuthorizer().Hex())
	case cfg.Token != f.o.Asset:
		return bad(x402.ReasonBatchTokenMismatch, "channel token %s is not %s", cfg.Token.Hex(), f.o.Asset.Hex())
	case cfg.Receiver != f.o.PayTo:
		return bad(x402.ReasonBatchReceiverMismatch, "channel receiver %s is not payTo", cfg.Receiver.Hex())
	case cfg.ReceiverAuthorizer != f.ReceiverAuthorizer():
		return bad(x402.ReasonBatchAuthorizerMismatch, "channel receiverAuthorizer %s is not %s", cfg.ReceiverAuthorizer.Hex(), f.ReceiverAuthorizer().Hex())
	case cfg.WithdrawDelay != r.Extra.WithdrawDelay:
		return bad(x402.ReasonBatchDelayMismatch, "channel withdrawDelay %d is not %d", cfg.WithdrawDelay, r.Extra.WithdrawDelay)
	case cfg.WithdrawDelay < batch.MinWithdrawDelay || cfg.WithdrawDelay > batch.MaxWithdrawDelay:
		return bad(x402.ReasonBatchDelayOutOfRange, "withdrawDelay %d is outside 15 min – 30 days", cfg.WithdrawDelay)
	}
	return nil
}

// fromChain is checkBatch's work for a payload whose channel must be read from the chain.
const fromChain time.Duration = -1

// checkBatch runs the scheme's verification rules. A chain read failure is an error, never a
// verdict. A voucher for a call whose work lasts work (fromChain: none) takes its channel
// from the view when the view can be trusted that long (view.go); a voucher the view's state
// would refuse is checked again against the chain, since a deposit may not be seen yet.
func (f *Facilitator) checkBatch(ctx context.Context, req *x402.BatchRequest, work time.Duration) (*batchCall, *batch.Invalid, error) {
	p := &req.PaymentPayload.Payload
	reason := map[string]string{x402.BatchDeposit: x402.ReasonBatchDepositPayload, x402.BatchRefund: x402.ReasonBatchRefundPayload}[p.Type]
	if reason == "" {
		if p.Type != x402.BatchVoucher {
			return nil, bad(x402.ReasonBatchPayloadType, "payload type %q is not deposit, voucher or refund", p.Type), nil
		}
		reason = x402.ReasonBatchVoucherPayload
	}
	cfg, invalid := batch.ParseConfig(p.ChannelConfig, reason)
	if invalid != nil {
		return nil, invalid, nil
	}
	if invalid := f.ownBatch(&req.PaymentRequirements, cfg); invalid != nil {
		return nil, invalid, nil
	}
	v, invalid := batch.ParseVoucher(p.Voucher)
	if invalid != nil {
		return nil, invalid, nil
	}
	c := &batchCall{cfg: cfg, id: v.ChannelID, voucher: v}
	needsWallet, invalid := batch.CheckVoucher(f.chainID(), cfg, v)
	if invalid != nil {
		return nil, invalid, nil
	}
	if needsWallet {
		ok, err := f.reader.IsValidSignature(ctx, cfg.Payer, batch.VoucherDigest(f.chainID(), c.id, v.MaxClaimableAmount), v.Signature)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			return nil, bad(x402.ReasonBatchVoucherSignature, "the payer's wallet does not accept the voucher signature"), nil
		}
	}
	max := v.MaxClaimableAmount
	var on *Onchain
	if p.Type == x402.BatchVoucher && work >= 0 {
		on = f.view.lookup(c.id, f.o.Now(), f.o.ViewLag, work+f.claimMargin(), cfg.WithdrawDelay)
		if on != nil && (on.Balance.Sign() == 0 || max.Cmp(on.Balance) > 0 || max.Cmp(on.TotalClaimed) <= 0) {
			on = nil
		}
	}
	if on == nil {
		var err error
		if on, err = f.ReadChannel(ctx, c.id); err != nil {
			return nil, nil, err
		}
	}
	c.onchain = on
	switch p.Type {
	case x402.BatchDeposit:
		d, invalid := batch.ParseDeposit(p.Deposit, cfg, c.id)
		if invalid != nil {
			return nil, invalid, nil
		}
		c.deposit = d
		now := big.NewInt(f.o.Now().Unix())
		if d.Auth.ValidAfter.Cmp(now) >= 0 {
			return nil, bad(x402.ReasonBatchValidAfter, "deposit authorization is valid after %s", d.Auth.ValidAfter), nil
		}
		if d.Auth.ValidBefore.Cmp(new(big.Int).Add(now, big.NewInt(6))) <= 0 {
			return nil, bad(x402.ReasonBatchValidBefore, "deposit authorization expires at %s", d.Auth.ValidBefore), nil
		}
		token := f.domain()
		if signer, ok := batch.Recover(d.Digest(token), d.Signature); !ok || signer != cfg.Payer {
			return nil, bad(x402.ReasonBatchReceiveSignature, "the deposit authorization is not signed by the payer"), nil
		}
		used, err := f.reader.AuthorizationState(ctx, f.o.Asset, cfg.Payer, d.Auth.Nonce)
		if err != nil {
			return nil, nil, err
		}
		if used {
			return nil, bad(x402.ReasonBatchDepositPayload, "the deposit authorization was already used"), nil
		}
		bal, err := f.reader.BalanceOf(ctx, f.o.Asset, cfg.Payer)
		if err != nil {
			return nil, nil, err
		}
		if bal.Cmp(d.Amount) < 0 {
			return nil, bad(x402.ReasonBatchInsufficientBalance, "payer holds %s, deposit is %s", bal, d.Amount), nil
		}
		if max.Cmp(new(big.Int).Add(on.Balance, d.Amount)) > 0 {
			return nil, bad(x402.ReasonBatchExceedsBalance, "voucher %s exceeds balance %s plus deposit %s", max, on.Balance, d.Amount), nil
		}
		if max.Cmp(on.TotalClaimed) < 0 {
			return nil, bad(x402.ReasonBatchCumulativeBelow, "voucher %s is below claimed %s", max, on.TotalClaimed), nil
		}
	case x402.BatchVoucher, x402.BatchRefund:
		if on.Balance.Sign() == 0 {
			return nil, bad(x402.ReasonBatchChannelNotFound, "channel %s has no balance", c.id.Hex()), nil
		}
		if max.Cmp(on.Balance) > 0 {
			return nil, bad(x402.ReasonBatchExceedsBalance, "voucher %s exceeds balance %s", max, on.Balance), nil
		}
		if cmp := max.Cmp(on.TotalClaimed); cmp < 0 || (cmp == 0 && p.Type == x402.BatchVoucher) {
			return nil, bad(x402.ReasonBatchCumulativeBelow, "voucher %s does not exceed claimed %s", max, on.TotalClaimed), nil
		}
	}
	return c, nil, nil
}

// BatchVerify answers POST /verify for a batch-settlement payload, with the channel snapshot.
func (f *Facilitator) BatchVerify(ctx context.Context, req *x402.BatchRequest) (x402.BatchVerifyResponse, error) {
	c, invalid, err := f.checkBatch(ctx, req, fromChain)
	if err != nil {
		return x402.BatchVerifyResponse{}, err
	}
	if invalid != nil {
		return batchInvalid(invalid, req.PaymentPayload.Payload.Payer()), nil
	}
	return x402.BatchVerifyResponse{IsValid: true, Payer: c.cfg.Payer.Hex(), Extra: c.onchain.State(c.id)}, nil
}

func boundConfig(c *batch.ChannelConfig) usdc.X402BatchSettlementChannelConfig {
	return usdc.X402BatchSettlementChannelConfig{Payer: c.Payer, PayerAuthorizer: c.PayerAuthorizer, Receiver: c.Receiver,
		ReceiverAuthorizer: c.ReceiverAuthorizer, Token: c.Token, WithdrawDelay: new(big.Int).SetUint64(c.WithdrawDelay), Salt: c.Salt}
}

// errSimulation marks a transaction the chain refused at estimation (it would revert).
var errSimulation = errors.New("simulation failed")

// transact sends one call to the settlement contract from the hot key and waits for its
// receipt; a revert at estimation or in the receipt is errSimulation / a failed receipt. note
// says what the transaction is (kind, and the channel and amount it moves, if any).
func (f *Facilitator) transact(ctx context.Context, note ledger.Spend, data []byte) (*types.Receipt, error) {
	return f.transactRecorded(ctx, note, data, func(*types.Transaction) error { return nil })
}

// transactRecorded is transact with record called with each signed transaction before it is
// broadcast (the claimer journals its claim there, a deposit its channel). Each signed
// transaction is first journaled in flight in the batchtx journal (note with its hash, account
// nonce and bytes), so a restart finds it (reconcileTxs) instead of sending another; its mined
// receipt's gas is journaled under note.Kind (ledger.Spend*) for the operator's gas per paid
// call.
func (f *Facilitator) transactRecorded(ctx context.Context, note ledger.Spend, data []byte, record chain.Recorder) (*types.Receipt, error) {
	c := chain.Call{To: batch.SettlementAddress, Data: data}
	gas, err := f.sender.Estimate(ctx, c)
	if err != nil {
		var rev *chain.RevertError
		if errors.As(err, &rev) {
			return nil, fmt.Errorf("%w: %s", errSimulation, rev.Reason)
		}
		return nil, err
	}
	journaled := f.journalFirst(note, record)
	// This send watches and re-prices its own nonce: reconcileTxs leaves it alone. It is held
	// before the transaction is journaled, where reconcileTxs would find it.
	var held []uint64
	defer func() {
		for _, n := range held {
			f.waits.release(n)
		}
	}()
	first := func(tx *types.Transaction) error {
		if f.waits.take(tx.Nonce(), nil) {
			held = append(held, tx.Nonce())
		}
		return journaled(tx)
	}
	tx, err := f.sender.Send(ctx, c, gas, first)
	if err != nil {
		return nil, err
	}
	if f.o.OnBroadcast != nil {
		f.o.OnBroadcast("batch", tx.Hash())
	}
	r, err := f.sender.Wait(ctx, tx, journaled)
	f.mined(note.Kind, r)
	return r, err
}

// journalFirst is the recorder of a batch transaction's every signed version (its first send
// and each replacement): journaled in flight in the batchtx journal (note with its hash,
// account nonce and bytes) before its broadcast, then given to record.
func (f *Facilitator) journalFirst(note ledger.Spend, record chain.Recorder) chain.Recorder {
	return func(tx *types.Transaction) error {
		raw, err := tx.MarshalBinary()
		if err != nil {
			return err
		}
		sp := note
		sp.Tx, sp.Nonce, sp.Raw, sp.At, sp.Wei = tx.Hash().Hex(), tx.Nonce(), hexutil.Encode(raw), f.o.Now().UTC(), "0"
		if err := f.spends.Broadcast(sp); err != nil {
			return err
		}
		return record(tx)
	}
}

// mined journals the gas of a batch transaction's receipt (none: nothing) under kind.
func (f *Facilitator) mined(kind string, r *types.Receipt) {
	if r == nil {
		return
	}
	f.recordSpend(kind, r)
	if f.o.OnReceipt != nil {
		f.o.OnReceipt(kind, r.TxHash)
	}
}

// txWaits holds the account nonces whose batch transaction a Sender.Wait is watching and
// re-pricing (a live send's, or one sent again by reconcileTxs), so each nonce has one.
type txWaits struct {
	mu     sync.Mutex
	nonces map[uint64]bool
	closed bool // the facilitator is closing: no wait starts
}

// take claims nonce; wg, when not nil, is added the wait's goroutine under the same lock, so
// that Close (close, then wg.Wait) never races a wait starting.
func (w *txWaits) take(nonce uint64, wg *sync.WaitGroup) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.nonces[nonce] || (wg != nil && w.closed) {
		return false
	}
	if w.nonces == nil {
		w.nonces = map[uint64]bool{}
	}
	w.nonces[nonce] = true
	if wg != nil {
		wg.Add(1)
	}
	return true
}

func (w *txWaits) release(nonce uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.nonces, nonce)
}

func (w *txWaits) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
}

// awaitResent watches a batch transaction reconcileTxs sent again as a live send is watched
// (Sender.Wait): not mined within ReplaceAfter, it is re-signed at its account nonce with a
// higher fee, the replacement journaled before its broadcast. Without it, a transaction whose
// fee cap the base fee rose above would sit in the pool, and every later transaction of the
// hot key behind it. Its receipt is journaled here; the version it replaced is dropped by the
// next reconcileTxs. The wait ends with the facilitator or at the receipt timeout, and the
// next reconcileTxs starts another while the transaction is still in flight.
func (f *Facilitator) awaitResent(kind string, tx *types.Transaction) {
	nonce := tx.Nonce()
	if !f.waits.take(nonce, &f.wg) {
		return
	}
	go func() {
		defer f.wg.Done()
		defer f.waits.release(nonce)
		sp, _ := f.spends.Get(tx.Hash().Hex())
		note := ledger.Spend{Kind: kind, Channel: sp.Channel, Amount: sp.Amount}
		r, err := f.sender.Wait(f.life, tx, f.journalFirst(note, func(*types.Transaction) error { return nil }))
		f.mined(kind, r)
		if err != nil && f.life.Err() == nil {
			f.log.Warn("batch transaction sent again is still not mined; it is watched again at the next look", keyTx, tx.Hash().Hex(), keyErr, err)
		}
	}()
}

// reconcileTxs settles the fate of every batch-settlement transaction journaled in flight (a
// process killed between a broadcast and its receipt leaves them): one mined is recorded, its
// gas counted once; one whose account nonce went to another transaction (a replacement, or
// none) is dropped; one still pending is broadcast again, byte for byte, in case the node lost
// it, and watched and re-priced until mined (awaitResent). It returns the transactions still in
// flight.
func (f *Facilitator) reconcileTxs(ctx context.Context) ([]ledger.Spend, error) {
	inflight := f.spends.InFlight()
	if len(inflight) == 0 {
		return nil, nil
	}
	// Read before the receipts: a nonce confirmed by then belongs to a mined transaction whose
	// receipt the loop sees, if it is ours.
	confirmed, err := f.o.Backend.NonceAt(ctx, f.sender.Address(), nil)
	if err != nil {
		return inflight, fmt.Errorf("read account nonce: %w", err)
	}
	var pending []ledger.Spend
	latest := map[uint64]*types.Transaction{} // by account nonce, the version of highest fee cap
	kinds := map[uint64]string{}
	for _, sp := range inflight {
		r, err := f.o.Backend.TransactionReceipt(ctx, common.HexToHash(sp.Tx))
		switch {
		case err == nil && r != nil:
			f.recordSpend(sp.Kind, r)
		case sp.Nonce < confirmed:
			if err := f.spends.Drop(sp.Tx); err != nil {
				return inflight, err
			}
			f.log.Info("batch transaction replaced or dropped", keyTx, sp.Tx)
		default:
			pending = append(pending, sp)
			tx := new(types.Transaction)
			raw, derr := hexutil.Decode(sp.Raw)
			if derr == nil {
				derr = tx.UnmarshalBinary(raw)
			}
			if derr == nil {
				if l := latest[tx.Nonce()]; l == nil || tx.GasFeeCap().Cmp(l.GasFeeCap()) > 0 {
					latest[tx.Nonce()], kinds[tx.Nonce()] = tx, sp.Kind
				}
				derr = f.o.Backend.SendTransaction(ctx, tx)
			}
			if derr != nil && !alreadyKnown(derr) {
				f.log.Debug("batch transaction not broadcast again", keyTx, sp.Tx, keyErr, derr)
			}
		}
	}
	// A replacement is priced from the last version (Sender.Wait): the one of highest fee cap.
	for nonce, tx := range latest {
		f.awaitResent(kinds[nonce], tx)
	}
	return pending, nil
}

// recordSpend journals what a mined batch-settlement transaction cost; a failure to write it
// loses a figure of the operator's view, not money, so it is logged, not returned.
func (f *Facilitator) recordSpend(kind string, r *types.Receipt) {
	wei := "0"
	if r.EffectiveGasPrice != nil {
		wei = new(big.Int).Mul(new(big.Int).SetUint64(r.GasUsed), r.EffectiveGasPrice).String()
	}
	if err := f.spends.Record(ledger.Spend{Tx: r.TxHash.Hex(), Kind: kind, Gas: r.GasUsed, Wei: wei, At: f.o.Now().UTC()}); err != nil {
		f.log.Warn("batch transaction gas not recorded", keyTx, r.TxHash.Hex(), keyErr, err)
	}
}

// ClaimRow is one channel's latest voucher for a claim.
type ClaimRow struct {
	Config    batch.ChannelConfig
	Max       *big.Int // the voucher's maxClaimableAmount
	Signature []byte
	Claim     *big.Int // cumulative total to claim (at most Max)
}

// Claim claims many channels' vouchers in one claimWithSignature, signed by the receiver
// authorizer. It returns the receipt (gas used included).
func (f *Facilitator) Claim(ctx context.Context, rows []ClaimRow) (*types.Receipt, error) {
	return f.claimRecorded(ctx, rows, func(*types.Transaction) error { return nil })
}

func (f *Facilitator) claimRecorded(ctx context.Context, rows []ClaimRow, record chain.Recorder) (*types.Receipt, error) {
	if len(rows) == 0 {
		return nil, errors.New("claim: no rows")
	}
	claims := make([]usdc.X402BatchSettlementVoucherClaim, len(rows))
	entries := make([]batch.ClaimEntry, len(rows))
	for i, r := range rows {
		claims[i] = usdc.X402BatchSettlementVoucherClaim{
			Voucher:   usdc.X402BatchSettlementVoucher{Channel: boundConfig(&r.Config), MaxClaimableAmount: r.Max},
			Signature: r.Signature, TotalClaimed: r.Claim,
		}
		entries[i] = batch.ClaimEntry{ChannelID: batch.ChannelID(f.chainID(), &r.Config), MaxClaimableAmount: r.Max, TotalClaimed: r.Claim}
	}
	sig, err := batch.SignClaimBatch(f.o.ReceiverAuthorizer, f.chainID(), entries)
	if err != nil {
		return nil, err
	}
	return f.transactRecorded(ctx, ledger.Spend{Kind: ledger.SpendClaim}, settlementABI.PackClaimWithSignature(claims, sig), record)
}

// Sweep transfers everything claimed and unsettled for payTo in one transfer; it returns the
// amount moved (0 when there was nothing, and then no transaction is sent). While an earlier
// sweep is still in flight (a restart found it journaled and not mined), none is sent: the
// pending one moves the same value.
func (f *Facilitator) Sweep(ctx context.Context) (*big.Int, *types.Receipt, error) {
	pending, err := f.reconcileTxs(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, sp := range pending {
		if sp.Kind == ledger.SpendSweep {
			f.log.Info("a sweep is still in flight; none sent", keyTx, sp.Tx)
			return new(big.Int), nil, nil
		}
	}
	out, err := f.o.Backend.CallContract(ctx, callMsg(batch.SettlementAddress, settlementABI.PackReceivers(f.o.PayTo, f.o.Asset)), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("read receiver totals: %w", err)
	}
	rs, err := settlementABI.UnpackReceivers(out)
	if err != nil {
		return nil, nil, err
	}
	owed := new(big.Int).Sub(rs.TotalClaimed, rs.TotalSettled)
	if owed.Sign() == 0 {
		return owed, nil, nil
	}
	r, err := f.transact(ctx, ledger.Spend{Kind: ledger.SpendSweep, Amount: owed.String()}, settlementABI.PackSettle(f.o.PayTo, f.o.Asset))
	return owed, r, err
}

// BatchSettle answers POST /settle for a batch-settlement payload: a deposit is verified and
// executed; a refund claims the zero-charge voucher if needed and refunds (all the unclaimed
// escrow when no amount is given); a settle payload from the server sweeps. A voucher has
// nothing to settle: it is stored by the resource server. A claim payload is refused as an
// unknown action: claims are made by this facilitator's own claimer (claimer.go).
func (f *Facilitator) BatchSettle(ctx context.Context, req *x402.BatchRequest) (x402.BatchSettleResponse, error) {
	return f.batchSettle(ctx, req, nil, nil)
}

// batchSettle is BatchSettle; after a successful deposit or refund it also sets *after (when
// not nil) to the channel as read from the chain, which the answer's channel state renders.
// recordTx (nil: nothing) is called with each signed transaction of a deposit or refund before
// its broadcast.
func (f *Facilitator) batchSettle(ctx context.Context, req *x402.BatchRequest, after **Onchain, recordTx chain.Recorder) (x402.BatchSettleResponse, error) {
	if recordTx == nil {
		recordTx = func(*types.Transaction) error { return nil }
	}
	p := &req.PaymentPayload.Payload
	fail := func(reason, payer string) x402.BatchSettleResponse {
		return x402.BatchSettleResponse{ErrorReason: reason, Network: f.o.Network, Payer: payer}
	}
	switch p.Type {
	case x402.BatchSettle:
		if invalid := f.ownBatch(&req.PaymentRequirements, &batch.ChannelConfig{Token: f.o.Asset, Receiver: f.o.PayTo,
			ReceiverAuthorizer: f.ReceiverAuthorizer(), WithdrawDelay: reqDelay(req)}); invalid != nil {
			return fail(invalid.Reason, ""), nil
		}
		// Not beside a claim round's own sweep: the second would pay gas to move nothing.
		f.claimer.round.Lock()
		amount, r, err := f.Sweep(ctx)
		f.claimer.round.Unlock()
		if err != nil {
			return f.txFailure(err, x402.ReasonBatchSettleSimulation, "")
		}
		res := x402.BatchSettleResponse{Success: true, Network: f.o.Network, Amount: amount.String()}
		if r != nil {
			if r.Status != types.ReceiptStatusSuccessful {
				return fail(x402.ReasonBatchSettleFailed, ""), nil
			}
			res.Transaction = r.TxHash.Hex()
		}
		return res, nil
	case x402.BatchDeposit, x402.BatchRefund:
	case x402.BatchVoucher:
		return fail(x402.ReasonBatchPayloadType, ""), nil
	default:
		return fail(x402.ReasonBatchUnknownAction, ""), nil
	}
	c, invalid, err := f.checkBatch(ctx, req, fromChain)
	if err != nil {
		return x402.BatchSettleResponse{}, err
	}
	if invalid != nil {
		return fail(invalid.Reason, p.Payer()), nil
	}
	payer := c.cfg.Payer.Hex()
	var r *types.Receipt
	var amount *big.Int
	if p.Type == x402.BatchDeposit {
		amount = c.deposit.Amount
		r, err = f.transactRecorded(ctx, ledger.Spend{Kind: ledger.SpendDeposit, Channel: strings.ToLower(c.id.Hex()), Amount: amount.String()},
			settlementABI.PackDeposit(boundConfig(c.cfg), amount, batch.ERC3009CollectorAddress, c.deposit.CollectorData()), recordTx)
		if err != nil {
			return f.txFailure(err, x402.ReasonBatchDepositSimulation, payer)
		}
	} else {
		if r, amount, err = f.refund(ctx, c, p.Amount, recordTx); err != nil {
			var invalid *batch.Invalid
			if errors.As(err, &invalid) {
				return fail(invalid.Reason, payer), nil
			}
			return f.txFailure(err, x402.ReasonBatchRefundSimulation, payer)
		}
	}
	if r.Status != types.ReceiptStatusSuccessful {
		return fail(map[string]string{x402.BatchDeposit: x402.ReasonBatchDepositFailed, x402.BatchRefund: x402.ReasonBatchRefundFailed}[p.Type], payer), nil
	}
	on, err := f.ReadChannel(ctx, c.id)
	if err != nil {
		return x402.BatchSettleResponse{}, err
	}
	if after != nil {
		*after = on
	}
	return x402.BatchSettleResponse{Success: true, Payer: payer, Transaction: r.TxHash.Hex(), Network: f.o.Network,
		Amount: amount.String(), Asset: f.o.Asset.Hex(), Extra: &x402.BatchResponseExtra{ChannelState: on.State(c.id)}}, nil
}

func reqDelay(req *x402.BatchRequest) uint64 {
	if req.PaymentRequirements.Extra == nil {
		return 0
	}
	return req.PaymentRequirements.Extra.WithdrawDelay
}

// refund claims the zero-charge voucher when it is above what the chain has claimed (so the
// charges it covers are kept), then refunds amount (all the unclaimed escrow when empty) with
// the receiver authorizer's signature at the current refund nonce.
func (f *Facilitator) refund(ctx context.Context, c *batchCall, text string, record chain.Recorder) (*types.Receipt, *big.Int, error) {
	max := c.voucher.MaxClaimableAmount
	if max.Cmp(c.onchain.TotalClaimed) > 0 {
		r, err := f.claimRecorded(ctx, []ClaimRow{{Config: *c.cfg, Max: max, Signature: c.voucher.Signature, Claim: max}}, record)
		if err != nil {
			return nil, nil, err
		}
		if r.Status != types.ReceiptStatusSuccessful {
			return r, nil, nil
		}
	}
	available := new(big.Int).Sub(c.onchain.Balance, max)
	amount := available
	if text != "" {
		a, err := batch.ParseAmount(text, available)
		if err != nil || a.Sign() == 0 {
			return nil, nil, bad(x402.ReasonBatchRefundAmountInvalid, "refund amount %q is not in 1..%s", text, available)
		}
		amount = a
	}
	if amount.Sign() == 0 {
		return nil, nil, bad(x402.ReasonBatchRefundNoBalance, "nothing is left to refund")
	}
	sig, err := batch.SignRefund(f.o.ReceiverAuthorizer, f.chainID(), c.id, c.onchain.RefundNonce, amount)
	if err != nil {
		return nil, nil, err
	}
	r, err := f.transactRecorded(ctx, ledger.Spend{Kind: ledger.SpendRefund, Channel: strings.ToLower(c.id.Hex()), Amount: amount.String()},
		settlementABI.PackRefundWithSignature(boundConfig(c.cfg), amount, c.onchain.RefundNonce, sig), record)
	return r, amount, err
}

// txFailure turns a transaction error into the scheme's answer: a revert at simulation is a
// payment-level failure; anything else (RPC down, receipt not seen) is an error for a 503.
func (f *Facilitator) txFailure(err error, simulation, payer string) (x402.BatchSettleResponse, error) {
	if errors.Is(err, errSimulation) {
		f.log.Info("batch-settlement transaction refused at simulation", keyErr, err)
		return x402.BatchSettleResponse{ErrorReason: simulation, Network: f.o.Network, Payer: payer}, nil
	}
	return x402.BatchSettleResponse{}, err
}
