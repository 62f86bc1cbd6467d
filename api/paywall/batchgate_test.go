package paywall

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/settle/x402"
)

// channelFacilitator plays the settle daemon's /batch/* for one channel, with its rules: one
// request at a time (busy otherwise), voucher = charged + price (charged for a refund) or the
// corrective snapshot, the charge added only by complete.
type channelFacilitator struct {
	scripted
	mu        sync.Mutex
	charged   uint64
	signedMax uint64
	held      bool
	price     uint64
	reserved  int
	completed []uint64
	releases  int
	holding   chan struct{} // closed when a request holds the channel (if set)
	lose      int           // completion answers to lose (after committing)
	asked     int           // completions asked
	last      *x402.BatchSettleResponse
	lastMax   string
	sent      *x402.BatchRequest // the last reservation asked
}

func (f *channelFacilitator) BatchReserve(_ context.Context, req *x402.BatchRequest) (x402.BatchReserveResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reserved++
	f.sent = req
	if f.held {
		return x402.BatchReserveResponse{BatchVerifyResponse: x402.BatchVerifyResponse{InvalidReason: x402.ReasonBatchChannelBusy}}, nil
	}
	p := req.PaymentPayload.Payload
	max, _ := strconv.ParseUint(p.Voucher.MaxClaimableAmount, 10, 64)
	f.price, _ = strconv.ParseUint(req.PaymentRequirements.Amount, 10, 64)
	want := f.charged + f.price
	if p.Type == x402.BatchRefund {
		want = f.charged
	}
	if max != want {
		st := x402.ChannelState{ChannelID: "0xc", Balance: "1000000", TotalClaimed: "0", RefundNonce: "0", ChargedCumulativeAmount: strconv.FormatUint(f.charged, 10)}
		return x402.BatchReserveResponse{BatchVerifyResponse: x402.BatchVerifyResponse{InvalidReason: x402.ReasonBatchCumulativeMismatch},
			Corrective: &x402.BatchExtra{ChannelState: &st, VoucherState: &x402.VoucherState{SignedMaxClaimable: strconv.FormatUint(f.signedMax, 10), Signature: "0xsig"}}}, nil
	}
	f.held = true
	f.signedMax = max
	if f.holding != nil {
		close(f.holding)
		f.holding = nil
	}
	return x402.BatchReserveResponse{BatchVerifyResponse: x402.BatchVerifyResponse{IsValid: true, Payer: "0xP"}, ID: "0xc"}, nil
}

func (f *channelFacilitator) BatchRelease(context.Context, string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.held = false
	f.releases++
	return nil
}

// verdict is a facilitator answer other than 200 (as settle/client's Error).
type verdict int

func (v verdict) Error() string   { return "facilitator answered " + strconv.Itoa(int(v)) }
func (v verdict) HTTPStatus() int { return int(v) }

// BatchComplete commits the held request's charge (its voucher is the last reserved one) and
// answers it, or loses that answer (a transport error) while f.lose > 0; the same completion
// again answers the last result, as the settle daemon does; anything else is a 409.
func (f *channelFacilitator) BatchComplete(_ context.Context, req *x402.BatchCompleteRequest) (x402.BatchSettleResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked++
	if !f.held {
		if f.last != nil && req.MaxClaimableAmount == f.lastMax && req.Signature == "0xsig" {
			return *f.last, nil
		}
		return x402.BatchSettleResponse{}, verdict(409)
	}
	f.held = false
	f.completed = append(f.completed, req.Charged)
	f.charged += req.Charged
	st := x402.ChannelState{ChannelID: req.ID, Balance: "1000000", TotalClaimed: "0", RefundNonce: "0", ChargedCumulativeAmount: strconv.FormatUint(f.charged, 10)}
	res := x402.BatchSettleResponse{Success: true, Payer: "0xP", Network: "eip155:8453",
		Extra: &x402.BatchResponseExtra{ChargedAmount: strconv.FormatUint(req.Charged, 10), ChannelState: &st}}
	f.last, f.lastMax = &res, req.MaxClaimableAmount
	if f.lose > 0 {
		f.lose--
		return x402.BatchSettleResponse{}, errors.New("facilitator /batch/complete: EOF")
	}
	return res, nil
}

