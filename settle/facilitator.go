// Package settle is the x402 facilitator of the appliance: it verifies exact/EIP-3009 payments,
// holds their nonces in a durable ledger while the paid work runs, and settles them on chain
// from the gas-paying hot key (synchronously, or from a durable queue). It serves the standard
// facilitator API (/verify, /settle, /supported) plus /reserve, /release and /complete over a
// Unix socket. It holds the hot key only: payTo is an address, the payout key never lives here.
package settle

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/big"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/peage/appliance/internal/journal"
	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/settle/chain"
	"github.com/peage/appliance/settle/exact"
	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/usdc"
	"github.com/peage/appliance/settle/x402"
)

// Log keys.
const (
	keyPayment = obs.KeyPayment
	keyPayer   = obs.KeyPayer
	keyRoute   = obs.KeyRoute
	keyReason  = obs.KeyReason
	keyTx      = obs.KeyTx
	keyErr     = obs.KeyErr
	keyCount   = obs.KeyCount
	keyStatus  = obs.KeyStatus
	keyPath    = obs.KeyPath
)

// Options build a Facilitator.
type Options struct {
	Network      string // CAIP-2, e.g. eip155:8453
	Asset        common.Address
	TokenName    string
	TokenVersion string
	PayTo        common.Address
	Backend      chain.Backend
	HotKey       *ecdsa.PrivateKey
	LedgerDir    string
	LedgerSync   journal.Sync
	// ExposureCap is the most a payer may owe for delivered, unsettled optimistic calls (atomic
	// units); past it, optimistic completions settle synchronously.
	ExposureCap uint64
	// TotalExposureCap bounds the same across all payers, so fresh wallets cannot add up past
	// what the operator is willing to have outstanding [10 × ExposureCap].
	TotalExposureCap uint64
	// SettleMargin is how long an authorization must stay valid after delivery for the queue
	// to settle it; it is added to the route's deadline when the payment is reserved [30 s].
	SettleMargin time.Duration
	Sender       chain.SenderOptions
	// SettleConcurrency bounds the queue's settlements in flight, each from its broadcast to its
	// receipt (settle.settlements_in_flight) [DefaultSettlementsInFlight].
	SettleConcurrency int
	Now               func() time.Time
	Logger            *slog.Logger
	// ReceiverAuthorizer signs batch-settlement claims and refunds; nil leaves the scheme off.
	ReceiverAuthorizer *ecdsa.PrivateKey
	// Claim is the batch-settlement claimer's policy (claimer.go).
	Claim ClaimPolicy
	// OnBroadcast, when set, is told each transaction hash right after it was broadcast
	// (observability; the crash tests use it to kill the process at that point).
	OnBroadcast func(id string, tx common.Hash)
	// OnReceipt, when set, is told each batch-settlement transaction's receipt (its kind,
	// ledger.Spend*) once its gas is journaled, before anything else is written (the crash
	// tests kill the process there).
	OnReceipt func(kind string, tx common.Hash)
	// Remote, when set, is a standard x402 facilitator (payment.facilitator_url) that verifies
	// and settles in this daemon's stead; the ledger, reservations, caps and queue stay here
	// (remote.go). The hot key then pays no gas.
	Remote Remote
	// ViewPoll is how often the channel view reads the settlement contract's logs (view.go)
	// [DefaultViewPoll]; negative: never in the background (tests call syncView).
	ViewPoll time.Duration
	// ViewLag is how long after its last poll the channel view is trusted [DefaultViewLag]; it
	// must stay far below the withdrawal delay (15 minutes at least).
	ViewLag time.Duration
}

// Facilitator verifies and settles payments. It is safe for concurrent use.
type Facilitator struct {
	o        Options
	log      *slog.Logger
	verifier *exact.Verifier
	reader   chain.Reader
	sender   *chain.Sender
	ledger   *ledger.Ledger
	channels *ledger.Channels
	spends   *ledger.Spends // batch-settlement transactions' gas
	claimer  claimerState
	view     *channelView
	payers   *payerView // the exact scheme's (payerview.go)
	assetHex string     // o.Asset checksummed, as the ledger records it

	// life ends when Close begins: the background work's context (the queue, the claimer, the
	// waits on batch transactions sent again).
	life  context.Context
	waits txWaits
	locks sync.Map // payment id → *sync.Mutex: one settlement per payment at a time
	kick  chan struct{}
	stop  context.CancelFunc
	done  chan struct{}
	sem   chan struct{}
	wg    sync.WaitGroup
}

