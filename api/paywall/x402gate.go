package paywall

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/settle/x402"
)

// Facilitator is what the gate needs from the settle daemon (settle/client.Client implements it).
type Facilitator interface {
	Reserve(ctx context.Context, req *x402.ReserveRequest) (x402.ReserveResponse, error)
	Release(ctx context.Context, id string) error
	Complete(ctx context.Context, id, mode string) (x402.SettlementResponse, error)
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
	// pricier calls, and proxy sales (EXCEPTION_METERED) always, settle synchronously.
	OptimisticMaxPrice uint64 `toml:"optimistic_max_price"`
	// SettleTimeoutSeconds bounds the wait for a synchronous settlement.
	SettleTimeoutSeconds int `toml:"settle_timeout_seconds"`
	// Facilitator is where payments are verified and settled: empty for the appliance's own
	// settle daemon (its socket), or the URL of a remote standard x402 facilitator.
	Facilitator string `toml:"facilitator"`
}

// DefaultPolicy answers calls up to 0.05 USDC optimistically.
func DefaultPolicy() Policy {
	return Policy{Settlement: x402.ModeOptimistic, OptimisticMaxPrice: 50_000, SettleTimeoutSeconds: 60}
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
// work, releases it when the work fails, and settles it when the work succeeded.
type X402 struct {
	cfg    Config
	policy Policy
	f      Facilitator
	log    *slog.Logger
	now    func() time.Time

	replay *replayCache
	free   FreeCalls

	mu      sync.Mutex
	flights map[string]*flight // payment id → the call using it right now
}

// flight is a paid call in progress; a retry of the same request with the same payment waits
// for it and gets its answer, instead of a refusal that would push the client to pay again.
type flight struct {
	key  string
	done chan struct{}
	out  any
	hdr  map[string]string
	ok   bool // settled (or pending settlement): out and hdr are the answer
}

// GateOptions are optional knobs of New.
type GateOptions struct {
	Logger *slog.Logger
	Now    func() time.Time
	// ReplayTTL is how long a settled result is kept for idempotent replay [15m].
	ReplayTTL time.Duration
	// FreeCalls records the daily free calls [MemoryFreeCalls].
	FreeCalls FreeCalls
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
	if policy.SettleTimeoutSeconds <= 0 {
		policy.SettleTimeoutSeconds = 60
	}
	return &X402{cfg: cfg, policy: policy, f: f, log: o.Logger, now: o.Now,
		replay:  &replayCache{ttl: o.ReplayTTL, m: map[string]replayEntry{}},
		free:    o.FreeCalls,
		flights: map[string]*flight{}}
}

// Log keys.
const (
	keyRoute   = "route"
	keyPayment = "payment"
	keyErr     = "err"
	keyReason  = "reason"
)

// Charge implements Gate.
func (g *X402) Charge(ctx context.Context, call *Call, work func(context.Context) (any, error)) (any, map[string]string, error) {
	e := call.Entry
	h, v1 := call.Request.Header.Get(x402.HeaderPaymentSignature), false
	if h == "" {
		h, v1 = call.Request.Header.Get(x402.HeaderXPayment), true
	}
	if h == "" {
		if e.FreeFirstCall {
			return g.freeCall(ctx, call, work)
		}
		return nil, nil, PaymentRequired("")
	}
	p, err := x402.DecodePayment(h)
	if err != nil {
		return nil, nil, apierr.BadRequest("the payment header is malformed: %v", err)
	}
	req, reason := g.facilitatorRequest(call, p, v1)
	if reason != "" {
		return nil, nil, PaymentRequired(reason)
	}
	fl, wait := g.join(paymentKey(p), call.Key)
	if wait != nil {
		select {
		case <-wait.done:
			if wait.ok {
				return wait.out, wait.hdr, nil
			}
			// The first attempt failed and released the nonce: this one may use it.
		case <-ctx.Done():
			return nil, nil, apierr.From(ctx.Err())
		}
		fl, _ = g.join(paymentKey(p), call.Key)
	}
	if fl != nil {
		defer g.land(paymentKey(p), fl)
	}
	out, hdr, err := g.charge(ctx, call, req, v1, work)
	if fl != nil && err == nil && succeeded(out) {
		fl.out, fl.hdr, fl.ok = out, hdr, true
	}
	return out, hdr, err
}

// paymentKey identifies a payment in this process (payer and nonce, as the ledger does).
func paymentKey(p *x402.PaymentPayload) string {
	a := p.Payload.Authorization
	return strings.ToLower(a.From) + ":" + strings.ToLower(a.Nonce)
}

// join registers the call as the user of a payment. If another call of the same request uses
// it now, it returns that flight to wait for; a call of another request proceeds (and the
// facilitator refuses the reused nonce).
func (g *X402) join(id, key string) (mine, other *flight) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f, ok := g.flights[id]; ok {
		if f.key == key {
			return nil, f
		}
		return nil, nil
	}
	f := &flight{key: key, done: make(chan struct{})}
	g.flights[id] = f
	return f, nil
}

func (g *X402) land(id string, f *flight) {
	g.mu.Lock()
	delete(g.flights, id)
	g.mu.Unlock()
	close(f.done)
}