func batchConfig() Config {
	cfg := DefaultConfig()
	cfg.PayTo = "0x000000000000000000000000000000000000dEaD"
	cfg.ReceiverAuthorizer = "0x000000000000000000000000000000000000bEEF"
	return cfg
}

func batchPayment(t *testing.T, cfg Config, e *catalog.Entry, typ string, max uint64) *Call {
	t.Helper()
	req := cfg.BatchRequirements(e)
	p := x402.BatchPaymentPayload{X402Version: 2, Accepted: &req, Resource: &x402.ResourceInfo{URL: "https://x/v1/a"},
		Payload: x402.BatchPayload{Type: typ, ChannelConfig: &x402.ChannelConfig{Payer: "0xP"},
			Voucher: &x402.SignedVoucher{ChannelID: "0xc", MaxClaimableAmount: strconv.FormatUint(max, 10), Signature: "0xsig"}}}
	enc, err := x402.Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	return call(e, enc)
}

// TestBatchChallenge: every paid route's 402 offers exact and batch-settlement at the catalog's
// price with the configured channel parameters; without a receiver authorizer, exact only.
func TestBatchChallenge(t *testing.T) {
	e := &catalog.Entry{ID: "a", Path: "/v1/a", Price: 5_000, Timeout: 10 * time.Second}
	dear := &catalog.Entry{ID: "b", Path: "/v1/b", Price: 3_500_000, Timeout: 10 * time.Second}
	for _, c := range []struct {
		name       string
		cfg        Config
		e          *catalog.Entry
		schemes    []string
		minDeposit string
	}{
		{"both", batchConfig(), e, []string{"exact", "batch-settlement"}, "1000000"},
		{"a route dearer than the minimum deposit announces its price", batchConfig(), dear, []string{"exact", "batch-settlement"}, "3500000"},
		{"exact only without a receiver authorizer", DefaultConfig(), e, []string{"exact"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ch, err := NewChallenges(c.cfg, emptyCatalog(t), "https://x").For(c.e, "")
			if err != nil {
				t.Fatal(err)
			}
			pr := decodeChallenge(t, ch.Header)
			if len(pr.Accepts) != len(c.schemes) {
				t.Fatalf("accepts %+v, want schemes %v", pr.Accepts, c.schemes)
			}
			for i, s := range c.schemes {
				a := pr.Accepts[i]
				if a.Scheme != s || a.Amount != strconv.FormatUint(c.e.Price, 10) || a.PayTo != c.cfg.PayTo || a.Asset != c.cfg.Asset {
					t.Errorf("accepts[%d] = %+v", i, a)
				}
			}
			if c.minDeposit != "" {
				x := pr.Accepts[1].Extra
				if x.ReceiverAuthorizer != c.cfg.ReceiverAuthorizer || x.WithdrawDelay != 86_400 || x.MinDeposit != c.minDeposit ||
					x.Name != c.cfg.TokenName || x.Version != c.cfg.TokenVersion || x.ChannelState != nil {
					t.Errorf("batch extra %+v", x)
				}
			}
		})
	}
}

type batchChallenge struct {
	Error   string                   `json:"error"`
	Accepts []x402.BatchRequirements `json:"accepts"`
}

func decodeChallenge(t *testing.T, header string) batchChallenge {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(header)
	if err != nil {
		t.Fatal(err)
	}
	var pr batchChallenge
	if err := json.Unmarshal(raw, &pr); err != nil {
		t.Fatal(err)
	}
	return pr
}