// New opens the ledger, checks the token's EIP-712 domain against the chain, and starts the
// settlement queue, which first reconciles what the ledger says was in flight.
func New(ctx context.Context, o Options) (*Facilitator, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.SettleConcurrency <= 0 {
		o.SettleConcurrency = DefaultSettlementsInFlight
	}
	if o.TotalExposureCap == 0 {
		o.TotalExposureCap = 10 * o.ExposureCap
	}
	if o.SettleMargin <= 0 {
		o.SettleMargin = DefaultSettleMargin
	}
	if o.ViewPoll == 0 {
		o.ViewPoll = DefaultViewPoll
	}
	if o.ViewLag <= 0 {
		o.ViewLag = DefaultViewLag
	}
	if _, err := x402.ChainID(o.Network); err != nil {
		return nil, err
	}
	o.Sender.Logger = o.Logger
	sender, err := chain.NewSender(ctx, o.Backend, o.HotKey, o.Sender)
	if err != nil {
		return nil, err
	}
	want, _ := x402.ChainID(o.Network)
	if sender.ChainID().Uint64() != want {
		return nil, fmt.Errorf("settle: RPC is on chain %s but the network is %s", sender.ChainID(), o.Network)
	}
	f := &Facilitator{o: o, log: o.Logger, reader: chain.Reader{B: o.Backend}, sender: sender,
		kick: make(chan struct{}, 1), done: make(chan struct{}), sem: make(chan struct{}, o.SettleConcurrency), view: newChannelView(),
		payers: newPayerView(), assetHex: o.Asset.Hex()}
	if err := f.checkDomain(ctx); err != nil {
		return nil, err
	}
	f.ledger, err = ledger.Open(ledger.Options{Dir: o.LedgerDir, Sync: o.LedgerSync, Now: o.Now, Logger: o.Logger})
	if err != nil {
		return nil, err
	}
	f.channels, err = ledger.OpenChannels(ledger.ChannelOptions{Dir: o.LedgerDir, Sync: o.LedgerSync, Now: o.Now, Logger: o.Logger, Expired: f.holdExpired})
	if err != nil {
		_ = f.ledger.Close()
		return nil, err
	}
	f.spends, err = ledger.OpenSpends(o.LedgerDir, o.LedgerSync, o.Logger)
	if err != nil {
		_ = f.channels.Close()
		_ = f.ledger.Close()
		return nil, err
	}
	f.verifier = &exact.Verifier{Reader: f.reader, Now: o.Now, ValidBeforeMargin: 6 * time.Second, Skew: 5 * time.Second}
	// Reservations whose work was running when the process died never produced an answer:
	// give their nonces back so the payer is not charged.
	for _, r := range f.ledger.List(ledger.Reserved) {
		if _, err := f.ledger.Update(r.ID, func(r *ledger.Record) error { r.Status = ledger.Released; return nil }); err != nil {
			_ = f.spends.Close()
			_ = f.channels.Close()
			_ = f.ledger.Close()
			return nil, err
		}
		f.log.Info("released reservation of an interrupted call", keyPayment, r.ID)
	}
	qctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	f.stop, f.life = cancel, qctx
	go f.queue(qctx)
	if o.Claim.Interval > 0 && f.BatchEnabled() {
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			f.claimLoop(qctx, o.Claim)
		}()
	}
	if o.ViewPoll > 0 {
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			f.pollEvery(qctx, o.ViewPoll, f.pollPayers, "payer view not updated; exact payments read the chain")
		}()
	}
	if o.ViewPoll > 0 && f.BatchEnabled() {
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			f.pollEvery(qctx, o.ViewPoll, f.syncView, "channel view not updated; vouchers read the chain")
		}()
	}
	f.wake()
	return f, nil
}

// checkDomain compares the configured EIP-712 domain with the token's own separator: a wrong
// name or version gives signatures that never recover, which must fail at start, not per call.
func (f *Facilitator) checkDomain(ctx context.Context) error {
	tok := usdc.NewTestUSDC()
	out, err := f.o.Backend.CallContract(ctx, callMsg(f.o.Asset, tok.PackDOMAINSEPARATOR()), nil)
	if err != nil {
		return fmt.Errorf("settle: read DOMAIN_SEPARATOR of %s: %w", f.o.Asset.Hex(), err)
	}
	got, err := tok.UnpackDOMAINSEPARATOR(out)
	if err != nil {
		return fmt.Errorf("settle: %s has no DOMAIN_SEPARATOR: %w", f.o.Asset.Hex(), err)
	}
	d := f.domain()
	if common.Hash(got) != d.Separator() {
		return fmt.Errorf("settle: token %s EIP-712 domain is not name=%q version=%q on chain %d", f.o.Asset.Hex(), d.Name, d.Version, d.ChainID)
	}
	return nil
}

func (f *Facilitator) domain() exact.Domain {
	id, _ := x402.ChainID(f.o.Network)
	return exact.Domain{Name: f.o.TokenName, Version: f.o.TokenVersion, ChainID: id, Contract: f.o.Asset}
}

// Close stops the queue (in-flight settlements finish) and closes the ledger.
func (f *Facilitator) Close() error {
	f.stop()
	f.waits.close()
	<-f.done
	f.wg.Wait()
	return errors.Join(f.spends.Close(), f.channels.Close(), f.ledger.Close())
}

// Channels is the journaled batch-settlement channel store.
func (f *Facilitator) Channels() *ledger.Channels { return f.channels }

// Ledger exposes the ledger for reporting.
func (f *Facilitator) Ledger() *ledger.Ledger { return f.ledger }

