package settle_test

// Paid paths used as an attacker would, through the real server and the embedded chain: each
// attack must end with no result delivered and no money owed.

import (
	"context"
	"io"
	"math/big"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/routes/infra"
	proxyroutes "github.com/peage/appliance/api/routes/proxy"
	"github.com/peage/appliance/internal/journal"
	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/internal/state"
	"github.com/peage/appliance/internal/testenv"
	"github.com/peage/appliance/proxyd/client"
	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/chain"
	settleclient "github.com/peage/appliance/settle/client"
	"github.com/peage/appliance/settle/devchain"
	"github.com/peage/appliance/settle/exact"
	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/usdc"
	"github.com/peage/appliance/settle/x402"
)

// keyShop stands in for proxyd's sales desk: it issues a fresh key per sale and records which
// were revoked, so a test can count what an attacker obtained.
type keyShop struct {
	mu      sync.Mutex
	issued  []string
	revoked map[string]bool
}

func (k *keyShop) Sell(_ context.Context, gb int) (*client.Sale, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	key := x402.NewPaymentIdentifier()
	k.issued = append(k.issued, key)
	return &client.Sale{Key: key, GB: gb, Bytes: int64(gb) << 30, ValidDays: 30, ProxyHost: "127.0.0.1", ProxyPort: 8118,
		ExpiresAt: time.Now().Add(30 * 24 * time.Hour), Exit: client.Exit{IP: "203.0.113.7", Country: "FR", ASN: "AS3215"}}, nil
}

func (k *keyShop) Revoke(_ context.Context, key string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.revoked == nil {
		k.revoked = map[string]bool{}
	}
	k.revoked[key] = true
	return nil
}

func (k *keyShop) live() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.issued) - len(k.revoked)
}

func (*keyShop) Usage(context.Context, string) (*client.Usage, error) { return nil, io.EOF }
func (*keyShop) Status(context.Context) (*client.Status, error) {
	return &client.Status{Live: true, Exit: &client.Exit{IP: "203.0.113.7", Country: "FR"}}, nil
}

// proxySale is the real /v1/proxy/1gb route bound to shop.
func proxySale(t *testing.T, shop *keyShop) catalog.Entry {
	t.Helper()
	c, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	routes := proxyroutes.With(shop, nil)
	if err := routes.Bind(c); err != nil {
		t.Fatal(err)
	}
	if err := routes.CheckExit(context.Background()); err != nil { // nothing is sold before it
		t.Fatal(err)
	}
	return *c.Entry("proxy.1gb")
}