// TestBatchGate: the voucher must be for exactly charged + price (else the corrective 402 with
// the channel's state), the charge is committed only after the work succeeded, a failure
// leaves the channel as it was, a refund never runs the work.
func TestBatchGate(t *testing.T) {
	cfg := batchConfig()
	e := &catalog.Entry{ID: "a", Path: "/v1/a", Price: 5_000, Timeout: 10 * time.Second}
	ok := func() (any, error) { return &catalog.Raw{Status: 200, Body: []byte(`{}`)}, nil }
	cases := []struct {
		name       string
		charged    uint64 // before the call
		typ        string
		max        uint64
		work       func() (any, error)
		code       apierr.Code // "" for success
		reason     string
		ran        bool
		charge     []uint64 // completions asked
		chargedNow uint64
	}{
		{name: "voucher at charged plus price", charged: 10_000, typ: x402.BatchVoucher, max: 15_000, work: ok, ran: true, charge: []uint64{5_000}, chargedNow: 15_000},
		{name: "deposit with the first voucher", typ: x402.BatchDeposit, max: 5_000, work: ok, ran: true, charge: []uint64{5_000}, chargedNow: 5_000},
		{name: "voucher below", charged: 10_000, typ: x402.BatchVoucher, max: 10_000, work: ok, code: apierr.CodePayment, reason: x402.ReasonBatchCumulativeMismatch, chargedNow: 10_000},
		{name: "voucher above", charged: 10_000, typ: x402.BatchVoucher, max: 20_000, work: ok, code: apierr.CodePayment, reason: x402.ReasonBatchCumulativeMismatch, chargedNow: 10_000},
		{name: "failed work charges nothing", charged: 10_000, typ: x402.BatchVoucher, max: 15_000, ran: true, chargedNow: 10_000, code: apierr.CodeUpstream,
			work: func() (any, error) { return nil, apierr.Upstream("u", errors.New("x"), "down") }},
		{name: "non-2xx result charges nothing", charged: 10_000, typ: x402.BatchVoucher, max: 15_000, ran: true, chargedNow: 10_000,
			work: func() (any, error) { return &catalog.Raw{Status: 502}, nil }},
		{name: "refund skips the work", charged: 10_000, typ: x402.BatchRefund, max: 10_000, work: ok, charge: []uint64{0}, chargedNow: 10_000},
		{name: "claim payload from a client", typ: x402.BatchClaim, max: 5_000, work: ok, code: apierr.CodePayment, reason: x402.ReasonBatchPayloadType},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &channelFacilitator{charged: c.charged}
			g := New(cfg, DefaultPolicy(), f, GateOptions{})
			ran := false
			out, hdr, err := g.Charge(context.Background(), batchPayment(t, cfg, e, c.typ, c.max), func(context.Context) (any, error) {
				ran = true
				return c.work()
			})
			if got := apierr.From(err).Code; (err == nil) != (c.code == "") || (err != nil && got != c.code) {
				t.Fatalf("err %v, want code %q", err, c.code)
			}
			if c.reason != "" && apierr.From(err).Message != c.reason {
				t.Fatalf("reason %q, want %q", apierr.From(err).Message, c.reason)
			}
			if ran != c.ran || f.charged != c.chargedNow || len(f.completed) != len(c.charge) || f.held {
				t.Fatalf("ran %v charged %d completed %v held %v", ran, f.charged, f.completed, f.held)
			}
			for i := range c.charge {
				if f.completed[i] != c.charge[i] {
					t.Fatalf("completed %v, want %v", f.completed, c.charge)
				}
			}
			if err != nil || hdr == nil {
				if len(c.charge) > 0 {
					t.Fatalf("charged without a receipt: %v", out)
				}
				return
			}
			var receipt x402.BatchSettleResponse
			raw, _ := base64.StdEncoding.DecodeString(hdr[x402.HeaderPaymentResponse])
			if json.Unmarshal(raw, &receipt) != nil || !receipt.Success || receipt.Extra == nil || receipt.Extra.ChannelState == nil {
				t.Fatalf("receipt %s", raw)
			}
			if c.typ != x402.BatchRefund && (receipt.Extra.ChargedAmount != "5000" || receipt.Extra.ChannelState.ChargedCumulativeAmount != strconv.FormatUint(c.chargedNow, 10)) {
				t.Fatalf("receipt %s", raw)
			}
		})
	}
}

