package settle_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/internal/testenv"
	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/batchpay"
	"github.com/peage/appliance/settle/exact"
	"github.com/peage/appliance/settle/settletest"
	"github.com/peage/appliance/settle/x402"
)

// barrier holds each call of a round in its work until n calls are in theirs: calls that the
// gate, its client to settle's socket or the daemon carried one at a time would never all be
// there, and would end at the route's deadline instead.
type barrier struct {
	mu      sync.Mutex
	n, in   int
	allHere chan struct{}
}

func (b *barrier) round(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n, b.in, b.allHere = n, 0, make(chan struct{})
}

// wait holds a call until the round's n calls are all in their work (or ctx ends).
func (b *barrier) wait(ctx context.Context) (int, error) {
	b.mu.Lock()
	b.in++
	if b.in == b.n {
		close(b.allHere)
	}
	all := b.allHere
	b.mu.Unlock()
	select {
	case <-all:
		return b.n, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// TestPaidCallsOverlap: paid calls of different payers' channels, and exact payments of one
// payer, are all inside their work at once, through the real server, gate, settle's socket
// and daemon: nothing between them serializes paid calls. (Vouchers of one channel are
// serialized, as the scheme requires.) No time is measured: the calls of a round are held in
// their work until all of them are there.
func TestPaidCallsOverlap(t *testing.T) {
	testenv.NeedsChain(t)
	const n = 8
	dev, fc := settletest.StartDev(t)
	key, err := settle.LoadKey(dev.PayerKey)
	if err != nil {
		t.Fatal(err)
	}
	var b barrier
	held := catalog.Entry{Method: "GET", Path: "/v1/test/together", Summary: "held until the round's calls are all in", Kind: catalog.Paid,
		Price: price, Timeout: 30 * time.Second, Handler: func(ctx context.Context, _ *catalog.Request) (any, error) {
			in, err := b.wait(ctx)
			return map[string]int{"together": in}, err
		}}
	cat := testCatalog(t, held)
	cfg := paywall.Config{Network: dev.Network, Asset: dev.Asset, PayTo: dev.PayTo, TokenName: dev.TokenName, TokenVersion: dev.TokenVersion,
		MaxTimeoutSeconds: 60, ReceiverAuthorizer: dev.ReceiverAuthorizer, WithdrawDelaySeconds: 86_400}
	policy := paywall.Policy{Settlement: x402.ModeOptimistic, OptimisticMaxPrice: price, SettleTimeoutSeconds: 30}
	h := apitest.Start(t, cat, apitest.Options{Gate: paywall.New(cfg, policy, fc, paywall.GateOptions{}), Pay: cfg})
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	t.Cleanup(hc.CloseIdleConnections)
	entry, _, err := cat.Lookup("GET", held.Path)
	if err != nil {
		t.Fatal(err)
	}
	url := h.BaseURL + held.Path
	call := func(p any) error {
		hdr, err := x402.Encode(p)
		if err != nil {
			return err
		}
		req, err := http.NewRequest("GET", url, nil)
		if err != nil {
			return err
		}
		req.Header.Set(x402.HeaderPaymentSignature, hdr)
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("answered %d %s", resp.StatusCode, body)
		}
		return nil
	}
	together := func(what string, payloads []any) {
		t.Helper()
		b.round(len(payloads))
		errs := make(chan error, len(payloads))
		for _, p := range payloads {
			go func() { errs <- call(p) }()
		}
		for range payloads {
			if err := <-errs; err != nil {
				b.mu.Lock()
				in := b.in
				b.mu.Unlock()
				t.Fatalf("%s: %d of %d calls were in their work together: %v", what, in, len(payloads), err)
			}
		}
	}

	channels := make([]*batchpay.Channel, n)
	deposits, vouchers, exacts := make([]any, n), make([]any, n), make([]any, n)
	reqs := cfg.Requirements(entry)
	res := &x402.ResourceInfo{URL: url}
	for i := range channels {
		if channels[i], err = batchpay.Open(key, cfg.BatchRequirements(entry), common.Hash{31: byte(i + 1)}); err != nil {
			t.Fatal(err)
		}
		dep, err := channels[i].Deposit(10*price, price, int64(i+1))
		if err != nil {
			t.Fatal(err)
		}
		v, err := channels[i].Voucher(2 * price)
		if err != nil {
			t.Fatal(err)
		}
		dep.PaymentPayload.Resource, v.PaymentPayload.Resource = res, res
		deposits[i], vouchers[i] = dep.PaymentPayload, v.PaymentPayload
		if exacts[i], err = exact.NewPayload(key, 2, &reqs, res, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	together("deposits of as many channels", deposits)
	together("vouchers of as many channels", vouchers)
	together("exact payments of one payer", exacts)
}
