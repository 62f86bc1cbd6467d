package settle_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/x402"
)

// TestPaidCallWaitsForOneFsync: an exact call through the real server, gate and settle's
// socket waits for one fsync of the ledger, its completion's, not also its reservation's. The
// route's handler runs between the two: the reservation it runs under has been answered
// without an fsync, and the call is answered only once the completion's fsync (which makes
// the reservation, an earlier record of the same journal, durable too) is done.
func TestPaidCallWaitsForOneFsync(t *testing.T) {
	for _, tc := range []struct {
		mode   string
		status ledger.Status // of the payment once the call is answered
	}{
		{x402.ModeOptimistic, ""}, // queued, or already settled by the queue
		{x402.ModeSync, ledger.Settled},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			var dev atomic.Pointer[settle.Dev]
			var before, atWork atomic.Uint64
			probe := catalog.Entry{Method: "GET", Path: "/v1/test/probe", Summary: "fsyncs so far", Kind: catalog.Paid, Price: price,
				Timeout: 30 * time.Second, Handler: func(context.Context, *catalog.Request) (any, error) {
					atWork.Store(dev.Load().Facilitator.LedgerFsyncs())
					return map[string]bool{"ok": true}, nil
				}}
			w := newWorldWith(t, paywall.Policy{Settlement: tc.mode, OptimisticMaxPrice: price}, false, probe)
			dev.Store(w.dev)
			h := w.header(t, w.key, "/v1/test/probe", price, nil, nil)
			before.Store(w.dev.Facilitator.LedgerFsyncs())
			a := w.get(t, "/v1/test/probe", nil, map[string]string{x402.HeaderPaymentSignature: h})
			after := w.dev.Facilitator.LedgerFsyncs()
			if a.status != 200 || a.receipt == nil || !a.receipt.Success {
				t.Fatalf("paid call: %d %s %+v", a.status, a.body, a.receipt)
			}
			if got := atWork.Load() - before.Load(); got != 0 {
				t.Errorf("the reservation waited for %d fsyncs before the work ran, want 0", got)
			}
			if after == atWork.Load() {
				t.Errorf("the call was answered without an fsync after its work")
			}
			recs := w.dev.Facilitator.Ledger().List()
			if len(recs) != 1 || !(recs[0].Status == ledger.Queued || recs[0].Status == ledger.Broadcast || recs[0].Status == ledger.Settled) ||
				(tc.status != "" && recs[0].Status != tc.status) {
				t.Fatalf("ledger after the call: %+v", recs)
			}
		})
	}
}