// TestBatchReserveSendsWhatTheDaemonReads: the reservation carries the client's payload and
// the route's offer, not the rest of what the client sent (accepted, matched by the gate, the
// resource and the extensions), which the settle daemon does not read and every call would
// otherwise encode and decode on its way there.
func TestBatchReserveSendsWhatTheDaemonReads(t *testing.T) {
	cfg := batchConfig()
	e := &catalog.Entry{ID: "a", Path: "/v1/a", Price: 5_000, Timeout: 10 * time.Second}
	f := &channelFacilitator{charged: 10_000}
	g := New(cfg, DefaultPolicy(), f, GateOptions{})
	c := batchPayment(t, cfg, e, x402.BatchVoucher, 15_000)
	if _, _, err := g.Charge(context.Background(), c, func(context.Context) (any, error) { return &catalog.Raw{Status: 200, Body: []byte(`{}`)}, nil }); err != nil {
		t.Fatal(err)
	}
	sent := f.sent
	if sent == nil {
		t.Fatal("no reservation asked")
	}
	p := sent.PaymentPayload
	if p.Accepted != nil || p.Resource != nil || p.Extensions != nil {
		t.Errorf("the reservation carries accepted %v, resource %v, extensions %v: the daemon reads none of them", p.Accepted, p.Resource, p.Extensions)
	}
	v := p.Payload.Voucher
	if p.X402Version != 2 || p.Payload.Type != x402.BatchVoucher || v == nil || v.MaxClaimableAmount != "15000" || v.Signature != "0xsig" ||
		p.Payload.ChannelConfig == nil || p.Payload.ChannelConfig.Payer != "0xP" {
		t.Errorf("the reservation's payload is %+v, want the client's", p)
	}
	if want := cfg.BatchRequirements(e); sent.PaymentRequirements.Amount != want.Amount || sent.PaymentRequirements.PayTo != want.PayTo ||
		sent.PaymentRequirements.Extra == nil || sent.WorkSeconds != 10 {
		t.Errorf("the reservation's offer is %+v (work %d s), want the route's", sent.PaymentRequirements, sent.WorkSeconds)
	}
}

// TestBatchCompleteAnswerLost: the completion's answer is lost after the charge was
// committed; the gate asks again with the same request, gets the same result and delivers,
// the channel charged once. A facilitator that refuses the completion (409) is not asked
// again and nothing is delivered.
func TestBatchCompleteAnswerLost(t *testing.T) {
	cfg := batchConfig()
	e := &catalog.Entry{ID: "a", Path: "/v1/a", Price: 5_000, Timeout: 10 * time.Second}
	work := func(context.Context) (any, error) { return &catalog.Raw{Status: 200, Body: []byte(`{"r":1}`)}, nil }
	policy := DefaultPolicy()
	policy.SettleTimeoutSeconds = 5

	f := &channelFacilitator{charged: 10_000, lose: 1}
	out, hdr, err := New(cfg, policy, f, GateOptions{}).Charge(context.Background(), batchPayment(t, cfg, e, x402.BatchVoucher, 15_000), work)
	if err != nil || out == nil || hdr[x402.HeaderPaymentResponse] == "" {
		t.Fatalf("after a lost answer: %v %v %v", out, hdr, err)
	}
	if f.asked != 2 || f.charged != 15_000 || len(f.completed) != 1 {
		t.Fatalf("asked %d, charged %d, completions %v", f.asked, f.charged, f.completed)
	}
	var receipt x402.BatchSettleResponse
	raw, _ := base64.StdEncoding.DecodeString(hdr[x402.HeaderPaymentResponse])
	if json.Unmarshal(raw, &receipt) != nil || receipt.Extra.ChargedAmount != "5000" || receipt.Extra.ChannelState.ChargedCumulativeAmount != "15000" {
		t.Fatalf("receipt %s", raw)
	}

	// Refused outright: one ask, nothing delivered.
	refusing := &refusingComplete{channelFacilitator: &channelFacilitator{charged: 10_000}}
	out, _, err = New(cfg, policy, refusing, GateOptions{}).Charge(context.Background(), batchPayment(t, cfg, e, x402.BatchVoucher, 15_000), work)
	if err == nil || out != nil || refusing.asked != 1 {
		t.Fatalf("a refused completion: %v %v, asked %d", out, err, refusing.asked)
	}
}

