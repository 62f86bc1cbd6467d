package settle

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/peage/appliance/settle/client"
	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/x402"
)

// TestCompletionRecordsTheBox: the gate completes a paid call a fleet box served with the
// box's name in the context; through the settle daemon's client and HTTP API the ledger keeps
// it with the payment, and revenue is counted per box (a call served locally has none).
func TestCompletionRecordsTheBox(t *testing.T) {
	e := newEnv(t, true)
	ctx := context.Background()
	srv := httptest.NewServer(e.f.Handler())
	defer srv.Close()
	c, err := client.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ key, box string }{{"k1", "box-1"}, {"k2", "box-2"}, {"k3", "box-1"}, {"k4", ""}} {
		req := e.request(t, e.ch.Payer, nil)
		res, err := c.Reserve(ctx, &x402.ReserveRequest{FacilitatorRequest: *req, Route: "fr.tva", Key: tc.key})
		if err != nil || !res.IsValid {
			t.Fatalf("reserve: %+v %v", res, err)
		}
		s, err := c.Complete(x402.WithBox(ctx, tc.box), res.ID, x402.ModeSync)
		if err != nil || !s.Success {
			t.Fatalf("complete: %+v %v", s, err)
		}
		if rec, _ := e.f.Ledger().Get(res.ID); rec.Status != ledger.Settled || rec.Box != tc.box {
			t.Fatalf("ledger: %s on box %q, want settled on %q", rec.Status, rec.Box, tc.box)
		}
	}
	calls := map[string]int{}
	for _, r := range e.f.Revenue() {
		calls[r.Box] += r.Calls
		if r.Amount != uint64(r.Calls)*price {
			t.Errorf("revenue row %+v", r)
		}
	}
	if calls["box-1"] != 2 || calls["box-2"] != 1 || calls[""] != 1 || len(calls) != 3 {
		t.Fatalf("calls per box %v", calls)
	}
}