// LedgerFsyncs counts the fsyncs of the facilitator's journals (payments, channels, batch
// transactions) so far.
func (f *Facilitator) LedgerFsyncs() uint64 {
	return f.ledger.Fsyncs() + f.channels.Fsyncs() + f.spends.Fsyncs()
}

// Signer is the hot key's address.
func (f *Facilitator) Signer() common.Address { return f.sender.Address() }

// Supported answers GET /supported.
func (f *Facilitator) Supported() x402.SupportedResponse {
	kinds := []x402.SupportedKind{{X402Version: 2, Scheme: x402.SchemeExact, Network: f.o.Network}}
	if v1 := x402.V1Network(f.o.Network); v1 != f.o.Network {
		kinds = append(kinds, x402.SupportedKind{X402Version: 1, Scheme: x402.SchemeExact, Network: v1})
	}
	if f.BatchEnabled() {
		kinds = append(kinds, x402.SupportedKind{X402Version: 2, Scheme: x402.SchemeBatchSettlement, Network: f.o.Network,
			Extra: map[string]any{"receiverAuthorizer": f.ReceiverAuthorizer().Hex()}})
	}
	return x402.SupportedResponse{Kinds: kinds, Extensions: []string{}, Signers: map[string][]string{"eip155:*": {f.sender.Address().Hex()}}}
}

// ours refuses requirements that would pay anyone or anything else than this facilitator is
// configured for: a compromised or misconfigured API cannot redirect the money.
func (f *Facilitator) ours(r *x402.FacilitatorRequirements) *exact.Invalid {
	switch {
	case x402.CAIP2(r.Network) != f.o.Network:
		return &exact.Invalid{Reason: x402.ReasonInvalidNetwork, Detail: "this facilitator settles on " + f.o.Network}
	case !common.IsHexAddress(r.Asset) || common.HexToAddress(r.Asset) != f.o.Asset:
		return &exact.Invalid{Reason: x402.ReasonInvalidRequirements, Detail: "this facilitator settles " + f.o.Asset.Hex()}
	case !common.IsHexAddress(r.PayTo) || common.HexToAddress(r.PayTo) != f.o.PayTo:
		return &exact.Invalid{Reason: x402.ReasonRecipientMismatch, Detail: "this facilitator pays " + f.o.PayTo.Hex()}
	case r.Extra == nil || r.Extra.Name != f.o.TokenName || r.Extra.Version != f.o.TokenVersion:
		return &exact.Invalid{Reason: x402.ReasonMissingDomain, Detail: "EIP-712 domain differs from the token's"}
	}
	return nil
}

func (f *Facilitator) verify(ctx context.Context, rd exact.Reader, req *x402.FacilitatorRequest) (*exact.Payment, *exact.Invalid, error) {
	if bad := f.ours(&req.PaymentRequirements); bad != nil {
		return nil, bad, nil
	}
	return f.verifier.VerifyOn(ctx, rd, &req.PaymentPayload, &req.PaymentRequirements)
}

func invalidResponse(bad *exact.Invalid) x402.VerifyResponse {
	return x402.VerifyResponse{IsValid: false, InvalidReason: bad.Reason, Payer: bad.Payer}
}

// Verify answers POST /verify. A chain read failure is an error (the caller answers 5xx/503),
// never a verdict.
func (f *Facilitator) Verify(ctx context.Context, req *x402.FacilitatorRequest) (x402.VerifyResponse, error) {
	pay, bad, err := f.verify(ctx, f.reader, req)
	if err != nil {
		return x402.VerifyResponse{}, err
	}
	if bad != nil {
		return invalidResponse(bad), nil
	}
	if f.ledger.Used(ledger.ID(pay.Payer(), pay.Auth.Nonce.Hex())) {
		return x402.VerifyResponse{InvalidReason: x402.ReasonNonceUsed, Payer: pay.Payer()}, nil
	}
	return x402.VerifyResponse{IsValid: true, Payer: pay.Payer()}, nil
}

// DefaultSettlementsInFlight is how many optimistic settlements the queue has between
// broadcast and receipt at once. Under load each holds its place for a block and the poll
// that sees it, so the queue settles about this many a block: 64 is some 25 exact calls a
// second on Base (1.4% of a block's gas), where 8 was 3 to 4. Their waits share one read of
// the head a poll and ask for their receipts once a block, not once a poll (docs/gas.md,
// "Settlements in flight", with what the bound relies on in the transaction pool).
const DefaultSettlementsInFlight = 64

// MaxSettlementsInFlight bounds settle.settlements_in_flight: past it the hot key's account
// would hold more than a fifth of a default geth pool's pending slots (5,120), and a full
// pool evicts such accounts first.
const MaxSettlementsInFlight = 1024

// DefaultSettleMargin is how long an authorization must outlive delivery by default: the
// queue's first attempt, a replacement after a stuck block, and the receipt fit in it.
const DefaultSettleMargin = 30 * time.Second

