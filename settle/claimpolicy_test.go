package settle

import (
	"context"
	"encoding/json"
	"math/big"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"

	"github.com/peage/appliance/settle/batch"
	"github.com/peage/appliance/settle/devchain"
	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/usdc"
	"github.com/peage/appliance/settle/x402"
)

// TestClaimPolicyConfig: the defaults make a valid policy, and each bad value is refused naming
// its key.
func TestClaimPolicyConfig(t *testing.T) {
	p, err := DefaultConfig().ClaimPolicy()
	if err != nil || p.Interval != DefaultClaimInterval || p.MinClaimable != DefaultClaimMinValue || p.MinChannelClaimable != DefaultClaimMinChannel ||
		p.WithdrawMargin != DefaultClaimWithdrawMargin {
		t.Fatalf("defaults: %+v %v", p, err)
	}
	for _, tc := range []struct {
		name    string
		edit    func(c *Config)
		wantErr string
	}{
		{"zero interval", func(c *Config) { c.ClaimIntervalSeconds = 0 }, "settle.claim_interval_seconds"},
		{"negative interval", func(c *Config) { c.ClaimIntervalSeconds = -5 }, "settle.claim_interval_seconds"},
		{"interval over a day", func(c *Config) { c.ClaimIntervalSeconds = 86401 }, "settle.claim_interval_seconds"},
		{"margin below interval plus receipt wait", func(c *Config) { c.ClaimIntervalSeconds, c.ClaimWithdrawMarginSeconds = 300, 389 }, "settle.claim_withdraw_margin_seconds"},
		{"margin exactly interval plus receipt wait", func(c *Config) { c.ClaimIntervalSeconds, c.ClaimWithdrawMarginSeconds = 300, 390 }, ""},
		{"zero minimum: claim anything", func(c *Config) { c.ClaimMinValue = 0 }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.edit(&c)
			_, err := c.ClaimPolicy()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want one naming %s", err, tc.wantErr)
			}
		})
	}
}

