package settle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/peage/appliance/settle/x402"
)

// TestBatchCompleteIdempotent: a completion asked again after its answer was lost (the same
// channel and voucher) gets the same answer, before and after a restart, and charges nothing
// more; completions an attacker could send instead commit nothing: another voucher, the right
// amount signed by someone else, no voucher, a voucher never held, a forged one while another
// request holds the channel (which then completes normally).
func TestBatchCompleteIdempotent(t *testing.T) {
	e := newBatchEnv(t)
	ctx := context.Background()
	e.pay(t, e.deposit(t, 50*price, price, 1))
	v2 := e.request(t, x402.BatchVoucher, 2*price, e.ch.Payer)
	r, err := e.f.BatchReserve(ctx, v2)
	if err != nil || !r.IsValid {
		t.Fatalf("reserve: %+v %v", r, err)
	}
	first, err := e.f.BatchComplete(ctx, v2.Completion(r.ID, price))
	if err != nil || !first.Success {
		t.Fatalf("complete: %+v %v", first, err)
	}
	charged := func(want uint64, calls uint64) {
		t.Helper()
		if c, _ := e.f.Channels().Get(e.id.Hex()); c.Charged != want || c.Calls != calls {
			t.Fatalf("channel charged %d over %d calls, want %d over %d", c.Charged, c.Calls, want, calls)
		}
	}
	again := func(what string) {
		t.Helper()
		res, err := e.f.BatchComplete(ctx, v2.Completion(r.ID, price))
		if err != nil || !reflect.DeepEqual(res, first) {
			t.Fatalf("%s: %+v %v, want %+v", what, res, err, first)
		}
		charged(2*price, 2)
	}
	again("the same completion again")
	e.restart(t, func(*Options) {})
	again("the same completion after a restart")

	stranger, _ := crypto.GenerateKey()
	v3 := e.request(t, x402.BatchVoucher, 3*price, e.ch.Payer)
	refused := func(what string, req *x402.BatchCompleteRequest) {
		t.Helper()
		res, err := e.f.BatchComplete(ctx, req)
		if !errors.Is(err, ErrState) || res.Success {
			t.Fatalf("%s: %+v %v, want a refusal", what, res, err)
		}
	}
	byStranger := e.request(t, x402.BatchVoucher, 2*price, stranger).Completion(r.ID, price)
	noVoucher := &x402.BatchCompleteRequest{ID: r.ID, Charged: price}
	refused("a voucher never held", v3.Completion(r.ID, price))
	refused("the last amount signed by someone else", byStranger)
	refused("no voucher", noVoucher)
	charged(2*price, 2)

	// v3 is held; a forged completion leaves it held, the lost answer's retry still gets its
	// answer, and v3's own completion commits it.
	if r3, err := e.f.BatchReserve(ctx, v3); err != nil || !r3.IsValid {
		t.Fatalf("reserve v3: %+v %v", r3, err)
	}
	forged := v3.Completion(r.ID, price)
	forged.MaxClaimableAmount = strconv.Itoa(4 * price)
	refused("a forged amount while another request holds the channel", forged)
	refused("a stranger's voucher while another request holds the channel", byStranger)
	again("the lost answer's retry while another request holds the channel")
	if res, err := e.f.BatchComplete(ctx, v3.Completion(r.ID, price)); err != nil || !res.Success || res.Extra.ChargedAmount != strconv.Itoa(price) {
		t.Fatalf("v3's completion: %+v %v", res, err)
	}
	charged(3*price, 3)
	refused("v2 after v3 completed", v2.Completion(r.ID, price))

	// Over HTTP: a refusal is a 409, the retry a 200 with the same answer.
	for _, tc := range []struct {
		name string
		req  *x402.BatchCompleteRequest
		code int
	}{
		{"a voucher never held", e.request(t, x402.BatchVoucher, 4*price, e.ch.Payer).Completion(r.ID, price), http.StatusConflict},
		{"the last completion again", v3.Completion(r.ID, price), http.StatusOK},
	} {
		w := httptest.NewRecorder()
		b, _ := json.Marshal(tc.req)
		e.f.Handler().ServeHTTP(w, httptest.NewRequest("POST", "/batch/complete", bytes.NewReader(b)))
		if w.Code != tc.code {
			t.Fatalf("%s over HTTP: %d %s", tc.name, w.Code, w.Body)
		}
	}
	charged(3*price, 3)
}