// Reserve verifies a payment and claims its nonce durably for one request, atomically with
// the payer's balance covering everything the payer has reserved or owes. Nothing in the
// payload is trusted before verification: the only way to get a replay (the receipt of a
// payment already taken) is the payment identifier, a secret of the caller's that never goes
// on chain, together with the very same payload and request.
func (f *Facilitator) Reserve(ctx context.Context, req *x402.ReserveRequest) (x402.ReserveResponse, error) {
	if req.IdentifierHash != "" {
		if rec, ok := f.ledger.ByIdentifier(req.IdentifierHash); ok {
			return f.identified(rec, req), nil
		}
	}
	// The reads go through the payer view, which follows the nonce from its read until the
	// call is over; a reservation that is not made forgets it.
	reserved := false
	if id := paymentID(&req.PaymentPayload); id != "" {
		defer func() {
			if !reserved {
				f.payers.unwatch(watchKeyOf(id))
			}
		}()
	}
	rd := &payerReads{f: f}
	pay, bad, err := f.verify(ctx, rd, &req.FacilitatorRequest)
	if err == nil && bad != nil && bad.Reason == x402.ReasonInsufficientFunds && rd.viewBalance {
		// The view does not follow Transfers to the payer: a balance it finds short is read
		// at the latest block before the payment is refused.
		pay, bad, err = f.verify(ctx, f.reader, &req.FacilitatorRequest)
	}
	if err != nil {
		return x402.ReserveResponse{}, err
	}
	if bad != nil {
		return x402.ReserveResponse{VerifyResponse: invalidResponse(bad)}, nil
	}
	payer := pay.Payer() // a checksummed address costs a hash: made once
	refuse := func(reason string) (x402.ReserveResponse, error) {
		return x402.ReserveResponse{VerifyResponse: x402.VerifyResponse{InvalidReason: reason, Payer: payer}}, nil
	}
	if !pay.Auth.Value.IsUint64() || !pay.Auth.ValidBefore.IsInt64() {
		return refuse(x402.ReasonInvalidPayload)
	}
	needed := f.o.Now().Add(time.Duration(req.WorkSeconds)*time.Second + f.o.SettleMargin)
	if pay.Auth.ValidBefore.Int64() < needed.Unix() {
		return refuse(x402.ReasonValidBefore)
	}
	if f.o.Remote != nil {
		// The remote facilitator judges too: a payment it would not verify it will not settle.
		v, err := f.o.Remote.Verify(ctx, &req.FacilitatorRequest)
		if err != nil {
			return x402.ReserveResponse{}, fmt.Errorf("remote facilitator: %w", err)
		}
		if !v.IsValid {
			return refuse(v.InvalidReason)
		}
	}
	balance := uint64(math.MaxUint64)
	if pay.Balance.IsUint64() {
		balance = pay.Balance.Uint64()
	}
	// Reservations of calls never answered (a resource server that died) no longer count
	// against the payer's balance once their lease has run out.
	f.expireLeases()
	rec := ledger.Record{
		ID: ledger.ID(payer, pay.Auth.Nonce.Hex()), Payer: payer, Nonce: pay.Auth.Nonce.Hex(),
		Route: req.Route, RequestHash: req.Key, Amount: pay.Auth.Value.Uint64(), Network: f.o.Network,
		Asset: f.assetHex, ValidBefore: pay.Auth.ValidBefore.Int64(), Request: req.FacilitatorRequest,
		IdentifierHash: req.IdentifierHash, PayloadHash: req.PayloadHash, Wallet: !pay.Recovered,
		LeaseUntil: f.o.Now().Add(time.Duration(max(req.WorkSeconds, 0))*time.Second + f.o.SettleMargin).UTC(),
	}
	got, err := f.ledger.Reserve(rec, balance)
	if errors.Is(err, ledger.ErrInsufficient) && rd.viewBalance {
		if bal, rerr := f.reader.BalanceOf(ctx, f.o.Asset, pay.Auth.From); rerr == nil && bal.Cmp(pay.Balance) > 0 {
			balance = uint64(math.MaxUint64)
			if bal.IsUint64() {
				balance = bal.Uint64()
			}
			got, err = f.ledger.Reserve(rec, balance)
		}
	}
	switch {
	case errors.Is(err, ledger.ErrExists):
		return refuse(x402.ReasonNonceUsed)
	case errors.Is(err, ledger.ErrIdentifierUsed):
		return f.identified(got, req), nil
	case errors.Is(err, ledger.ErrInsufficient):
		return refuse(x402.ReasonInsufficientFunds)
	case err != nil:
		return x402.ReserveResponse{}, err
	}
	reserved = true
	return x402.ReserveResponse{VerifyResponse: x402.VerifyResponse{IsValid: true, Payer: payer}, ID: got.ID}, nil
}

// identified answers a reservation whose payment identifier the ledger already holds: the
// same payload for the same request gets the payment's receipt (a replay), anything else is a
// conflict.
func (f *Facilitator) identified(rec ledger.Record, req *x402.ReserveRequest) x402.ReserveResponse {
	res := x402.ReserveResponse{VerifyResponse: x402.VerifyResponse{Payer: rec.Payer}}
	switch {
	case rec.PayloadHash != req.PayloadHash || rec.RequestHash != req.Key:
		res.Conflict, res.InvalidReason = true, x402.ReasonIdentifierConflict
	case rec.Status == ledger.Reserved:
		res.Conflict, res.InvalidReason = true, x402.ReasonInProgress
	case rec.Status == ledger.Failed:
		res.InvalidReason = f.receipt(rec).ErrorReason
	default:
		s := f.receipt(rec)
		res.Replay, res.ID = &s, rec.ID
	}
	return res
}