// claimSetup serves 3 paid calls on one channel and 1 on another (4 × price unclaimed), and,
// when withdraw is set, has the second channel's payer start a timed withdrawal.
func claimSetup(t *testing.T, e *batchEnv, withdraw bool) {
	t.Helper()
	e.useSalt(21)
	e.pay(t, e.deposit(t, 50*price, price, 1))
	e.pay(t, e.request(t, x402.BatchVoucher, 2*price, e.ch.Payer))
	e.pay(t, e.request(t, x402.BatchVoucher, 3*price, e.ch.Payer))
	e.useSalt(22)
	e.pay(t, e.deposit(t, 50*price, price, 2))
	if !withdraw {
		return
	}
	sc := usdc.NewX402BatchSettlement()
	opts := bind.NewKeyedTransactor(e.ch.Payer, big.NewInt(devchain.ChainID))
	tx, err := bind.Transact(sc.Instance(e.ch.Client(), batch.SettlementAddress), opts, sc.PackInitiateWithdraw(boundConfig(&e.cfg), big.NewInt(49*price)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bind.WaitMined(context.Background(), e.ch.Client(), tx.Hash()); err != nil {
		t.Fatal(err)
	}
}

// TestClaimPolicyKnobs: each knob of the policy changes what one claim round does. The clock
// of the facilitator is moved (the chain's withdrawal started at its real time) to place the
// round before or inside the withdrawal margin; the withdrawal delay is 15 minutes.
func TestClaimPolicyKnobs(t *testing.T) {
	for _, tc := range []struct {
		name      string
		policy    ClaimPolicy
		withdraw  bool
		later     time.Duration // facilitator clock ahead of the chain's
		wantClaim bool
		claimed   uint64 // value claimed when not all 4 × price
	}{
		{name: "unclaimed below the minimum", policy: ClaimPolicy{MinClaimable: 5 * price}},
		{name: "unclaimed at the minimum", policy: ClaimPolicy{MinClaimable: 4 * price}, wantClaim: true},
		{name: "no minimum", policy: ClaimPolicy{}, wantClaim: true},
		{name: "withdrawal far from finalizing", policy: ClaimPolicy{MinClaimable: 100 * price, WithdrawMargin: 5 * time.Minute}, withdraw: true},
		{name: "withdrawal inside the margin", policy: ClaimPolicy{MinClaimable: 100 * price, WithdrawMargin: 5 * time.Minute}, withdraw: true, later: 11 * time.Minute, wantClaim: true},
		{name: "wider margin covers the same moment", policy: ClaimPolicy{MinClaimable: 100 * price, WithdrawMargin: 20 * time.Minute}, withdraw: true, wantClaim: true},
		{name: "zero margin: claimed at first sight", policy: ClaimPolicy{MinClaimable: 100 * price}, withdraw: true, wantClaim: true},
		{name: "no withdrawal: the margin does nothing", policy: ClaimPolicy{MinClaimable: 100 * price, WithdrawMargin: time.Hour}, later: time.Hour},
		{name: "a channel under its minimum waits", policy: ClaimPolicy{MinChannelClaimable: 2 * price}, wantClaim: true, claimed: 3 * price},
		{name: "channels at their minimum are claimed", policy: ClaimPolicy{MinChannelClaimable: price}, wantClaim: true},
		{name: "the round's minimum counts the channels that join", policy: ClaimPolicy{MinClaimable: 4 * price, MinChannelClaimable: 2 * price}},
		{name: "a channel under its minimum with its withdrawal due", policy: ClaimPolicy{MinChannelClaimable: 2 * price}, withdraw: true, wantClaim: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newBatchEnv(t)
			var ahead atomic.Int64
			e.restart(t, func(o *Options) { o.Now = func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) } })
			claimSetup(t, e, tc.withdraw)
			ahead.Store(int64(tc.later))
			rep, err := e.f.ClaimOnce(context.Background(), tc.policy)
			if err != nil {
				t.Fatal(err)
			}
			want := uint64(0)
			if tc.wantClaim {
				want = 4 * price
				if tc.claimed != 0 {
					want = tc.claimed
				}
			}
			if rep.Claimed.Uint64() != want || rep.Swept.Uint64() != want || (rep.ClaimTx != "") != tc.wantClaim {
				t.Fatalf("claimed %s swept %s tx %q, want %d", rep.Claimed, rep.Swept, rep.ClaimTx, want)
			}
			if got := e.balance(t, e.payTo); got != int64(want) {
				t.Fatalf("payTo holds %d, want %d", got, want)
			}
			var unclaimed uint64
			for _, c := range e.f.Channels().List() {
				unclaimed += c.Unclaimed()
			}
			if unclaimed != 4*price-want {
				t.Fatalf("unclaimed after the round %d, want %d", unclaimed, 4*price-want)
			}
		})
	}
}

// TestClaimIntervalRunsClaimer: the interval drives the background claimer: a short one claims
// with no one calling ClaimOnce; a long one has not looked yet in the same time.
func TestClaimIntervalRunsClaimer(t *testing.T) {
	for _, tc := range []struct {
		name      string
		interval  time.Duration
		wantClaim bool
	}{
		{"short interval claims by itself", 20 * time.Millisecond, true},
		{"an hour: no round yet", time.Hour, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newBatchEnv(t)
			claimSetup(t, e, false)
			e.restart(t, func(o *Options) { o.Claim = ClaimPolicy{Interval: tc.interval} })
			deadline := time.Now().Add(30 * time.Second)
			if !tc.wantClaim {
				deadline = time.Now().Add(500 * time.Millisecond) // 25 short intervals
			}
			for time.Now().Before(deadline) && e.f.ClaimerState().LastClaimTx == "" {
				time.Sleep(10 * time.Millisecond)
			}
			st := e.f.ClaimerState()
			want := int64(0)
			if tc.wantClaim {
				want = 4 * price
				if st.Rounds == 0 || st.LastClaimTx == "" || st.LastError != "" {
					t.Fatalf("claimer state %+v", st)
				}
			} else if st.Rounds != 0 {
				t.Fatalf("an hour's interval ran %d rounds", st.Rounds)
			}
			if got := e.balance(t, e.payTo); got != want {
				t.Fatalf("payTo holds %d, want %d", got, want)
			}
		})
	}
}

