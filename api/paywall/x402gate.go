package paywall

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/internal/receipt"
	"github.com/peage/appliance/settle/x402"
)

// Facilitator is what the gate needs from the settle daemon (settle/client.Client implements it).
type Facilitator interface {
	Reserve(ctx context.Context, req *x402.ReserveRequest) (x402.ReserveResponse, error)
	Release(ctx context.Context, id string) error
	Complete(ctx context.Context, id, mode string) (x402.SettlementResponse, error)
	Abort(ctx context.Context, id string) (x402.SettlementResponse, error)
}

// Revoker is a result that must be taken back when its payment does not arrive (a proxy
// package issues a key inside the work).
type Revoker interface {
	Revoke(ctx context.Context) error
}

// Policy says when a paid call is settled.
type Policy struct {
	// Settlement is "optimistic" (answer once the payment is verified and the work succeeded;
	// the facilitator settles from its durable queue) or "sync" (answer after the receipt).
	Settlement string `toml:"settlement"`
	// OptimisticMaxPrice: only calls priced at or below this (atomic units) are optimistic;
	// pricier calls, results with a side effect (proxy keys, inboxes, pages) and smart-wallet
	// payments always settle synchronously.
	OptimisticMaxPrice uint64 `toml:"optimistic_max_price"`
	// SettleTimeoutSeconds bounds the wait for a synchronous settlement.
	SettleTimeoutSeconds int `toml:"settle_timeout_seconds"`
	// SettleMarginSeconds: an authorization must stay valid this long past the route's deadline
	// when it is presented, and this long past delivery.
	SettleMarginSeconds int `toml:"settle_margin_seconds"`
	// Facilitator is where payments are verified and settled: empty for the appliance's own
	// settle daemon (its socket), or the URL of a remote standard x402 facilitator.
	Facilitator string `toml:"facilitator"`
}

// DefaultPolicy answers calls up to 0.05 USDC optimistically.
func DefaultPolicy() Policy {
	return Policy{Settlement: x402.ModeOptimistic, OptimisticMaxPrice: 50_000, SettleTimeoutSeconds: 60, SettleMarginSeconds: 30}
}

// HeaderFreeFirstCall carries the free_first_call report ({"granted":bool,"note":string}) of
// calls to FreeFirstCall routes. The gate also merges it into JSON object results itself.
const HeaderFreeFirstCall = "X-Free-First-Call"

// FreeFirstCall is the report the spec shows in results of routes with a free daily call.
type FreeFirstCall struct {
	Granted bool   `json:"granted"`
	Note    string `json:"note"`
}

// X402 is the verifying gate: it reserves the payment through the facilitator before the
// work, releases it when the work fails, and delivers the result only once the payment is
// settled or durably owed.
type X402 struct {
	cfg    Config
	policy Policy
	f      Facilitator
	log    *slog.Logger
	now    func() time.Time

	replay   *replayCache
	free     FreeCalls
	receipts *receipt.Keyring // nil: paid answers carry no signed receipt

	mu      sync.Mutex
	flights map[string]*flight // payment identifier hash → the call using it right now
}

// flight is a paid call in progress under a payment identifier; a retry with the same
// identifier, payload and request waits for it and gets its answer, instead of a refusal that
// would push the client to pay again.
type flight struct {
	identity
	done chan struct{}
	out  any
	hdr  map[string]string
	ok   bool // delivered: out and hdr are the answer
}

// identity binds a payment to its caller: the hashed payment identifier (a secret of the
// caller's, never on chain), the payload and the request it pays for.
type identity struct {
	id, payload, key string
}

func (a identity) same(b identity) bool { return a.payload == b.payload && a.key == b.key }

// GateOptions are optional knobs of New.
type GateOptions struct {
	Logger *slog.Logger
	Now    func() time.Time
	// ReplayTTL is how long a delivered result is kept for a retry with its identifier [15m].
	ReplayTTL time.Duration
	// FreeCalls records the daily free calls [MemoryFreeCalls].
	FreeCalls FreeCalls
	// Receipts signs each paid answer's receipt and delivery statement (nil: none).
	Receipts *receipt.Keyring
}