func paymentID(p *x402.PaymentPayload) string {
	a := p.Payload.Authorization
	if !common.IsHexAddress(a.From) || len(a.Nonce) != 66 {
		return ""
	}
	return ledger.ID(common.HexToAddress(a.From).Hex(), a.Nonce)
}

// Release gives a reservation back: the work failed and nothing is charged.
func (f *Facilitator) Release(_ context.Context, id string) error {
	defer f.payers.unwatch(watchKeyOf(id))
	_, err := f.ledger.Update(id, func(r *ledger.Record) error {
		if r.Status != ledger.Reserved {
			return fmt.Errorf("%w: payment %s is %s, not reserved", ErrState, id, r.Status)
		}
		r.Status = ledger.Released
		return nil
	})
	return err
}

// ErrState is a call that does not fit the payment's current status.
var ErrState = errors.New("settle: payment is not in a state for this")

// Complete settles a reserved payment whose work succeeded. Optimistic completion queues it
// durably and answers at once, only while the payment is still collectable (nonce unused on
// chain, balance covering what the payer owes, the authorization valid for the settle margin,
// a plain ECDSA signer) and within the exposure caps; anything else settles now, and a
// synchronous settlement that could not even be sent releases the payment (nothing owed).
// Only a successful receipt means the result may be delivered.
func (f *Facilitator) Complete(ctx context.Context, id, mode string) (x402.SettlementResponse, error) {
	rec, ok := f.ledger.Get(id)
	if !ok {
		return x402.SettlementResponse{}, ledger.ErrUnknown
	}
	defer f.payers.unwatch(watchKeyOf(id))
	switch rec.Status {
	case ledger.Reserved:
		// From here the reservation's lease no longer runs: its completion is under way.
		if err := f.ledger.Completing(id); err != nil {
			if errors.Is(err, ledger.ErrLeaseExpired) {
				return x402.SettlementResponse{}, fmt.Errorf("%w: payment %s: %v", ErrState, id, err)
			}
			return x402.SettlementResponse{}, err
		}
		defer f.ledger.Completed(id)
		if err := f.recordBox(id, x402.BoxOf(ctx)); err != nil {
			return x402.SettlementResponse{}, err
		}
	case ledger.Released:
		return x402.SettlementResponse{}, fmt.Errorf("%w: payment %s was released", ErrState, id)
	default:
		return f.receipt(rec), nil // a repeated completion: answer what the first one got
	}
	if mode == x402.ModeOptimistic && f.collectable(ctx, rec) {
		if owed, err := f.ledger.Owe(id, f.o.ExposureCap, f.o.TotalExposureCap); err == nil {
			f.wake()
			return f.receipt(owed), nil
		}
	}
	if cur, _ := f.ledger.Get(id); cur.Status == ledger.Failed {
		return f.receipt(cur), nil
	}
	if _, err := f.ledger.Update(id, func(r *ledger.Record) error {
		if r.Status != ledger.Reserved {
			return fmt.Errorf("%w: payment %s is %s, not reserved", ErrState, id, r.Status)
		}
		r.Status = ledger.Queued
		return nil
	}); err != nil {
		return x402.SettlementResponse{}, err
	}
	return f.settleNow(ctx, id), nil
}

// recordBox notes on a reserved payment the fleet box that served its call (WithBox); a call
// the appliance served itself costs no write.
func (f *Facilitator) recordBox(id, box string) error {
	if box == "" {
		return nil
	}
	_, err := f.ledger.Update(id, func(r *ledger.Record) error {
		if r.Status != ledger.Reserved {
			return fmt.Errorf("%w: payment %s is %s, not reserved", ErrState, id, r.Status)
		}
		r.Box = box
		return nil
	})
	return err
}

// collectable re-checks, just before optimistic delivery, what could have changed since the
// reservation: a payment that fails here is marked failed (the nonce was used or cancelled on
// chain) or goes the synchronous way (anything uncertain).
func (f *Facilitator) collectable(ctx context.Context, rec ledger.Record) bool {
	if rec.Wallet || time.Unix(rec.ValidBefore, 0).Before(f.o.Now().Add(f.o.SettleMargin)) {
		return false
	}
	if ok, decided := f.collectableFromView(ctx, &rec); decided {
		return ok
	}
	payer, nonce := common.HexToAddress(rec.Payer), common.HexToHash(rec.Nonce)
	// Two reads in parallel: on a remote RPC each is a round trip on the optimistic path.
	var bal *big.Int
	var balErr error
	read := make(chan struct{})
	go func() {
		defer close(read)
		bal, balErr = f.reader.BalanceOf(ctx, f.o.Asset, payer)
	}()
	used, err := f.reader.AuthorizationState(ctx, f.o.Asset, payer, nonce)
	<-read
	if err != nil {
		return false
	}
	if used {
		if _, err := f.fail(rec.ID, x402.ReasonNonceUsed); err != nil {
			f.log.Error("ledger update failed", keyPayment, rec.ID, keyErr, err)
		}
		return false
	}
	return balErr == nil && (!bal.IsUint64() || bal.Uint64() >= f.ledger.Open(rec.Payer))
}

