package settle_test

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/render"
	receiptroutes "github.com/peage/appliance/api/routes/receipt"
	"github.com/peage/appliance/internal/receipt"
	"github.com/peage/appliance/internal/testenv"
	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/client"
	"github.com/peage/appliance/settle/exact"
	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/pay"
	"github.com/peage/appliance/settle/settletest"
	"github.com/peage/appliance/settle/x402"
)

const price = 10_000

type world struct {
	dev  *settle.Dev
	base string
	cfg  paywall.Config
	key  *ecdsa.PrivateKey
	cat  *catalog.Catalog
	hc   *http.Client
	// receipts signs the world's offers and receipts.
	receipts *receipt.Keyring
}

func testCatalog(t *testing.T, extra ...catalog.Entry) *catalog.Catalog {
	t.Helper()
	echo := func(_ context.Context, r *catalog.Request) (any, error) {
		return map[string]any{"q": r.Args.Str("q"), "payer": r.Payer}, nil
	}
	entries := []catalog.Entry{
		{Method: "GET", Path: "/v1/test/echo", Summary: "echo", Kind: catalog.Paid, Price: price, Timeout: 30 * time.Second,
			Params: []catalog.Param{catalog.S("q", "text")}, Handler: echo},
		{Method: "GET", Path: "/v1/test/other", Summary: "other", Kind: catalog.Paid, Price: price, Timeout: 30 * time.Second, Handler: echo},
		{Method: "GET", Path: "/v1/test/fail", Summary: "upstream fails", Kind: catalog.Paid, Price: price, Timeout: 30 * time.Second,
			Handler: func(context.Context, *catalog.Request) (any, error) {
				return nil, apierr.Upstream("fixture", errors.New("connection refused"), "the upstream failed")
			}},
		{Method: "GET", Path: "/v1/test/slow", Summary: "deadline", Kind: catalog.Paid, Price: price, Timeout: 50 * time.Millisecond,
			Handler: func(ctx context.Context, _ *catalog.Request) (any, error) { <-ctx.Done(); return nil, ctx.Err() }},
		{Method: "GET", Path: "/v1/test/free", Summary: "free first call", Kind: catalog.Paid, Price: 3_000, Timeout: 30 * time.Second,
			Params: []catalog.Param{catalog.S("q", "text")}, FreeFirstCall: true, Handler: echo},
		{Method: "GET", Path: "/v1/test/big", Summary: "synchronous price", Kind: catalog.Paid, Price: 2_000_000, Timeout: 30 * time.Second, Handler: echo},
	}
	cat, err := catalog.New(append(entries, extra...))
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func newWorld(t *testing.T, policy paywall.Policy) *world {
	t.Helper()
	return newWorldWith(t, policy, false)
}

// newWorldWith builds the world; standard makes the gate talk to the facilitator through
// its standard API only (/verify, /settle), as with a hosted facilitator.
func newWorldWith(t *testing.T, policy paywall.Policy, standard bool, extra ...catalog.Entry) *world {
	t.Helper()
	testenv.NeedsChain(t)
	dev, fc := settletest.StartDev(t)
	cfg := paywall.Config{Network: dev.Network, Asset: dev.Asset, PayTo: dev.PayTo, TokenName: dev.TokenName, TokenVersion: dev.TokenVersion, MaxTimeoutSeconds: 60}
	var f paywall.Facilitator = fc
	if standard {
		f = &client.Standard{C: fc}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	keys := testReceiptKeys(t, "http://"+ln.Addr().String())
	gate := paywall.New(cfg, policy, f, paywall.GateOptions{Receipts: keys})
	did, list := render.ReceiptKeyDocs(keys)
	// The receipt routes as the default table declares them, bound to this world's ledger.
	def, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	cat := testCatalog(t, append(extra,
		catalog.Entry{Method: "GET", Path: render.DIDPath, Summary: "did", Kind: catalog.Discovery, Timeout: time.Second, Handler: did},
		catalog.Entry{Method: "GET", Path: render.ReceiptKeysPath, Summary: "keys", Kind: catalog.Discovery, Timeout: time.Second, Handler: list},
		*def.ByPath("/free/receipt"), *def.ByPath("/free/receipt/verify"))...)
	if err := receiptroutes.With(keys, fc, nil).Bind(cat); err != nil {
		t.Fatal(err)
	}
	h := apitest.Start(t, cat, apitest.Options{Gate: gate, Pay: cfg, Receipts: keys, Listener: ln})
	key, err := settle.LoadKey(dev.PayerKey)
	if err != nil {
		t.Fatal(err)
	}
	// Runs before the server's shutdown (cleanups run last first): a connection the client
	// dialled but never used would otherwise hold the shutdown until its read timeout.
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	return &world{dev: dev, base: h.BaseURL, cfg: cfg, key: key, cat: cat, hc: hc, receipts: keys}
}

func (w *world) balance(t *testing.T, a string) int64 {
	t.Helper()
	b, err := w.dev.Chain.Balance(context.Background(), common.HexToAddress(a))
	if err != nil {
		t.Fatal(err)
	}
	return b.Int64()
}

// header signs a payment for path, optionally editing what is signed.
func (w *world) header(t *testing.T, key *ecdsa.PrivateKey, path string, p uint64, edit func(*x402.PaymentRequirements), editAuth func(*exact.Authorization)) string {
	t.Helper()
	e := *w.cat.ByPath(path)
	e.Price = p
	r := w.cfg.Requirements(&e)
	if edit != nil {
		edit(&r)
	}
	payload, err := exact.NewPayload(key, 2, &r, &x402.ResourceInfo{URL: w.base + path}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if editAuth != nil {
		a, _, err := exact.Parse(&payload.Payload)
		if err != nil {
			t.Fatal(err)
		}
		editAuth(a)
		sig, err := exact.Sign(key, exact.Domain{Name: r.Extra.Name, Version: r.Extra.Version, ChainID: 1337, Contract: common.HexToAddress(r.Asset)}, a)
		if err != nil {
			t.Fatal(err)
		}
		payload.Payload.Authorization = exact.WireAuthorization(a)
		payload.Payload.Signature = "0x" + common.Bytes2Hex(sig)
	}
	enc, err := x402.Encode(payload)
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

// withID returns the payment header h carrying the payment identifier id.
func withID(t *testing.T, h, id string) string {
	t.Helper()
	p, err := x402.DecodePayment(h)
	if err != nil {
		t.Fatal(err)
	}
	x402.SetPaymentIdentifier(p, id)
	enc, err := x402.Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

// reasonIs reports whether a challenge's error names reason (it may explain it after a colon).
func reasonIs(got, reason string) bool { return got == reason || strings.HasPrefix(got, reason+":") }

type answer struct {
	status  int
	body    string
	reason  string // error of the fresh challenge on a 402
	receipt *x402.SettlementResponse
	header  http.Header
}

func (w *world) get(t *testing.T, path string, q map[string]string, hdr map[string]string) answer {
	t.Helper()
	u, _ := url.Parse(w.base + path)
	vals := u.Query()
	for k, v := range q {
		vals.Set(k, v)
	}
	u.RawQuery = vals.Encode()
	req, _ := http.NewRequest("GET", u.String(), nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	hc := w.hc
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, body: string(b), header: resp.Header}
	if h := resp.Header.Get(x402.HeaderPaymentRequired); h != "" {
		pr, err := x402.DecodeRequired(h)
		if err != nil {
			t.Fatalf("undecodable challenge: %v", err)
		}
		a.reason = pr.Error
	}
	for _, name := range []string{x402.HeaderPaymentResponse, x402.HeaderXPaymentResponse} {
		if h := resp.Header.Get(name); h != "" {
			s, err := x402.DecodeSettlement(h)
			if err != nil {
				t.Fatalf("undecodable receipt: %v", err)
			}
			a.receipt = s
		}
	}
	return a
}

func TestPaidCallSettlesSynchronously(t *testing.T) {
	w := newWorld(t, paywall.Policy{Settlement: x402.ModeSync})
	before := w.balance(t, w.dev.Payer)
	c := &pay.Client{Key: w.key}
	res, err := c.Do(context.Background(), pay.Request{Method: "GET", URL: w.base + "/v1/test/echo", Params: map[string]string{"q": "hello"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 200 || res.Receipt == nil || !res.Receipt.Success || res.Receipt.Transaction == "" {
		t.Fatalf("paid call: %d %s %+v", res.Status, res.Body, res.Receipt)
	}
	var body map[string]string
	if err := json.Unmarshal(res.Body, &body); err != nil || body["q"] != "hello" || body["payer"] != w.dev.Payer {
		t.Fatalf("body %s", res.Body)
	}
	if got := before - w.balance(t, w.dev.Payer); got != price {
		t.Fatalf("payer paid %d, want %d", got, price)
	}
	if got := w.balance(t, w.dev.PayTo); got != price {
		t.Fatalf("payTo received %d, want %d", got, price)
	}
	recs := w.dev.Facilitator.Ledger().List(ledger.Settled)
	if len(recs) != 1 || recs[0].Tx != res.Receipt.Transaction || recs[0].Route != "test.echo" || recs[0].Amount != price {
		t.Fatalf("ledger %+v", recs)
	}
}

func TestPaidCallOptimisticAndV1(t *testing.T) {
	w := newWorld(t, paywall.Policy{Settlement: x402.ModeOptimistic, OptimisticMaxPrice: 100_000})
	c := &pay.Client{Key: w.key}
	res, err := c.Do(context.Background(), pay.Request{URL: w.base + "/v1/test/echo", Params: map[string]string{"q": "fast"}})
	if err != nil || res.Status != 200 || res.Receipt == nil || !res.Receipt.Success {
		t.Fatalf("optimistic: %v %+v", err, res)
	}
	// Above the optimistic price the call settles before answering: the receipt names the tx.
	res, err = c.Do(context.Background(), pay.Request{URL: w.base + "/v1/test/big"})
	if err != nil || res.Status != 200 || res.Receipt == nil || res.Receipt.Transaction == "" {
		t.Fatalf("synchronous: %v %+v", err, res)
	}
	// v1: X-PAYMENT in, X-PAYMENT-RESPONSE out.
	r := w.cfg.Requirements(&catalog.Entry{Price: price})
	p, err := exact.NewPayload(w.key, 1, &r, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := x402.Encode(p)
	a := w.get(t, "/v1/test/echo", map[string]string{"q": "v1"}, map[string]string{"X-Payment": enc})
	if a.status != 200 || a.header.Get(x402.HeaderXPaymentResponse) == "" {
		t.Fatalf("v1: %d %s", a.status, a.body)
	}
	for len(w.dev.Facilitator.Ledger().List(ledger.Settled)) != 3 {
		time.Sleep(5 * time.Millisecond) // the optimistic queue settles in the background
	}
	if got := w.balance(t, w.dev.PayTo); got != 2*price+2_000_000 {
		t.Fatalf("payTo received %d", got)
	}
}

func TestBadPaymentsAreRefusedAndMoveNothing(t *testing.T) {
	w := newWorld(t, paywall.Policy{Settlement: x402.ModeSync})
	stranger, _ := crypto.GenerateKey()
	poor, _ := crypto.GenerateKey()
	sig := x402.HeaderPaymentSignature
	cases := []struct {
		name   string
		hdr    func(t *testing.T) map[string]string
		status int
		reason string
	}{
		// A call without payment: the challenge names no reason (v2's error is optional).
		{"no payment", func(*testing.T) map[string]string { return nil }, 402, ""},
		{"malformed base64", func(*testing.T) map[string]string { return map[string]string{sig: "%%%not base64%%%"} }, 402, x402.ReasonInvalidPayload},
		{"malformed JSON", func(*testing.T) map[string]string { return map[string]string{sig: "bm90IGpzb24="} }, 402, x402.ReasonInvalidPayload},
		{"oversized header", func(*testing.T) map[string]string { return map[string]string{sig: strings.Repeat("A", 9000)} }, 402, x402.ReasonInvalidPayload},
		{"wrong network", func(t *testing.T) map[string]string {
			return map[string]string{sig: w.header(t, w.key, "/v1/test/echo", price, func(r *x402.PaymentRequirements) { r.Network = "eip155:8453" }, nil)}
		}, 402, x402.ReasonInvalidNetwork},
		{"wrong asset", func(t *testing.T) map[string]string {
			return map[string]string{sig: w.header(t, w.key, "/v1/test/echo", price, func(r *x402.PaymentRequirements) { r.Asset = common.Address{1}.Hex() }, nil)}
		}, 402, x402.ReasonInvalidRequirements},
		{"wrong payTo", func(t *testing.T) map[string]string {
			return map[string]string{sig: w.header(t, w.key, "/v1/test/echo", price, func(r *x402.PaymentRequirements) { r.PayTo = common.Address{2}.Hex() }, nil)}
		}, 402, x402.ReasonRecipientMismatch},
		{"wrong scheme", func(t *testing.T) map[string]string {
			return map[string]string{sig: w.header(t, w.key, "/v1/test/echo", price, func(r *x402.PaymentRequirements) { r.Scheme = "upto" }, nil)}
		}, 402, x402.ReasonInvalidScheme},
		{"underpayment", func(t *testing.T) map[string]string {
			return map[string]string{sig: w.header(t, w.key, "/v1/test/echo", price-1, nil, nil)}
		}, 402, x402.ReasonValueMismatch},
		{"overpayment", func(t *testing.T) map[string]string {
			return map[string]string{sig: w.header(t, w.key, "/v1/test/echo", price+1, nil, nil)}
		}, 402, x402.ReasonValueMismatch},
		{"expired", func(t *testing.T) map[string]string {
			return map[string]string{sig: w.header(t, w.key, "/v1/test/echo", price, nil, func(a *exact.Authorization) {
				a.ValidBefore = big.NewInt(time.Now().Add(-time.Second).Unix())
			})}
		}, 402, x402.ReasonValidBefore},
		{"not yet valid", func(t *testing.T) map[string]string {
			return map[string]string{sig: w.header(t, w.key, "/v1/test/echo", price, nil, func(a *exact.Authorization) {
				a.ValidAfter = big.NewInt(time.Now().Add(time.Hour).Unix())
			})}
		}, 402, x402.ReasonValidAfter},
		{"signed by another key", func(t *testing.T) map[string]string {
			h := w.header(t, stranger, "/v1/test/echo", price, nil, nil)
			p, _ := x402.DecodePayment(h)
			p.Payload.Authorization.From = w.dev.Payer // claims to be the payer
			enc, _ := x402.Encode(p)
			return map[string]string{sig: enc}
		}, 402, x402.ReasonSignature},
		{"insufficient balance", func(t *testing.T) map[string]string {
			return map[string]string{sig: w.header(t, poor, "/v1/test/echo", price, nil, nil)}
		}, 402, x402.ReasonInsufficientFunds},
		{"payment for another route", func(t *testing.T) map[string]string {
			return map[string]string{sig: w.header(t, w.key, "/v1/test/other", price, nil, nil)}
		}, 402, x402.ReasonOtherResource},
		{"v2 payload in X-PAYMENT", func(t *testing.T) map[string]string {
			return map[string]string{"X-Payment": w.header(t, w.key, "/v1/test/echo", price, nil, nil)}
		}, 402, x402.ReasonInvalidVersion},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := w.get(t, "/v1/test/echo", map[string]string{"q": "x"}, c.hdr(t))
			if a.status != c.status {
				t.Fatalf("status %d, want %d: %s", a.status, c.status, a.body)
			}
			if c.status == 402 && !reasonIs(a.reason, c.reason) {
				t.Fatalf("reason %q, want %q", a.reason, c.reason)
			}
		})
	}
	if got := w.balance(t, w.dev.PayTo); got != 0 {
		t.Fatalf("bad payments moved %d", got)
	}
	if n := len(w.dev.Facilitator.Ledger().List(ledger.Settled, ledger.Queued, ledger.Broadcast, ledger.Reserved)); n != 0 {
		t.Fatalf("%d payments held after bad payments", n)
	}
}

func TestReusedNonce(t *testing.T) {
	w := newWorld(t, paywall.Policy{Settlement: x402.ModeSync})
	h := withID(t, w.header(t, w.key, "/v1/test/echo", price, nil, nil), "pay_reused-nonce-test-0001")
	first := w.get(t, "/v1/test/echo", map[string]string{"q": "a"}, map[string]string{x402.HeaderPaymentSignature: h})
	if first.status != 200 || first.receipt == nil || !first.receipt.Success {
		t.Fatalf("first: %d %s", first.status, first.body)
	}
	// The same payment and identifier for the same request: the same answer, no second charge.
	replay := w.get(t, "/v1/test/echo", map[string]string{"q": "a"}, map[string]string{x402.HeaderPaymentSignature: h})
	if replay.status != 200 || replay.body != first.body || replay.receipt.Transaction != first.receipt.Transaction {
		t.Fatalf("replay: %d %s %+v", replay.status, replay.body, replay.receipt)
	}
	// The same payment and identifier for another request: a conflict.
	if a := w.get(t, "/v1/test/echo", map[string]string{"q": "b"}, map[string]string{x402.HeaderPaymentSignature: h}); a.status != 409 || strings.Contains(a.body, `"q"`) {
		t.Fatalf("identifier reused for another request: %d %s", a.status, a.body)
	}
	// Without an identifier a settled payment is never answered again, even for the same request.
	bare := w.header(t, w.key, "/v1/test/echo", price, nil, nil)
	if a := w.get(t, "/v1/test/echo", map[string]string{"q": "c"}, map[string]string{x402.HeaderPaymentSignature: bare}); a.status != 200 {
		t.Fatalf("paid call without identifier: %d %s", a.status, a.body)
	}
	if a := w.get(t, "/v1/test/echo", map[string]string{"q": "c"}, map[string]string{x402.HeaderPaymentSignature: bare}); a.status != 402 || !reasonIs(a.reason, x402.ReasonNonceUsed) {
		t.Fatalf("repeat without identifier: %d %q", a.status, a.reason)
	}
	// Twenty requests racing with one fresh payment: exactly one is served.
	h2 := w.header(t, w.key, "/v1/test/echo", price, nil, nil)
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := w.get(t, "/v1/test/echo", map[string]string{"q": "race" + strconv.Itoa(i)}, map[string]string{x402.HeaderPaymentSignature: h2})
			mu.Lock()
			statuses[a.status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if statuses[200] != 1 || statuses[402] != 19 {
		t.Fatalf("statuses %v, want one 200 and nineteen 402", statuses)
	}
	if got := w.balance(t, w.dev.PayTo); got != 3*price {
		t.Fatalf("payTo received %d, want %d", got, 3*price)
	}
	// The same request retried concurrently with the same payment and identifier: every copy
	// gets the one answer (waiting for the first, or replayed), and it is charged once.
	h3 := withID(t, w.header(t, w.key, "/v1/test/echo", price, nil, nil), "pay_concurrent-retry-0001")
	answers := make(chan answer, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers <- w.get(t, "/v1/test/echo", map[string]string{"q": "same"}, map[string]string{x402.HeaderPaymentSignature: h3})
		}()
	}
	wg.Wait()
	close(answers)
	var tx string
	for a := range answers {
		if a.status != 200 || a.receipt == nil || !strings.Contains(a.body, `"q":"same"`) {
			t.Fatalf("retry of the same request: %d %s", a.status, a.body)
		}
		if tx != "" && a.receipt.Transaction != tx {
			t.Fatalf("two receipts: %s and %s", tx, a.receipt.Transaction)
		}
		tx = a.receipt.Transaction
	}
	if got := w.balance(t, w.dev.PayTo); got != 4*price {
		t.Fatalf("payTo received %d, want %d", got, 4*price)
	}
}

func TestFailedWorkChargesNothing(t *testing.T) {
	w := newWorld(t, paywall.Policy{Settlement: x402.ModeSync})
	h := w.header(t, w.key, "/v1/test/fail", price, nil, nil)
	if a := w.get(t, "/v1/test/fail", nil, map[string]string{x402.HeaderPaymentSignature: h}); a.status != 502 || a.receipt != nil {
		t.Fatalf("upstream failure: %d %s", a.status, a.body)
	}
	h = w.header(t, w.key, "/v1/test/slow", price, nil, nil)
	if a := w.get(t, "/v1/test/slow", nil, map[string]string{x402.HeaderPaymentSignature: h}); a.status != 504 || a.receipt != nil {
		t.Fatalf("deadline: %d %s", a.status, a.body)
	}
	if got := w.balance(t, w.dev.PayTo); got != 0 {
		t.Fatalf("failed calls moved %d", got)
	}
	// The released authorization is still good: the payer can retry the same call with it.
	if a := w.get(t, "/v1/test/slow", nil, map[string]string{x402.HeaderPaymentSignature: h}); a.status != 504 {
		t.Fatalf("retry with the released payment: %d %q", a.status, a.reason)
	}
}

func TestFreeFirstCall(t *testing.T) {
	w := newWorld(t, paywall.DefaultPolicy())
	a := w.get(t, "/v1/test/free", map[string]string{"q": "x"}, nil)
	var body struct {
		Free paywall.FreeFirstCall `json:"free_first_call"`
		Q    string                `json:"q"`
	}
	if a.status != 200 || json.Unmarshal([]byte(a.body), &body) != nil || !body.Free.Granted || body.Q != "x" {
		t.Fatalf("first call: %d %s", a.status, a.body)
	}
	if a := w.get(t, "/v1/test/free", map[string]string{"q": "y"}, nil); a.status != 402 {
		t.Fatalf("second call: %d %s", a.status, a.body)
	}
	c := &pay.Client{Key: w.key}
	res, err := c.Do(context.Background(), pay.Request{URL: w.base + "/v1/test/free", Params: map[string]string{"q": "z"}})
	if err != nil || res.Status != 200 || res.Receipt == nil {
		t.Fatalf("paid call after the free one: %v %+v", err, res)
	}
	body.Free = paywall.FreeFirstCall{Granted: true}
	if json.Unmarshal(res.Body, &body) != nil || body.Free.Granted || body.Free.Note == "" || body.Q != "z" {
		t.Fatalf("paid call body: %s", res.Body)
	}
}

func TestPayCommand(t *testing.T) {
	w := newWorld(t, paywall.Policy{Settlement: x402.ModeSync})
	cases := []struct {
		name    string
		args    []string
		ok      bool
		stdout  string
		receipt bool
	}{
		{"paid GET", []string{"--key", w.dev.PayerKey, "GET", w.base + "/v1/test/echo", "q=cli"}, true, `"q":"cli"`, true},
		{"paid POST", []string{"--key", w.dev.PayerKey, "POST", w.base + "/v1/test/echo", "q=body"}, true, `"q":"body"`, true},
		{"failing route", []string{"--key", w.dev.PayerKey, w.base + "/v1/test/fail"}, false, `"upstream_failed"`, false},
		{"over the limit", []string{"--key", w.dev.PayerKey, "--max", "9999", w.base + "/v1/test/echo"}, false, "", false},
		{"no key", []string{w.base + "/v1/test/echo"}, false, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			err := pay.Main(context.Background(), c.args, &stdout, &stderr)
			if (err == nil) != c.ok {
				t.Fatalf("err %v, want ok=%v; stderr %s", err, c.ok, stderr.String())
			}
			if !strings.Contains(stdout.String(), c.stdout) {
				t.Fatalf("stdout %q lacks %q", stdout.String(), c.stdout)
			}
			if strings.Contains(stderr.String(), `"success": true`) != c.receipt {
				t.Fatalf("stderr %q: receipt shown = %v, want %v", stderr.String(), !c.receipt, c.receipt)
			}
		})
	}
	if got := w.balance(t, w.dev.PayTo); got != 2*price {
		t.Fatalf("payTo received %d, want %d", got, 2*price)
	}
}

func TestStandardFacilitatorAPI(t *testing.T) {
	w := newWorldWith(t, paywall.Policy{Settlement: x402.ModeOptimistic, OptimisticMaxPrice: price}, true)
	bare := w.header(t, w.key, "/v1/test/echo", price, nil, nil)
	h := withID(t, bare, "pay_standard-facilitator-01")
	first := w.get(t, "/v1/test/echo", map[string]string{"q": "a"}, map[string]string{x402.HeaderPaymentSignature: h})
	if first.status != 200 || first.receipt == nil || !first.receipt.Success || first.receipt.Transaction == "" {
		t.Fatalf("paid call: %d %s", first.status, first.body)
	}
	if a := w.get(t, "/v1/test/echo", map[string]string{"q": "a"}, map[string]string{x402.HeaderPaymentSignature: h}); a.status != 200 || a.receipt.Transaction != first.receipt.Transaction {
		t.Fatalf("replay: %d %s", a.status, a.body)
	}
	if a := w.get(t, "/v1/test/echo", map[string]string{"q": "a"}, map[string]string{x402.HeaderPaymentSignature: bare}); a.status != 402 || strings.Contains(a.body, `"q"`) {
		t.Fatalf("the same payment without its identifier: %d %s", a.status, a.body)
	}
	if a := w.get(t, "/v1/test/echo", map[string]string{"q": "b"}, map[string]string{x402.HeaderPaymentSignature: h}); a.status != 409 {
		t.Fatalf("identifier reused for another request: %d %q", a.status, a.reason)
	}
	h = w.header(t, w.key, "/v1/test/fail", price, nil, nil)
	if a := w.get(t, "/v1/test/fail", nil, map[string]string{x402.HeaderPaymentSignature: h}); a.status != 502 {
		t.Fatalf("failing route: %d", a.status)
	}
	if got := w.balance(t, w.dev.PayTo); got != price {
		t.Fatalf("payTo received %d, want %d", got, price)
	}
}