// rebuiltFromChain is what anyone reading the chain can build after a settlement: the signed
// authorization is the calldata of transferWithAuthorization.
func rebuiltFromChain(t *testing.T, w *world, tx, path string, p uint64) string {
	t.Helper()
	ctx := context.Background()
	txn, _, err := w.dev.Chain.Client().TransactionByHash(ctx, common.HexToHash(tx))
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := usdc.TestUSDCMetaData.ParseABI()
	if err != nil {
		t.Fatal(err)
	}
	m, err := parsed.MethodById(txn.Data()[:4])
	if err != nil {
		t.Fatal(err)
	}
	in, err := m.Inputs.Unpack(txn.Data()[4:])
	if err != nil || len(in) != 9 {
		t.Fatalf("calldata of %s: %v (%d inputs)", m.Name, err, len(in))
	}
	a := &exact.Authorization{From: in[0].(common.Address), To: in[1].(common.Address), Value: in[2].(*big.Int),
		ValidAfter: in[3].(*big.Int), ValidBefore: in[4].(*big.Int), Nonce: in[5].([32]byte)}
	r, s := in[7].([32]byte), in[8].([32]byte)
	sig := append(append(r[:], s[:]...), in[6].(uint8))
	e := *w.cat.ByPath(path)
	e.Price = p
	req := w.cfg.Requirements(&e)
	payload := x402.PaymentPayload{X402Version: 2, Accepted: &req, Resource: &x402.ResourceInfo{URL: w.base + path},
		Payload: x402.ExactPayload{Signature: "0x" + common.Bytes2Hex(sig), Authorization: exact.WireAuthorization(a)}}
	enc, err := x402.Encode(payload)
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

// forgedFrom keeps the victim's from and nonce and drops the signature.
func forgedFrom(t *testing.T, h string) string {
	t.Helper()
	p, err := x402.DecodePayment(h)
	if err != nil {
		t.Fatal(err)
	}
	p.Payload.Signature = "0x00"
	enc, _ := x402.Encode(p)
	return enc
}

func TestReplaysFromChainDataAreRefused(t *testing.T) {
	shop := &keyShop{}
	w := newWorldWith(t, paywall.Policy{Settlement: x402.ModeSync}, false, proxySale(t, shop))
	sig := x402.HeaderPaymentSignature
	for _, route := range []struct {
		path   string
		query  map[string]string
		price  uint64
		result string // what only a paid answer contains
	}{
		{"/v1/test/echo", map[string]string{"q": "secret"}, price, `"q":"secret"`},
		{"/v1/proxy/1gb", nil, 3_500_000, `"key":"`}, // the 402's Bazaar example has "key":null
	} {
		t.Run(route.path, func(t *testing.T) {
			if err := w.dev.Chain.Mint(context.Background(), common.HexToAddress(w.dev.Payer), 10_000_000); err != nil {
				t.Fatal(err)
			}
			victim := withID(t, w.header(t, w.key, route.path, route.price, nil, nil), "pay_victims-own-secret"+strings.ReplaceAll(route.path, "/", "-"))
			paid := w.get(t, route.path, route.query, map[string]string{sig: victim})
			if paid.status != 200 || !strings.Contains(paid.body, route.result) || paid.receipt.Transaction == "" {
				t.Fatalf("the victim's call: %d %s", paid.status, paid.body)
			}
			issued := shop.live()
			fromChain := rebuiltFromChain(t, w, paid.receipt.Transaction, route.path, route.price)
			attacks := map[string]string{
				"victim's from and nonce, zero signature":          forgedFrom(t, victim),
				"the same, with an identifier of its own":          withID(t, forgedFrom(t, victim), "pay_attackers-guess-0001"),
				"rebuilt from the settled transaction":             fromChain,
				"rebuilt from the transaction, with an identifier": withID(t, fromChain, "pay_attackers-guess-0002"),
			}
			for name, h := range attacks {
				a := w.get(t, route.path, route.query, map[string]string{sig: h})
				if a.status == 200 || strings.Contains(a.body, route.result) || a.status >= 500 {
					t.Fatalf("%s: %d %s", name, a.status, a.body)
				}
			}
			if shop.live() != issued {
				t.Fatalf("the attacks got %d proxy keys issued", shop.live()-issued)
			}
			// The victim's own retry (same identifier, same payload) still gets the result.
			if again := w.get(t, route.path, route.query, map[string]string{sig: victim}); again.status != 200 || again.body != paid.body {
				t.Fatalf("the victim's retry: %d %s", again.status, again.body)
			}
		})
	}
}

// cancel is the payer taking back, on chain, the authorization that pays for the call r
// while its work runs.
func (w *world) cancel(ctx context.Context, r *catalog.Request) error {
	p, err := x402.DecodePayment(r.Header.Get(x402.HeaderPaymentSignature))
	if err != nil {
		return err
	}
	nonce := common.HexToHash(p.Payload.Authorization.Nonce)
	d := exact.Domain{Name: w.cfg.TokenName, Version: w.cfg.TokenVersion, ChainID: devchain.ChainID, Contract: common.HexToAddress(w.cfg.Asset)}
	sig, err := exact.SignCancel(w.key, d, nonce)
	if err != nil {
		return err
	}
	return w.dev.Chain.CancelAuthorization(ctx, common.HexToAddress(w.dev.Payer), nonce, sig)
}

func TestShortValidityIsRefusedBeforeTheWork(t *testing.T) {
	w := newWorld(t, paywall.Policy{Settlement: x402.ModeOptimistic, OptimisticMaxPrice: 100_000})
	h := w.header(t, w.key, "/v1/test/echo", price, nil, func(a *exact.Authorization) {
		a.ValidBefore = big.NewInt(time.Now().Add(7 * time.Second).Unix())
	})
	a := w.get(t, "/v1/test/echo", map[string]string{"q": "x"}, map[string]string{x402.HeaderPaymentSignature: h})
	if a.status != 402 || !reasonIs(a.reason, x402.ReasonValidBefore) || strings.Contains(a.body, `"q"`) {
		t.Fatalf("7 s authorization on a 30 s route: %d %q %s", a.status, a.reason, a.body)
	}
	if n := len(w.dev.Facilitator.Ledger().List()); n != 0 {
		t.Fatalf("%d payments recorded", n)
	}
}

func TestCancelledDuringTheWorkIsNotDelivered(t *testing.T) {
	var w *world
	cancelling := catalog.Entry{Method: "GET", Path: "/v1/test/cancel", Summary: "the payer cancels mid-call", Kind: catalog.Paid,
		Price: price, Timeout: 30 * time.Second,
		Handler: func(ctx context.Context, r *catalog.Request) (any, error) {
			if err := w.cancel(ctx, r); err != nil {
				return nil, err
			}
			return map[string]string{"result": "delivered"}, nil
		}}
	for _, mode := range []string{x402.ModeOptimistic, x402.ModeSync} {
		t.Run(mode, func(t *testing.T) {
			w = newWorldWith(t, paywall.Policy{Settlement: mode, OptimisticMaxPrice: 100_000}, false, cancelling)
			h := w.header(t, w.key, "/v1/test/cancel", price, nil, nil)
			a := w.get(t, "/v1/test/cancel", nil, map[string]string{x402.HeaderPaymentSignature: h})
			if a.status != 402 || strings.Contains(a.body, `"result"`) {
				t.Fatalf("cancelled mid-call: %d %s", a.status, a.body)
			}
			if got := w.balance(t, w.dev.PayTo); got != 0 {
				t.Fatalf("payTo received %d", got)
			}
			recs := w.dev.Facilitator.Ledger().List()
			if len(recs) != 1 || recs[0].Status != ledger.Failed {
				t.Fatalf("ledger %+v", recs)
			}
		})
	}
}

func TestConcurrentCallsCannotSpendOneBalanceTwice(t *testing.T) {
	w := newWorld(t, paywall.Policy{Settlement: x402.ModeOptimistic, OptimisticMaxPrice: 100_000})
	payer, _ := crypto.GenerateKey()
	if err := w.dev.Chain.Mint(context.Background(), crypto.PubkeyToAddress(payer.PublicKey), price); err != nil {
		t.Fatal(err)
	}
	round := func() map[int]int {
		var wg sync.WaitGroup
		var mu sync.Mutex
		statuses := map[int]int{}
		for range 8 {
			h := w.header(t, payer, "/v1/test/echo", price, nil, nil)
			wg.Add(1)
			go func() {
				defer wg.Done()
				a := w.get(t, "/v1/test/echo", map[string]string{"q": "x"}, map[string]string{x402.HeaderPaymentSignature: h})
				mu.Lock()
				statuses[a.status]++
				mu.Unlock()
			}()
		}
		wg.Wait()
		return statuses
	}
	if s := round(); s[200] != 1 || s[402] != 7 {
		t.Fatalf("8 calls funded for one: %v", s)
	}
	for len(w.dev.Facilitator.Ledger().List(ledger.Settled)) != 1 {
		time.Sleep(5 * time.Millisecond)
	}
	if s := round(); s[200] != 0 || s[402] != 8 {
		t.Fatalf("the round repeated with an empty balance: %v", s)
	}
	if got := w.balance(t, w.dev.PayTo); got != price {
		t.Fatalf("payTo received %d, want %d", got, price)
	}
}

func TestFailedPayerGetsNoOptimisticDeliveryAgain(t *testing.T) {
	var w *world
	var cancelNext atomic.Bool
	cancelling := catalog.Entry{Method: "GET", Path: "/v1/test/maybe-cancel", Summary: "the payer cancels once", Kind: catalog.Paid,
		Price: price, Timeout: 30 * time.Second,
		Handler: func(ctx context.Context, r *catalog.Request) (any, error) {
			if cancelNext.Swap(false) {
				if err := w.cancel(ctx, r); err != nil {
					return nil, err
				}
			}
			return map[string]string{"ok": "yes"}, nil
		}}
	w = newWorldWith(t, paywall.Policy{Settlement: x402.ModeOptimistic, OptimisticMaxPrice: 100_000}, false, cancelling)
	cancelNext.Store(true)
	h := w.header(t, w.key, "/v1/test/maybe-cancel", price, nil, nil)
	if a := w.get(t, "/v1/test/maybe-cancel", nil, map[string]string{x402.HeaderPaymentSignature: h}); a.status != 402 {
		t.Fatalf("cancelled call: %d %s", a.status, a.body)
	}
	// The next call is served, but only once settled on chain: the receipt names its transaction.
	h = w.header(t, w.key, "/v1/test/maybe-cancel", price, nil, nil)
	a := w.get(t, "/v1/test/maybe-cancel", nil, map[string]string{x402.HeaderPaymentSignature: h})
	if a.status != 200 || a.receipt == nil || a.receipt.Transaction == "" {
		t.Fatalf("call after a failed payment: %d %s %+v", a.status, a.body, a.receipt)
	}
}

func TestSideEffectsOfUnpaidCallsAreRevoked(t *testing.T) {
	store, err := state.Open(t.TempDir(), state.Options{NoBackground: true, Logger: obs.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	c, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	if err := infra.With(store, time.Now).Bind(c); err != nil {
		t.Fatal(err)
	}
	var w *world
	// The payer cancels the authorization while the work runs, so settlement fails.
	cancelDuring := func(e *catalog.Entry) catalog.Entry {
		inner := e.Handler
		out := *e
		out.Handler = func(ctx context.Context, r *catalog.Request) (any, error) {
			res, err := inner(ctx, r)
			if cerr := w.cancel(ctx, r); cerr != nil {
				return nil, cerr
			}
			return res, err
		}
		return out
	}
	w = newWorldWith(t, paywall.DefaultPolicy(), false, cancelDuring(c.Entry("publish")), cancelDuring(c.Entry("callbacks")))
	for _, call := range []struct {
		path  string
		query map[string]string
	}{{"/v1/publish", map[string]string{"html": "<p>hello</p>", "title": "t"}}, {"/v1/callbacks", nil}} {
		e := w.cat.ByPath(call.path)
		h := w.header(t, w.key, call.path, e.Price, nil, nil)
		if a := w.get(t, call.path, call.query, map[string]string{x402.HeaderPaymentSignature: h}); a.status != 402 {
			t.Fatalf("%s with a settlement that fails: %d %s", call.path, a.status, a.body)
		}
	}
	pages, inboxes := store.Pages(), store.Inboxes()
	if len(pages) != 1 || len(inboxes) != 1 {
		t.Fatalf("%d pages and %d inboxes were created", len(pages), len(inboxes))
	}
	if now := time.Now(); !pages[0].Expired(now) || pages[0].HTML != "" || !inboxes[0].Expired(now) {
		t.Fatalf("unpaid page or inbox still live: %+v %+v", pages[0], inboxes[0])
	}
}

// restartable is a settle daemon on a socket that a test can kill and start again on the same
// ledger, with the gate of an API server in front of it.
type restartable struct {
	ch     *devchain.Chain
	dir    string
	sock   string
	payTo  common.Address
	f      *settle.Facilitator
	cancel context.CancelFunc
	served chan error
}

func (r *restartable) start(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	f, err := settle.New(ctx, settle.Options{Network: devchain.Network, Asset: r.ch.USDC, TokenName: devchain.TokenName,
		TokenVersion: devchain.TokenVersion, PayTo: r.payTo, Backend: r.ch.Client(), HotKey: r.ch.Hot,
		LedgerDir: filepath.Join(r.dir, "ledger"), LedgerSync: journal.SyncAlways, ExposureCap: 10 * price,
		Sender: chain.SenderOptions{PollInterval: 5 * time.Millisecond, ReceiptTimeout: 20 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", r.sock)
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	r.f, r.cancel, r.served = f, cancel, make(chan error, 1)
	go func() { r.served <- settle.Serve(sctx, f.Handler(), obs.Discard(), l) }()
}

func (r *restartable) kill(t *testing.T) {
	t.Helper()
	r.cancel()
	<-r.served
	if err := r.f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestSettleKilledMidCall(t *testing.T) {
	testenv.NeedsChain(t)
	ctx := context.Background()
	ch, err := devchain.Start(ctx, devchain.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ch.Close() })
	payTo, _ := crypto.GenerateKey()
	dir := t.TempDir()
	r := &restartable{ch: ch, dir: dir, sock: filepath.Join(dir, "settle.sock"), payTo: crypto.PubkeyToAddress(payTo.PublicKey)}
	r.start(t)
	entered, release := make(chan struct{}), make(chan struct{})
	blocking := catalog.Entry{Method: "GET", Path: "/v1/test/block", Summary: "waits for the test", Kind: catalog.Paid, Price: price,
		Timeout: 30 * time.Second, Handler: func(context.Context, *catalog.Request) (any, error) {
			entered <- struct{}{}
			<-release
			return map[string]string{"result": "delivered"}, nil
		}}
	cat := testCatalog(t, blocking)
	fc, err := settleclient.New("unix:" + r.sock)
	if err != nil {
		t.Fatal(err)
	}
	cfg := paywall.Config{Network: devchain.Network, Asset: ch.USDC.Hex(), PayTo: r.payTo.Hex(), TokenName: devchain.TokenName,
		TokenVersion: devchain.TokenVersion, MaxTimeoutSeconds: 60}
	gate := paywall.New(cfg, paywall.Policy{Settlement: x402.ModeOptimistic, OptimisticMaxPrice: 100_000, SettleTimeoutSeconds: 2}, fc, paywall.GateOptions{})
	h := apitest.Start(t, cat, apitest.Options{Gate: gate, Pay: cfg})
	w := &world{base: h.BaseURL, cfg: cfg, key: ch.Payer, cat: cat}
	pay := w.header(t, ch.Payer, "/v1/test/block", price, nil, nil)
	got := make(chan answer, 1)
	go func() { got <- w.get(t, "/v1/test/block", nil, map[string]string{x402.HeaderPaymentSignature: pay}) }()
	<-entered
	r.kill(t)
	close(release)
	a := <-got
	if a.status != 503 || strings.Contains(a.body, `"result"`) {
		t.Fatalf("settle down at completion: %d %s", a.status, a.body)
	}
	r.start(t)
	defer r.kill(t)
	recs := r.f.Ledger().List()
	if len(recs) != 1 || recs[0].Status != ledger.Released {
		t.Fatalf("ledger after restart: %+v", recs)
	}
	if b, _ := ch.Balance(ctx, r.payTo); b.Sign() != 0 {
		t.Fatalf("payTo received %s for an undelivered call", b)
	}
	// Nothing was charged, so the same authorization pays for the call once settle is back.
	go func() { <-entered }()
	if a := w.get(t, "/v1/test/block", nil, map[string]string{x402.HeaderPaymentSignature: pay}); a.status != 200 || !strings.Contains(a.body, "delivered") {
		t.Fatalf("the same payment after the restart: %d %s", a.status, a.body)
	}
}
