package ledger

import (
	"errors"
	"testing"
	"time"

	"github.com/peage/appliance/internal/journal"
	"github.com/peage/appliance/settle/x402"
)

func openChannels(t *testing.T, dir string) *Channels {
	t.Helper()
	s, err := OpenChannels(ChannelOptions{Dir: dir, Sync: journal.SyncAlways})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestChannelsCommitAbortRestart: a committed charge survives a restart exactly; an aborted
// request (failed work) leaves the channel as it was; a second request on a busy channel is
// refused; ids are case-insensitive.
func TestChannelsCommitAbortRestart(t *testing.T) {
	dir := t.TempDir()
	s := openChannels(t, dir)
	const id = "0xABCDEF"
	c, found, err := s.Begin(id)
	if err != nil || found {
		t.Fatalf("first Begin: found=%v err=%v", found, err)
	}
	if _, _, err := s.Begin("0xabcdef"); !errors.Is(err, ErrBusy) {
		t.Fatalf("second Begin on a busy channel: %v", err)
	}
	// What the request holds the channel with is taken once; the channel stays taken.
	s.Hold(id, "request", time.Now().Add(time.Hour))
	if v := s.Take("0xabcdef"); v != "request" {
		t.Fatalf("Take after Hold: %v", v)
	}
	if v := s.Take(id); v != nil {
		t.Fatalf("second Take: %v", v)
	}
	if _, _, err := s.Begin(id); !errors.Is(err, ErrBusy) {
		t.Fatalf("Begin after Take: %v", err)
	}
	c.ID, c.Config = id, x402.ChannelConfig{Payer: "0x1", WithdrawDelay: 900}
	c.Charged, c.SignedMax, c.Signature, c.Balance, c.Calls = 5000, 5000, "0xsig1", 1_000_000, 1
	if err := s.Commit(c); err != nil {
		t.Fatal(err)
	}

	// A request whose work fails: nothing changes.
	c2, found, err := s.Begin(id)
	if err != nil || !found || c2.Charged != 5000 {
		t.Fatalf("Begin after commit: %+v found=%v err=%v", c2, found, err)
	}
	s.Abort(id)
	if err := s.Commit(c2); !errors.Is(err, ErrNotBegun) {
		t.Fatalf("Commit after Abort: %v", err)
	}

	// The claimer's bookkeeping made while a request runs survives that request's commit.
	c3, _, _ := s.Begin(id)
	if _, err := s.Update(id, func(c *Channel) error {
		c.ClaimTx, c.TotalClaimed, c.SyncedAt = "0xclaim", 5000, time.Now()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	c3.Charged, c3.SignedMax, c3.Signature, c3.Calls = 10_000, 10_000, "0xsig2", 2
	if err := s.Commit(c3); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openChannels(t, dir)
	defer s.Close()
	got, ok := s.Get(id)
	want := Channel{ID: "0xabcdef", Charged: 10_000, SignedMax: 10_000, Signature: "0xsig2", Balance: 1_000_000, TotalClaimed: 5000, Calls: 2, ClaimTx: "0xclaim"}
	if !ok || got.Charged != want.Charged || got.SignedMax != want.SignedMax || got.Signature != want.Signature ||
		got.Balance != want.Balance || got.TotalClaimed != want.TotalClaimed || got.Calls != want.Calls || got.ClaimTx != want.ClaimTx ||
		got.Config.WithdrawDelay != 900 {
		t.Fatalf("after restart: %+v", got)
	}
	if got.Unclaimed() != 5000 {
		t.Fatalf("unclaimed %d, want 5000", got.Unclaimed())
	}
	if st := got.State(); st.ChargedCumulativeAmount != "10000" || st.TotalClaimed != "5000" || st.Balance != "1000000" {
		t.Fatalf("state %+v", st)
	}
	// Nothing is busy after a restart.
	if _, _, err := s.Begin(id); err != nil {
		t.Fatalf("Begin after restart: %v", err)
	}
}