// New makes the verifying gate.
func New(cfg Config, policy Policy, f Facilitator, o GateOptions) *X402 {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ReplayTTL <= 0 {
		o.ReplayTTL = 15 * time.Minute
	}
	if o.FreeCalls == nil {
		o.FreeCalls = &MemoryFreeCalls{}
	}
	def := DefaultPolicy()
	if policy.SettleTimeoutSeconds <= 0 {
		policy.SettleTimeoutSeconds = def.SettleTimeoutSeconds
	}
	if policy.SettleMarginSeconds <= 0 {
		policy.SettleMarginSeconds = def.SettleMarginSeconds
	}
	return &X402{cfg: cfg, policy: policy, f: f, log: o.Logger, now: o.Now,
		replay:   &replayCache{ttl: o.ReplayTTL, m: map[string]replayEntry{}},
		free:     o.FreeCalls,
		receipts: o.Receipts,
		flights:  map[string]*flight{}}
}

// Log keys.
const (
	keyRoute   = obs.KeyRoute
	keyPayment = obs.KeyPayment
	keyErr     = obs.KeyErr
	keyReason  = obs.KeyReason
)

// Charge implements Gate.
func (g *X402) Charge(ctx context.Context, call *Call, work func(context.Context) (any, error)) (any, map[string]string, error) {
	e := call.Entry
	name, h := call.Payment()
	if h == "" {
		if e.FreeFirstCall {
			return g.freeCall(ctx, call, work)
		}
		return nil, nil, PaymentRequired("")
	}
	v1 := name == x402.HeaderXPayment
	// The header fixes the version, and the decoder the shape of that version: a v2 payload
	// read from PAYMENT-SIGNATURE always carries accepted.
	p, batch, err := x402.DecodePaymentHeaderOrBatch(name, h)
	if err != nil {
		return nil, nil, malformedPayment(err)
	}
	if batch != nil {
		return g.chargeBatch(ctx, call, batch, work)
	}
	pid, err := x402.PaymentIdentifier(p)
	if err != nil {
		return nil, nil, PaymentRequired(x402.ReasonInvalidPayload + ": " + err.Error())
	}
	req, reason := g.facilitatorRequest(call, p, v1)
	if reason != "" {
		return nil, nil, PaymentRequired(reason)
	}
	// An authorization that expires too soon pays for nothing new, but its identifier may hold
	// an answer: a retry after a 503 is told to come back with the same identifier, and the
	// answer is kept 15 minutes, long after the authorization's own minute or two. So the
	// identifier is looked up first (charge), and the validity judged only for a new payment.
	expiring := g.validLongEnough(p, e)
	if pid == "" {
		if expiring != "" {
			return nil, nil, PaymentRequired(expiring)
		}
		return g.charge(ctx, call, req, identity{}, v1, "", work)
	}
	who := identity{id: x402.HashIdentifier(pid), payload: x402.HashPayload(p), key: call.Key}
	fl, err := g.board(ctx, who)
	if err != nil {
		return nil, nil, err
	}
	if fl.ok {
		return fl.out, fl.hdr, nil
	}
	defer g.land(fl)
	if out, hdr, ok := g.replay.get(who, g.now()); ok {
		return out, hdr, nil
	}
	out, hdr, err := g.charge(ctx, call, req, who, v1, expiring, work)
	if err == nil && succeeded(out) {
		fl.out, fl.hdr, fl.ok = out, hdr, true
	}
	return out, hdr, err
}

// malformedPayment is the 402 of a payment header that does not decode: a fresh challenge
// whose error names the fault, as for any payment that cannot be accepted, so the client
// signs again instead of giving up on a 400.
func malformedPayment(err error) *apierr.Error {
	var de *x402.DecodeError
	if errors.As(err, &de) {
		return PaymentRequired(de.Reason + ": the payment header is malformed: " + de.Detail)
	}
	return PaymentRequired(x402.ReasonInvalidPayload + ": the payment header is malformed: " + err.Error())
}