// restart closes the facilitator and opens it again on the same ledger with edited options.
func (e *batchEnv) restart(t *testing.T, edit func(o *Options)) {
	t.Helper()
	if err := e.f.Close(); err != nil {
		t.Fatal(err)
	}
	edit(&e.opts)
	f, err := New(context.Background(), e.opts)
	if err != nil {
		t.Fatal(err)
	}
	e.f = f
}

// TestWithdrawalOnClaimedChannelShows: a payer starts a timed withdrawal on a channel whose
// charges are all claimed; the next claim round sends nothing but mirrors it, so GET
// /channels (which `appliance ledger`, `appliance status` and the dashboard read) shows the
// pending withdrawal and when it can finalize.
func TestWithdrawalOnClaimedChannelShows(t *testing.T) {
	e := newBatchEnv(t)
	ctx := context.Background()
	e.pay(t, e.deposit(t, 50*price, price, 1))
	e.pay(t, e.request(t, x402.BatchVoucher, 2*price, e.ch.Payer))
	if rep, err := e.f.ClaimOnce(ctx, ClaimPolicy{}); err != nil || rep.Channels != 1 {
		t.Fatalf("claim: %+v %v", rep, err)
	}
	sc := usdc.NewX402BatchSettlement()
	opts := bind.NewKeyedTransactor(e.ch.Payer, big.NewInt(devchain.ChainID))
	tx, err := bind.Transact(sc.Instance(e.ch.Client(), batch.SettlementAddress), opts, sc.PackInitiateWithdraw(boundConfig(&e.cfg), big.NewInt(48*price)))
	if err != nil {
		t.Fatal(err)
	}
	r, err := bind.WaitMined(ctx, e.ch.Client(), tx.Hash())
	if err != nil || r.Status != 1 {
		t.Fatalf("initiateWithdraw: %v %+v", err, r)
	}
	on, err := e.f.ReadChannel(ctx, e.id)
	if err != nil || on.WithdrawRequestedAt == 0 {
		t.Fatalf("no withdrawal on chain: %+v %v", on, err)
	}
	channels := func() ledger.ChannelsReport {
		t.Helper()
		var rep ledger.ChannelsReport
		w := httptest.NewRecorder()
		e.f.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/channels", nil))
		if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &rep) != nil || len(rep.Channels) != 1 {
			t.Fatalf("GET /channels: %d %s", w.Code, w.Body)
		}
		return rep
	}
	if rep := channels(); rep.Totals.PendingWithdrawals != 0 {
		t.Fatalf("a withdrawal shown before any round: %+v", rep.Totals)
	}
	rep, err := e.f.ClaimOnce(ctx, ClaimPolicy{})
	if err != nil || rep.Channels != 0 || rep.ClaimTx != "" || rep.SweepTx != "" {
		t.Fatalf("a round with nothing to claim sent something: %+v %v", rep, err)
	}
	view := channels()
	want := time.Unix(int64(on.WithdrawRequestedAt+batch.MinWithdrawDelay), 0).UTC()
	if v := view.Channels[0]; view.Totals.PendingWithdrawals != 1 || !v.WithdrawFinalizeAt.Equal(want) || v.Unclaimed != 0 || v.Balance != 50*price {
		t.Fatalf("channel view after the round: %+v totals %+v, want a withdrawal finalizing at %s", v, view.Totals, want)
	}
}