// settleNow settles a payment before its result is delivered. A payment still queued after the
// attempt was never broadcast (the chain could not be reached): it is released, so the caller
// may refuse delivery knowing nothing will be charged.
func (f *Facilitator) settleNow(ctx context.Context, id string) x402.SettlementResponse {
	unlock := f.lock(id)
	defer unlock()
	out := f.settleLocked(ctx, id)
	if cur, _ := f.ledger.Get(id); cur.Status == ledger.Queued {
		if _, err := f.ledger.Update(id, func(r *ledger.Record) error { r.Status = ledger.Released; return nil }); err != nil {
			f.log.Error("ledger update failed", keyPayment, id, keyErr, err)
			return out
		}
		return x402.SettlementResponse{ErrorReason: ReasonNotSent, Payer: cur.Payer, Network: f.o.Network}
	}
	return out
}

// ReasonNotSent: the settlement transaction could not be sent; the payment was released.
const ReasonNotSent = x402.ReasonSettlementNotSent

// Abort records that a completed call's result was not delivered: a payment not yet broadcast
// is released (nothing will be charged); one already broadcast or settled is marked
// undelivered, for the operator to refund. It answers the payment's receipt as it stands, so
// a caller that finds it settled after all may deliver.
func (f *Facilitator) Abort(_ context.Context, id string) (x402.SettlementResponse, error) {
	defer f.payers.unwatch(watchKeyOf(id))
	unlock := f.lock(id)
	defer unlock()
	rec, err := f.ledger.Update(id, func(r *ledger.Record) error {
		switch r.Status {
		case ledger.Reserved, ledger.Queued:
			r.Status = ledger.Released
		case ledger.Broadcast:
			r.Undelivered = true
		}
		return nil
	})
	if err != nil {
		return x402.SettlementResponse{}, err
	}
	if rec.Status == ledger.Released {
		return x402.SettlementResponse{ErrorReason: ReasonNotSent, Payer: rec.Payer, Network: f.o.Network}, nil
	}
	return f.receipt(rec), nil
}

// Settle answers the standard POST /settle: verify, record, broadcast, wait. It is idempotent
// on the payment: the very same payload settled here before gets the first outcome instead
// of a revert (the caller is the resource server on the facilitator's socket, and what it gets
// back is a receipt, not a result).
func (f *Facilitator) Settle(ctx context.Context, req *x402.FacilitatorRequest) (x402.SettlementResponse, error) {
	key, payload := "settle:"+paymentID(&req.PaymentPayload), x402.HashPayload(&req.PaymentPayload)
	if rec, ok := f.ledger.Get(paymentID(&req.PaymentPayload)); ok && rec.Status != ledger.Released && rec.RequestHash == key && rec.PayloadHash == payload {
		return f.receipt(rec), nil
	}
	res, err := f.Reserve(ctx, &x402.ReserveRequest{FacilitatorRequest: *req, Key: key, PayloadHash: payload})
	if err != nil {
		return x402.SettlementResponse{}, err
	}
	if !res.IsValid {
		return x402.SettlementResponse{ErrorReason: res.InvalidReason, Payer: res.Payer, Network: f.o.Network}, nil
	}
	return f.Complete(ctx, res.ID, x402.ModeSync)
}

// receipt is the SettlementResponse for a record as it stands.
func (f *Facilitator) receipt(r ledger.Record) x402.SettlementResponse {
	s := x402.SettlementResponse{Payer: r.Payer, Network: r.Network, Amount: strconv.FormatUint(r.Amount, 10)}
	switch r.Status {
	case ledger.Settled:
		s.Success, s.Transaction = true, r.Tx
	case ledger.Queued:
		// Optimistic: the work was delivered against a verified authorization that the queue
		// settles; the transaction hash is not known yet.
		s.Success = true
	case ledger.Broadcast:
		s.ErrorReason = x402.ReasonSettlementPending
		if n := len(r.TxHashes); n > 0 {
			s.Transaction = r.TxHashes[n-1]
		}
	default:
		s.ErrorReason = r.Reason
		if s.ErrorReason == "" {
			s.ErrorReason = x402.ReasonTransactionState
		}
	}
	return s
}