// validLongEnough refuses an authorization that could expire before its settlement: it must
// outlive the route's deadline plus the settlement margin. (The payload is not verified yet;
// a forged validBefore fails the signature check after this.)
func (g *X402) validLongEnough(p *x402.PaymentPayload, e *catalog.Entry) string {
	vb, err := strconv.ParseInt(p.Payload.Authorization.ValidBefore, 10, 64)
	if err != nil {
		return "" // not a number the verifier accepts: it names the fault
	}
	need := g.now().Add(e.Timeout + g.margin())
	if vb < need.Unix() {
		return fmt.Sprintf("%s: the authorization must stay valid until at least %d (the route's %s deadline plus %s to settle); sign it with validBefore = now + maxTimeoutSeconds",
			x402.ReasonValidBefore, need.Unix(), e.Timeout, g.margin())
	}
	return ""
}

func (g *X402) margin() time.Duration {
	return time.Duration(g.policy.SettleMarginSeconds) * time.Second
}

// board registers a call as the user of a payment identifier. When another call uses it now,
// it waits: the same payload and request get that call's answer (a retry), anything else is a
// conflict. The returned flight is either a finished one (ok) or this call's own.
func (g *X402) board(ctx context.Context, who identity) (*flight, error) {
	for {
		g.mu.Lock()
		f, busy := g.flights[who.id]
		if !busy {
			f = &flight{identity: who, done: make(chan struct{})}
			g.flights[who.id] = f
			g.mu.Unlock()
			return f, nil
		}
		g.mu.Unlock()
		if !f.same(who) {
			return nil, conflict(x402.ReasonIdentifierConflict)
		}
		select {
		case <-f.done:
			if f.ok {
				return f, nil
			}
			// The first attempt failed and released the payment: this one may use it.
		case <-ctx.Done():
			return nil, apierr.From(ctx.Err())
		}
	}
}

func (g *X402) land(f *flight) {
	g.mu.Lock()
	delete(g.flights, f.id)
	g.mu.Unlock()
	close(f.done)
}

func conflict(reason string) *apierr.Error {
	msg := "this payment identifier was already used with another payment or request; use a new identifier for a new payment"
	if reason == x402.ReasonInProgress {
		msg = "a call with this payment identifier is still running; retry when it has answered"
	}
	return &apierr.Error{Code: apierr.CodeConflict, Message: reason + ": " + msg}
}

// charge reserves the payment and runs the work. expiring, when not "", is why the
// authorization cannot pay for a new call: only an answer the facilitator holds under the
// payment identifier (a replay, a conflict, a stored failure) is served; a new reservation is
// released and refused with it.
func (g *X402) charge(ctx context.Context, call *Call, req *x402.FacilitatorRequest, who identity, v1 bool, expiring string, work func(context.Context) (any, error)) (any, map[string]string, error) {
	e := call.Entry
	res, err := g.f.Reserve(ctx, &x402.ReserveRequest{FacilitatorRequest: *req, Route: e.ID, Key: call.Key,
		IdentifierHash: who.id, PayloadHash: who.payload, WorkSeconds: int64(e.Timeout / time.Second)})
	if err != nil {
		return nil, nil, &apierr.Error{Code: apierr.CodeUnavailable, Message: "payment verification is unavailable right now; nothing was charged", Cause: err}
	}
	switch {
	case res.Conflict:
		return nil, nil, conflict(res.InvalidReason)
	case res.Replay != nil:
		return g.replayed(ctx, call, req, who, res, v1, work)
	case !res.IsValid && res.InvalidReason == x402.ReasonNonceUsed:
		return nil, nil, PaymentRequired(x402.ReasonNonceUsed + ": this authorization was already presented; a paid call is answered again only to a retry carrying the same payment identifier (extension payment-identifier) and payload")
	case !res.IsValid:
		return nil, nil, PaymentRequired(res.InvalidReason)
	case expiring != "":
		if err := g.f.Release(context.WithoutCancel(ctx), res.ID); err != nil {
			g.log.Warn("release failed", keyPayment, res.ID, keyErr, err)
		}
		return nil, nil, PaymentRequired(expiring)
	}
	call.Request.Payer = res.Payer
	out, werr := work(ctx)
	if werr != nil || !succeeded(out) {
		// No charge for a failed call: the nonce goes back and the payer may present it again.
		g.revoke(ctx, out, res.ID)
		if err := g.f.Release(context.WithoutCancel(ctx), res.ID); err != nil {
			g.log.Warn("release failed", keyPayment, res.ID, keyErr, err)
		}
		return out, nil, werr
	}
	auth := req.PaymentPayload.Payload.Authorization
	// An optimistic answer's receipt (no transaction yet) is signed while the facilitator
	// records the payment as owed, so signing adds nothing to the answer's latency.
	delivered := paidCallReport(e, out, nil)
	ahead := paid{scheme: x402.SchemeExact, network: g.cfg.Network, amount: auth.Value, payer: res.Payer, nonce: auth.Nonce}
	var early <-chan signedReceipt
	if g.receipts != nil && g.settlementMode(e, out) == x402.ModeOptimistic {
		early = g.signAhead(call, ahead, delivered)
	}
	settled, err := g.complete(x402.WithBox(ctx, servedBy(out)), call, req, res.ID, out)
	if err != nil {
		return nil, nil, err
	}
	out = delivered
	final := ahead
	if settled.Payer != "" {
		final.payer = settled.Payer
	}
	if settled.Network != "" {
		final.network = settled.Network
	}
	final.transaction = settled.Transaction
	settled.Extensions, err = g.settledExtensions(call, early, ahead, final, out)
	if err != nil {
		return nil, nil, err
	}
	g.keepReceipt(ctx, res.ID, settled.Extensions)
	hdr, err := receiptHeader(settled, v1)
	if err != nil {
		return nil, nil, err
	}
	addFreeFirstCallHeader(e, hdr)
	if who.id != "" {
		g.replay.put(who, out, hdr, g.now())
	}
	return out, hdr, nil
}