// refusingComplete answers every completion with a 409.
type refusingComplete struct {
	*channelFacilitator
}

func (f *refusingComplete) BatchComplete(context.Context, *x402.BatchCompleteRequest) (x402.BatchSettleResponse, error) {
	f.asked++
	return x402.BatchSettleResponse{}, verdict(409)
}

// TestBatchCorrectiveChallenge: the corrective 402 names the mismatch as its error, bare (the
// official client compares it), and the batch-settlement requirement carries the channel's
// state and the last voucher the server holds.
func TestBatchCorrectiveChallenge(t *testing.T) {
	cfg := batchConfig()
	e := &catalog.Entry{ID: "a", Path: "/v1/a", Price: 5_000, Timeout: 10 * time.Second}
	f := &channelFacilitator{charged: 10_000, signedMax: 10_000}
	g := New(cfg, DefaultPolicy(), f, GateOptions{})
	_, _, err := g.Charge(context.Background(), batchPayment(t, cfg, e, x402.BatchVoucher, 5_000), func(context.Context) (any, error) {
		t.Fatal("work ran")
		return nil, nil
	})
	ch, cerr := NewChallenges(cfg, emptyCatalog(t), "https://x").ForError(e, err)
	if cerr != nil {
		t.Fatal(cerr)
	}
	pr := decodeChallenge(t, ch.Header)
	if pr.Error != x402.ReasonBatchCumulativeMismatch || len(pr.Accepts) != 2 {
		t.Fatalf("corrective %+v", pr)
	}
	x := pr.Accepts[1].Extra
	if x.ChannelState == nil || x.ChannelState.ChargedCumulativeAmount != "10000" || x.VoucherState == nil ||
		x.VoucherState.SignedMaxClaimable != "10000" || x.VoucherState.Signature != "0xsig" || x.ReceiverAuthorizer != cfg.ReceiverAuthorizer {
		t.Fatalf("corrective extra %+v", x)
	}
	// The plain challenge stays plain.
	if plain, _ := NewChallenges(cfg, emptyCatalog(t), "https://x").For(e, ""); decodeChallenge(t, plain.Header).Accepts[1].Extra.ChannelState != nil {
		t.Fatal("the memoised challenge carries a channel state")
	}
}