func (f *Facilitator) lock(id string) func() {
	m, _ := f.locks.LoadOrStore(id, new(sync.Mutex))
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// settle brings one queued or broadcast payment to a final state (or leaves it broadcast when
// no receipt came in time) and returns its receipt.
func (f *Facilitator) settle(ctx context.Context, id string) x402.SettlementResponse {
	unlock := f.lock(id)
	defer unlock()
	return f.settleLocked(ctx, id)
}

func (f *Facilitator) settleLocked(ctx context.Context, id string) x402.SettlementResponse {
	rec, ok := f.ledger.Get(id)
	if !ok {
		return x402.SettlementResponse{ErrorReason: x402.ReasonTransactionState, Network: f.o.Network}
	}
	if rec.Status != ledger.Queued && rec.Status != ledger.Broadcast {
		return f.receipt(rec)
	}
	out, err := f.drive(ctx, rec)
	if err != nil {
		f.log.Warn("settlement not finished", keyPayment, id, keyErr, err)
	}
	return f.receipt(out)
}

func (f *Facilitator) fail(id, reason string) (ledger.Record, error) {
	return f.ledger.Update(id, func(r *ledger.Record) error {
		r.Status, r.Reason = ledger.Failed, reason
		return nil
	})
}

func (f *Facilitator) drive(ctx context.Context, rec ledger.Record) (ledger.Record, error) {
	if f.o.Remote != nil {
		return f.driveRemote(ctx, rec)
	}
	// Verified when reserved: its signer is not recovered again (rec.Wallet says which kind).
	pay, bad := f.verifier.Recheck(&rec.Request.PaymentPayload, &rec.Request.PaymentRequirements, !rec.Wallet)
	if bad != nil && bad.Reason != x402.ReasonValidBefore {
		return f.fail(rec.ID, bad.Reason)
	}
	if pay == nil { // only the validity margin failed: the chain decides whether it is too late
		a, sig, perr := exactParse(&rec.Request.PaymentPayload)
		if perr != nil {
			return f.fail(rec.ID, x402.ReasonInvalidPayload)
		}
		pay = &exact.Payment{Auth: *a, Signature: sig}
	}
	// Anything already broadcast: a receipt settles it; otherwise the chain's nonce state says
	// whether to wait for it or send it again.
	if rec.Status == ledger.Broadcast {
		if r, done, err := f.findReceipt(ctx, rec); done || err != nil {
			return r, err
		}
	}
	call := chain.Call{To: f.o.Asset, Data: transferCall(pay)}
	record := func(tx *types.Transaction) error {
		raw, err := tx.MarshalBinary()
		if err != nil {
			return err
		}
		_, err = f.ledger.Update(rec.ID, func(r *ledger.Record) error {
			r.Status = ledger.Broadcast
			r.TxHashes = append(r.TxHashes, tx.Hash().Hex())
			r.RawTx = hexutil.Encode(raw)
			return nil
		})
		return err
	}
	var tx *types.Transaction
	if rec.Status == ledger.Broadcast && rec.RawTx != "" {
		// Re-broadcast exactly what was signed before the restart (same hash, same account nonce).
		tx = new(types.Transaction)
		if err := tx.UnmarshalBinary(hexutil.MustDecode(rec.RawTx)); err == nil {
			if err := f.o.Backend.SendTransaction(ctx, tx); err != nil && !alreadyKnown(err) {
				tx = nil
			}
		} else {
			tx = nil
		}
	}
	if tx == nil {
		gas, err := f.sender.Estimate(ctx, call)
		var rev *chain.RevertError
		if errors.As(err, &rev) {
			return f.diagnose(ctx, rec, pay)
		}
		if err != nil {
			return rec, err
		}
		tx, err = f.sender.Send(ctx, call, gas, record)
		if err != nil {
			return rec, err
		}
	}
	if f.o.OnBroadcast != nil {
		f.o.OnBroadcast(rec.ID, tx.Hash())
	}
	receipt, err := f.sender.Wait(ctx, tx, record)
	var pending *chain.PendingError
	if errors.As(err, &pending) {
		cur, _ := f.ledger.Get(rec.ID)
		return cur, err
	}
	if err != nil {
		return rec, err
	}
	return f.final(rec.ID, receipt)
}

func alreadyKnown(err error) bool {
	s := err.Error()
	return strings.Contains(s, "already known") || strings.Contains(s, "known transaction")
}

func (f *Facilitator) final(id string, receipt *types.Receipt) (ledger.Record, error) {
	return f.ledger.Update(id, func(r *ledger.Record) error {
		if receipt.EffectiveGasPrice != nil {
			r.GasWei = new(big.Int).Mul(new(big.Int).SetUint64(receipt.GasUsed), receipt.EffectiveGasPrice).String()
			r.GasUsed = receipt.GasUsed
		}
		if receipt.Status == types.ReceiptStatusSuccessful {
			r.Status, r.Tx, r.Reason = ledger.Settled, receipt.TxHash.Hex(), ""
		} else {
			r.Status, r.Tx, r.Reason = ledger.Failed, receipt.TxHash.Hex(), x402.ReasonTransactionFailed
		}
		return nil
	})
}

// findReceipt looks for a mined receipt of any transaction the record broadcast.
func (f *Facilitator) findReceipt(ctx context.Context, rec ledger.Record) (ledger.Record, bool, error) {
	for _, h := range rec.TxHashes {
		r, err := f.o.Backend.TransactionReceipt(ctx, common.HexToHash(h))
		if err == nil && r != nil {
			out, err := f.final(rec.ID, r)
			return out, true, err
		}
	}
	return rec, false, nil
}

// diagnose explains a transfer the chain refuses to simulate.
func (f *Facilitator) diagnose(ctx context.Context, rec ledger.Record, pay *exact.Payment) (ledger.Record, error) {
	used, err := f.reader.AuthorizationState(ctx, f.o.Asset, pay.Auth.From, pay.Auth.Nonce)
	if err != nil {
		return rec, err
	}
	if used {
		// Someone else submitted (or the payer cancelled) this authorization; none of our
		// transactions carries it, so there is no revenue of ours to claim.
		f.log.Warn("authorization used outside this facilitator", keyPayment, rec.ID)
		return f.fail(rec.ID, x402.ReasonNonceUsed)
	}
	if time.Unix(rec.ValidBefore, 0).Before(f.o.Now()) {
		return f.fail(rec.ID, x402.ReasonValidBefore)
	}
	bal, err := f.reader.BalanceOf(ctx, f.o.Asset, pay.Auth.From)
	if err != nil {
		return rec, err
	}
	if bal.Cmp(pay.Auth.Value) < 0 {
		return f.fail(rec.ID, x402.ReasonInsufficientFunds)
	}
	return f.fail(rec.ID, "invalid_exact_evm_transaction_simulation_failed")
}

// transferCall encodes transferWithAuthorization: the v,r,s overload for a 65-byte ECDSA
// signature, the bytes overload (ERC-1271 wallets) otherwise.
func transferCall(p *exact.Payment) []byte {
	a, tok := &p.Auth, usdc.NewTestUSDC()
	if p.Recovered && len(p.Signature) == 65 {
		v := p.Signature[64]
		if v < 27 {
			v += 27
		}
		return tok.PackTransferWithAuthorization0(a.From, a.To, a.Value, a.ValidAfter, a.ValidBefore, a.Nonce, v,
			[32]byte(p.Signature[:32]), [32]byte(p.Signature[32:64]))
	}
	return tok.PackTransferWithAuthorization(a.From, a.To, a.Value, a.ValidAfter, a.ValidBefore, a.Nonce, p.Signature)
}

func exactParse(p *x402.PaymentPayload) (*exact.Authorization, []byte, error) {
	return exact.Parse(&p.Payload)
}

// wake nudges the queue.
func (f *Facilitator) wake() {
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

// queue settles queued payments and keeps looking at broadcast ones until they are final.
func (f *Facilitator) queue(ctx context.Context) {
	defer close(f.done)
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	busy := sync.Map{}
	for {
		for _, r := range f.ledger.List(ledger.Queued, ledger.Broadcast) {
			if _, running := busy.LoadOrStore(r.ID, true); running {
				continue
			}
			select {
			case f.sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			f.wg.Add(1)
			go func(id string) {
				defer func() { <-f.sem; busy.Delete(id); f.wg.Done() }()
				res := f.settle(ctx, id)
				if res.Success {
					f.log.Info("settled", keyPayment, id, keyTx, res.Transaction)
				}
			}(r.ID)
		}
		select {
		case <-ctx.Done():
			return
		case <-f.kick:
		case <-tick.C:
			f.expireLeases()
			f.channels.Expire()
			if f.ledger.Size() > compactAbove {
				if err := f.ledger.Compact(); err != nil {
					f.log.Error("ledger compaction failed", keyErr, err)
				}
			}
		}
	}
}

// expireLeases releases the reservations whose lease ran out (their call was never answered).
func (f *Facilitator) expireLeases() {
	expired, err := f.ledger.Expire()
	for _, r := range expired {
		f.payers.unwatch(watchKeyOf(r.ID))
		f.log.Warn("reservation expired: the call was neither completed nor released; nothing charged", keyPayment, r.ID, keyPayer, r.Payer)
	}
	if err != nil {
		f.log.Error("ledger update failed", keyErr, err)
	}
}

// compactAbove is the journal size past which the ledger is rewritten as its current state.
const compactAbove = 64 << 20

// Revenue is the ledger's settled revenue by day and route.
func (f *Facilitator) Revenue() []ledger.RevenueRow { return f.ledger.Revenue() }

// Stats is the settlement queue and the gas spent, for the operator.
func (f *Facilitator) Stats() ledger.Stats { return f.ledger.Stats() }

// OwedTotal is what payers owe for delivered work whose settlement is not yet mined: zero once
// the settlement queue is empty. Unlike Stats it reads no record.
func (f *Facilitator) OwedTotal() uint64 { return f.ledger.OwedTotal() }

// ChannelsReport is batch-settlement for the operator: every channel (as last mirrored), the
// totals, the gas per paid call of both schemes, and the claimer.
func (f *Facilitator) ChannelsReport() ledger.ChannelsReport {
	return ledger.Report(f.BatchEnabled(), f.channels.List(), f.ledger.Stats(), f.spends.ByKind(), f.ClaimerState())
}

func callMsg(to common.Address, data []byte) ethereum.CallMsg {
	return ethereum.CallMsg{To: &to, Data: data}
}