// servedBy is the fleet box a relayed result names, for the ledger ("" for local work).
func servedBy(out any) string {
	if r, ok := out.(*catalog.Raw); ok {
		return r.Header[catalog.HeaderBox]
	}
	return ""
}

// paidCallReport adds to a paid call's result and headers (when hdr is not nil) the
// free_first_call report of a FreeFirstCall route (the call was paid, so not granted); other
// routes' results pass as is.
func paidCallReport(e *catalog.Entry, out any, hdr map[string]string) any {
	if !e.FreeFirstCall {
		return out
	}
	addFreeFirstCallHeader(e, hdr)
	return withFreeFirstCall(out, paidReport)
}

var paidReport, _ = json.Marshal(FreeFirstCall{Granted: false, Note: "paid call; the first call of each UTC day on this route is free, once per client"})

func addFreeFirstCallHeader(e *catalog.Entry, hdr map[string]string) {
	if e.FreeFirstCall && hdr != nil {
		hdr[HeaderFreeFirstCall] = string(paidReport)
	}
}

// complete settles the payment of a successful call and returns the receipt to deliver with
// it, or the error to answer instead. A result is delivered only against a receipt that says
// the payment is settled, or durably owed (optimistic, which the facilitator grants only to a
// payment still collectable). Anything else, an unknown outcome included, is not delivered:
// the result's side effect is revoked and the payment aborted (released when nothing was sent).
func (g *X402) complete(ctx context.Context, call *Call, req *x402.FacilitatorRequest, id string, out any) (x402.SettlementResponse, error) {
	e := call.Entry
	mode := g.settlementMode(e, out)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Duration(g.policy.SettleTimeoutSeconds)*time.Second)
	defer cancel()
	if reason := g.stillValid(req); reason != "" {
		return g.undelivered(sctx, out, id, reason)
	}
	receipt, err := g.completeRetrying(sctx, id, mode)
	switch {
	case err != nil:
		g.log.Warn("settlement outcome unknown; result not delivered", keyPayment, id, keyErr, err)
		return g.undelivered(sctx, out, id, x402.ReasonSettlementPending)
	case receipt.Success:
		return receipt, nil
	case receipt.ErrorReason == x402.ReasonSettlementPending:
		return g.undelivered(sctx, out, id, x402.ReasonSettlementPending)
	case receipt.ErrorReason == x402.ReasonSettlementNotSent:
		// The facilitator (or the chain behind it) could not be reached: an outage, not a
		// verdict on the payment, which was released.
		g.revoke(sctx, out, id)
		return receipt, &apierr.Error{Code: apierr.CodeUnavailable, Message: x402.ReasonSettlementNotSent +
			": the payment could not be settled (its facilitator is unreachable); nothing was delivered or charged, retry later"}
	}
	g.revoke(sctx, out, id)
	g.log.Info("settlement failed", keyPayment, id, keyReason, receipt.ErrorReason)
	return receipt, PaymentRequired(receipt.ErrorReason)
}