func (g *X402) charge(ctx context.Context, call *Call, req *x402.FacilitatorRequest, v1 bool, work func(context.Context) (any, error)) (any, map[string]string, error) {
	e := call.Entry
	res, err := g.f.Reserve(ctx, &x402.ReserveRequest{FacilitatorRequest: *req, Route: e.ID, Key: call.Key})
	if err != nil {
		return nil, nil, &apierr.Error{Code: apierr.CodeUnavailable, Message: "payment verification is unavailable right now; nothing was charged", Cause: err}
	}
	if res.Replay != nil {
		return g.replayed(ctx, call, res, v1, work)
	}
	if !res.IsValid {
		return nil, nil, PaymentRequired(res.InvalidReason)
	}
	call.Request.Payer = res.Payer
	out, werr := work(ctx)
	if werr != nil || !succeeded(out) {
		// No charge for a failed call: the nonce goes back and the payer may present it again.
		if err := g.f.Release(context.WithoutCancel(ctx), res.ID); err != nil {
			g.log.Warn("release failed", keyPayment, res.ID, keyErr, err)
		}
		return out, nil, werr
	}
	mode := x402.ModeSync
	if g.policy.Settlement == x402.ModeOptimistic && e.Price <= g.policy.OptimisticMaxPrice && e.Tier != catalog.TierMetered {
		mode = x402.ModeOptimistic
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Duration(g.policy.SettleTimeoutSeconds)*time.Second)
	defer cancel()
	receipt, err := g.f.Complete(sctx, res.ID, mode)
	if err != nil {
		// The ledger holds the payment as owed and the facilitator's queue settles it; the
		// outcome is unknown here, which is not a failure (never turn unknown into failed).
		g.log.Warn("completion not confirmed", keyPayment, res.ID, keyErr, err)
		receipt = x402.SettlementResponse{ErrorReason: x402.ReasonSettlementPending, Payer: res.Payer, Network: g.cfg.Network}
	}
	hdr, herr := receiptHeader(receipt, v1)
	if herr != nil {
		return nil, nil, herr
	}
	if !receipt.Success && receipt.ErrorReason != x402.ReasonSettlementPending {
		if r, ok := out.(Revoker); ok {
			if err := r.Revoke(context.WithoutCancel(ctx)); err != nil {
				g.log.Error("revoke after failed settlement", keyPayment, res.ID, keyErr, err)
			}
		}
		g.log.Info("settlement failed", keyPayment, res.ID, keyReason, receipt.ErrorReason)
		return nil, hdr, PaymentRequired(receipt.ErrorReason)
	}
	if e.FreeFirstCall {
		report, _ := json.Marshal(FreeFirstCall{Granted: false, Note: "paid call; the first call of each UTC day on this route is free, once per client"})
		out = withFreeFirstCall(out, report)
		hdr[HeaderFreeFirstCall] = string(report)
	}
	g.replay.put(res.ID, call.Key, out, hdr, g.now())
	return out, hdr, nil
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

// replayed answers a retry of a payment the facilitator already took for this same request:
// the stored result when this process still has it, else the work again, free (it is paid).
func (g *X402) replayed(ctx context.Context, call *Call, res x402.ReserveResponse, v1 bool, work func(context.Context) (any, error)) (any, map[string]string, error) {
	if out, hdr, ok := g.replay.get(res.ID, call.Key, g.now()); ok {
		return out, hdr, nil
	}
	hdr, err := receiptHeader(*res.Replay, v1)
	if err != nil {
		return nil, nil, err
	}
	call.Request.Payer = res.Payer
	out, err := work(ctx)
	if err != nil {
		return nil, hdr, err
	}
	if succeeded(out) {
		g.replay.put(res.ID, call.Key, out, hdr, g.now())
	}
	return out, hdr, nil
}

func receiptHeader(s x402.SettlementResponse, v1 bool) (map[string]string, error) {
	enc, err := x402.Encode(s)
	if err != nil {
		return nil, err
	}
	if v1 {
		return map[string]string{x402.HeaderXPaymentResponse: enc, "Access-Control-Expose-Headers": x402.ExposeHeadersValue}, nil
	}
	return map[string]string{x402.HeaderPaymentResponse: enc, "Access-Control-Expose-Headers": x402.ExposeHeadersValue}, nil
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
	granted, err := g.free.Take(client, route, day)
	if err != nil {
		return nil, nil, apierr.Unavailable("the free-call allowance could not be recorded: %v", err)
	}
	if !granted {
		return nil, nil, PaymentRequired("the free call of " + day + " (UTC) on this route was used; pay per call until 00:00 UTC")
	}
	out, err := work(ctx)
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
	key     string
	out     any
	hdr     map[string]string
	expires time.Time
}

// replayCache keeps settled results for idempotent replay, bounded in time and size.
type replayCache struct {
	mu  sync.Mutex
	ttl time.Duration
	m   map[string]replayEntry
}

const replayMax = 10_000

func (c *replayCache) put(id, key string, out any, hdr map[string]string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= replayMax {
		for k, e := range c.m {
			if now.After(e.expires) || len(c.m) >= replayMax {
				delete(c.m, k)
			}
		}
	}
	c.m[id] = replayEntry{key: key, out: out, hdr: hdr, expires: now.Add(c.ttl)}
}

func (c *replayCache) get(id, key string, now time.Time) (any, map[string]string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[id]
	if !ok || e.key != key || now.After(e.expires) {
		return nil, nil, false
	}
	return e.out, e.hdr, true
}

var _ Gate = (*X402)(nil)