// TestBatchOneRequestPerChannel: a second request on a channel another one holds waits for it,
// and then, carrying the same cumulative amount, gets the corrective 402: never two charges at
// the same cumulative amount.
func TestBatchOneRequestPerChannel(t *testing.T) {
	cfg := batchConfig()
	e := &catalog.Entry{ID: "a", Path: "/v1/a", Price: 5_000, Timeout: 10 * time.Second}
	holding := make(chan struct{})
	f := &channelFacilitator{holding: holding}
	g := New(cfg, DefaultPolicy(), f, GateOptions{})
	release := make(chan struct{})
	first := make(chan error, 1)
	go func() {
		_, _, err := g.Charge(context.Background(), batchPayment(t, cfg, e, x402.BatchVoucher, 5_000), func(context.Context) (any, error) {
			<-release
			return &catalog.Raw{Status: 200}, nil
		})
		first <- err
	}()
	<-holding
	second := make(chan error, 1)
	go func() {
		_, _, err := g.Charge(context.Background(), batchPayment(t, cfg, e, x402.BatchVoucher, 5_000), func(context.Context) (any, error) {
			return &catalog.Raw{Status: 200}, nil
		})
		second <- err
	}()
	for { // the second request is polling the busy channel
		f.mu.Lock()
		n := f.reserved
		f.mu.Unlock()
		if n >= 3 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	err := <-second
	if apierr.From(err).Message != x402.ReasonBatchCumulativeMismatch {
		t.Fatalf("second request: %v", err)
	}
	if f.charged != 5_000 || len(f.completed) != 1 {
		t.Fatalf("charged %d completions %v", f.charged, f.completed)
	}
}

// TestBatchRefusedBeforeReserve: a payment that does not match the offer is refused with the
// scheme's reason and never reaches the facilitator.
func TestBatchRefusedBeforeReserve(t *testing.T) {
	cfg := batchConfig()
	e := &catalog.Entry{ID: "a", Path: "/v1/a", Price: 5_000, Timeout: 10 * time.Second}
	other := cfg
	other.ReceiverAuthorizer = "0x000000000000000000000000000000000000F00d"
	cheaper := &catalog.Entry{ID: "a", Path: "/v1/a", Price: 1, Timeout: 10 * time.Second}
	for _, c := range []struct {
		name   string
		gate   Config
		call   *Call
		reason string
	}{
		{"another receiver authorizer", cfg, batchPayment(t, other, e, x402.BatchVoucher, 5_000), x402.ReasonBatchAuthorizerMismatch},
		{"another price", cfg, onEntry(batchPayment(t, cfg, cheaper, x402.BatchVoucher, 1), e), x402.ReasonInvalidRequirements},
		{"batch-settlement not offered", DefaultConfig(), batchPayment(t, cfg, e, x402.BatchVoucher, 5_000), x402.ReasonBatchScheme},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &channelFacilitator{}
			g := New(c.gate, DefaultPolicy(), f, GateOptions{})
			_, _, err := g.Charge(context.Background(), c.call, func(context.Context) (any, error) { return nil, nil })
			if apierr.From(err).Message != c.reason || f.reserved != 0 {
				t.Fatalf("err %v reserved %d, want %s", err, f.reserved, c.reason)
			}
		})
	}
}

func emptyCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	c, err := catalog.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func onEntry(c *Call, e *catalog.Entry) *Call {
	c.Entry = e
	return c
}

// TestBatchPaidFreeFirstCall: a batch-settlement call to a FreeFirstCall route is a paid call
// and says so, in the header and in the JSON result, as an exact payment does.
func TestBatchPaidFreeFirstCall(t *testing.T) {
	cfg := batchConfig()
	e := &catalog.Entry{ID: "a", Path: "/v1/a", Price: 5_000, Timeout: 10 * time.Second, FreeFirstCall: true}
	f := &channelFacilitator{}
	g := New(cfg, DefaultPolicy(), f, GateOptions{})
	out, hdr, err := g.Charge(context.Background(), batchPayment(t, cfg, e, x402.BatchVoucher, 5_000), func(context.Context) (any, error) {
		return &catalog.Raw{Status: 200, ContentType: "application/json", Body: []byte(`{"x":1}`)}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var report FreeFirstCall
	if json.Unmarshal([]byte(hdr[HeaderFreeFirstCall]), &report) != nil || report.Granted || report.Note == "" {
		t.Errorf("%s = %q, want a not-granted report", HeaderFreeFirstCall, hdr[HeaderFreeFirstCall])
	}
	var body struct {
		FreeFirstCall *FreeFirstCall `json:"free_first_call"`
		X             int            `json:"x"`
	}
	r, ok := out.(*catalog.Raw)
	if !ok || json.Unmarshal(r.Body, &body) != nil || body.FreeFirstCall == nil || body.FreeFirstCall.Granted || body.X != 1 {
		t.Errorf("result = %+v", out)
	}
}