// settlementMode is how a successful call's payment is completed: optimistically only for
// cheap calls without side effect, as the policy allows.
func (g *X402) settlementMode(e *catalog.Entry, out any) string {
	if g.policy.Settlement == x402.ModeOptimistic && e.Price <= g.policy.OptimisticMaxPrice && e.Tier != catalog.TierMetered && !hasSideEffect(out) {
		return x402.ModeOptimistic
	}
	return x402.ModeSync
}

// completeRetrying asks for completion until it gets an answer: Complete is idempotent, and a
// settle daemon that restarts in between answers the second time.
func (g *X402) completeRetrying(ctx context.Context, id, mode string) (x402.SettlementResponse, error) {
	return askUntilAnswered(ctx, func() (x402.SettlementResponse, error) { return g.f.Complete(ctx, id, mode) }, nil)
}

// askUntilAnswered calls ask, an idempotent request to the settle daemon, until it answers or
// gives its verdict (an error that is not transient), or ctx ends; lost (when not nil) hears
// each answer lost on the way. Tries are 100 ms apart, doubling up to 1 s.
func askUntilAnswered[T any](ctx context.Context, ask func() (T, error), lost func(error)) (T, error) {
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		r, err := ask()
		if err == nil || !transient(err) {
			return r, err
		}
		if lost != nil {
			lost(err)
		}
		select {
		case <-ctx.Done():
			return r, err
		case <-time.After(wait):
		}
	}
}

// transient reports whether a facilitator error may go away on retry (a connection refused
// while the daemon restarts) rather than being its verdict (a 4xx about this payment).
func transient(err error) bool {
	var status interface{ HTTPStatus() int }
	if errors.As(err, &status) {
		return status.HTTPStatus() >= 500
	}
	return true
}

// stillValid re-checks before delivery that the authorization can still be settled in time.
func (g *X402) stillValid(req *x402.FacilitatorRequest) string {
	vb, err := strconv.ParseInt(req.PaymentPayload.Payload.Authorization.ValidBefore, 10, 64)
	if err != nil || vb < g.now().Add(g.margin()).Unix() {
		return x402.ReasonValidBefore
	}
	return ""
}

// undelivered withholds a result whose payment is not known to be collected: the side effect
// is revoked and the payment aborted. If the abort finds it settled after all, the result is
// delivered with that receipt.
func (g *X402) undelivered(ctx context.Context, out any, id, reason string) (x402.SettlementResponse, error) {
	if r, err := g.f.Abort(ctx, id); err == nil && r.Success {
		return r, nil
	} else if err != nil {
		g.log.Error("abort failed; the ledger settles this payment on its own terms", keyPayment, id, keyErr, err)
	}
	g.revoke(ctx, out, id)
	if reason == x402.ReasonValidBefore {
		return x402.SettlementResponse{}, PaymentRequired(reason + ": the authorization expires too soon to be settled; nothing was delivered or charged")
	}
	return x402.SettlementResponse{}, &apierr.Error{Code: apierr.CodeUnavailable, Message: reason +
		": the payment's settlement could not be confirmed, so the result was not delivered; if it settles anyway it is recorded for a refund. Retry with the same payment identifier to get the result of a payment that settled"}
}

// hasSideEffect reports whether a result hands something out that must be taken back if its
// payment fails (a proxy key, an inbox, a page): such results are settled before delivery.
func hasSideEffect(out any) bool {
	if r, ok := out.(*catalog.Raw); ok {
		return r.OnRevoke != nil
	}
	_, ok := out.(Revoker)
	return ok
}

func (g *X402) revoke(ctx context.Context, out any, id string) {
	if r, ok := out.(Revoker); ok && hasSideEffect(out) {
		if err := r.Revoke(context.WithoutCancel(ctx)); err != nil {
			g.log.Error("revoke of an unpaid result failed", keyPayment, id, keyErr, err)
		}
	}
}

// facilitatorRequest matches the payment with what the route costs now and builds the
// facilitator's request, or returns the reason it does not match.
func (g *X402) facilitatorRequest(call *Call, p *x402.PaymentPayload, v1 bool) (*x402.FacilitatorRequest, string) {
	offered := g.cfg.Requirements(call.Entry)
	fr := &x402.FacilitatorRequest{X402Version: p.X402Version, PaymentPayload: *p}
	if v1 != (p.X402Version == 1) {
		return nil, x402.ReasonInvalidVersion
	}
	if p.X402Version == 2 {
		if reason := x402.Match(p.Accepted, &offered); reason != "" {
			return nil, reason
		}
		if p.Resource != nil && p.Resource.URL != "" && p.Resource.URL != call.ResourceURL {
			return nil, x402.ReasonOtherResource
		}
		fr.PaymentRequirements = x402.FacilitatorRequirements{PaymentRequirements: offered}
		return fr, ""
	}
	if p.Scheme != offered.Scheme {
		return nil, x402.ReasonInvalidScheme
	}
	if x402.CAIP2(p.Network) != offered.Network {
		return nil, x402.ReasonInvalidNetwork
	}
	req := offered
	req.Amount = ""
	fr.PaymentRequirements = x402.FacilitatorRequirements{PaymentRequirements: req, MaxAmountRequired: offered.Amount,
		Resource: call.ResourceURL, Description: call.Entry.Summary, MimeType: call.Entry.MediaType()}
	return fr, ""
}

// replayed answers a retry that carries the identifier, payload and request of a payment the
// facilitator already took: the stored result when this process still has it, else the work
// again, free (it is paid). A result with a side effect is never made twice: it is taken back
// and the retry told the result is no longer held.
func (g *X402) replayed(ctx context.Context, call *Call, req *x402.FacilitatorRequest, who identity, res x402.ReserveResponse, v1 bool, work func(context.Context) (any, error)) (any, map[string]string, error) {
	if out, hdr, ok := g.replay.get(who, g.now()); ok {
		return out, hdr, nil
	}
	hdr, err := receiptHeader(*res.Replay, v1)
	if err != nil {
		return nil, nil, err
	}
	if !res.Replay.Success {
		return nil, hdr, &apierr.Error{Code: apierr.CodeUnavailable, Message: x402.ReasonSettlementPending + ": this payment's settlement is not confirmed yet; retry with the same payment identifier shortly"}
	}
	call.Request.Payer = res.Payer
	out, err := work(ctx)
	if err != nil {
		return nil, hdr, err
	}
	if hasSideEffect(out) {
		g.revoke(ctx, out, res.ID)
		return nil, hdr, apierr.Gone("this payment was settled and its result delivered; the result is no longer held (it is kept %s)", g.replay.ttl)
	}
	if succeeded(out) {
		// The result made again gets its own receipt: the statement binds this body.
		r := *res.Replay
		auth := req.PaymentPayload.Payload.Authorization
		p := paid{scheme: x402.SchemeExact, network: r.Network, amount: auth.Value, payer: r.Payer, transaction: r.Transaction, nonce: auth.Nonce}
		if p.network == "" {
			p.network = g.cfg.Network
		}
		if p.payer == "" {
			p.payer = res.Payer
		}
		if r.Extensions, err = g.receiptExtensions(call, p, out); err != nil {
			return nil, nil, err
		}
		if hdr, err = receiptHeader(r, v1); err != nil {
			return nil, nil, err
		}
		g.replay.put(who, out, hdr, g.now())
	}
	return out, hdr, nil
}

// receiptHeader is the payment response header of a receipt (exact or batch-settlement). The
// server lists it in Access-Control-Expose-Headers when the request names an Origin.
func receiptHeader(s any, v1 bool) (map[string]string, error) {
	enc, err := x402.Encode(s)
	if err != nil {
		return nil, err
	}
	if v1 {
		return map[string]string{x402.HeaderXPaymentResponse: enc}, nil
	}
	return map[string]string{x402.HeaderPaymentResponse: enc}, nil
}

// succeeded reports whether a work result is a 2xx answer (a *catalog.Raw may carry another status).
func succeeded(out any) bool {
	if r, ok := out.(*catalog.Raw); ok && r.Status != 0 {
		return r.Status >= 200 && r.Status < 300
	}
	return true
}

// freeCall serves the first call of the UTC day of a client on a FreeFirstCall route, or
// challenges when it was already used.
func (g *X402) freeCall(ctx context.Context, call *Call, work func(context.Context) (any, error)) (any, map[string]string, error) {
	day := g.now().UTC().Format(time.DateOnly)
	client, route := call.Request.ClientIP, call.Entry.ID
	ran, out, err := freeFirstCall(ctx, call, func() (bool, error) {
		granted, err := g.free.Take(client, route, day)
		if err != nil {
			return false, apierr.Unavailable("the free-call allowance could not be recorded: %v", err)
		}
		if !granted {
			return false, PaymentRequired("the free call of " + day + " (UTC) on this route was used; pay per call until 00:00 UTC")
		}
		return true, nil
	}, work)
	if !ran {
		return nil, nil, err
	}
	if err != nil || !succeeded(out) {
		// A failed call does not use up the day's free call.
		if gerr := g.free.GiveBack(client, route, day); gerr != nil {
			g.log.Error("free call not given back", keyRoute, route, keyErr, gerr)
		}
		return out, nil, err
	}
	report := FreeFirstCall{Granted: true, Note: "first call of " + day + " (UTC) on this route is free; later calls today are paid"}
	b, _ := json.Marshal(report)
	return withFreeFirstCall(out, b), map[string]string{HeaderFreeFirstCall: string(b)}, nil
}

// withFreeFirstCall returns a copy of a JSON object result with "free_first_call" added.
func withFreeFirstCall(out any, report []byte) any {
	r, ok := out.(*catalog.Raw)
	if !ok || (r.ContentType != "" && r.ContentType != "application/json") {
		return out
	}
	body := bytes.TrimSpace(r.Body)
	if len(body) < 2 || body[0] != '{' {
		return out
	}
	var merged bytes.Buffer
	merged.WriteString(`{"free_first_call":`)
	merged.Write(report)
	if rest := bytes.TrimSpace(body[1:]); len(rest) > 0 && rest[0] != '}' {
		merged.WriteByte(',')
	}
	merged.Write(body[1:])
	cp := *r
	cp.Body = merged.Bytes()
	return &cp
}

// FreeCalls remembers which clients used the free call of a route on a UTC day. The appliance
// gives the gate its durable state store, so a restart never grants a second free call.
type FreeCalls interface {
	Take(client, route, day string) (granted bool, err error)
	GiveBack(client, route, day string) error
}

type freeKey struct{ client, route, day string }

// MemoryFreeCalls is the in-process FreeCalls used when no store is given (tests, remote
// deployments without state): a restart forgets the day's allowances.
type MemoryFreeCalls struct {
	mu   sync.Mutex
	day  string
	used map[freeKey]bool
}

func (f *MemoryFreeCalls) Take(client, route, day string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.day != day || f.used == nil { // a new UTC day forgets yesterday
		f.day, f.used = day, map[freeKey]bool{}
	}
	k := freeKey{client, route, day}
	if f.used[k] {
		return false, nil
	}
	f.used[k] = true
	return true, nil
}

func (f *MemoryFreeCalls) GiveBack(client, route, day string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.used, freeKey{client, route, day})
	return nil
}

type replayEntry struct {
	who     identity
	out     any
	hdr     map[string]string
	expires time.Time
}

// replayCache keeps delivered results for retries under their payment identifier, bounded in
// time and size.
type replayCache struct {
	mu  sync.Mutex
	ttl time.Duration
	m   map[string]replayEntry
}

const replayMax = 10_000

func (c *replayCache) put(who identity, out any, hdr map[string]string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= replayMax {
		for k, e := range c.m {
			if now.After(e.expires) || len(c.m) >= replayMax {
				delete(c.m, k)
			}
		}
	}
	c.m[who.id] = replayEntry{who: who, out: out, hdr: hdr, expires: now.Add(c.ttl)}
}

func (c *replayCache) get(who identity, now time.Time) (any, map[string]string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[who.id]
	if !ok || !e.who.same(who) || now.After(e.expires) {
		return nil, nil, false
	}
	return e.out, e.hdr, true
}

var _ Gate = (*X402)(nil)
