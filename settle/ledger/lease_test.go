package ledger

import (
	"errors"
	"testing"
	"time"

	"github.com/peage/appliance/internal/journal"
)

// TestLeaseNeverEndsACompletionInFlight: a reservation past its lease is released by Expire
// (its amount no longer counts against the payer), unless its completion is under way
// (Completing), which Expire leaves alone however late; a completion begun after the lease is
// refused and the reservation released.
func TestLeaseNeverEndsACompletionInFlight(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { return now }
	for _, tc := range []struct {
		name       string
		completing bool // the completion began before the lease ran out
		want       Status
	}{
		{"never completed: released", false, Released},
		{"completion in flight: kept", true, Reserved},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := open(t, t.TempDir(), clock)
			defer l.Close()
			r, err := l.Reserve(Record{ID: "p:1", Payer: "P", Amount: 700, LeaseUntil: now.Add(time.Minute)}, 1000)
			if err != nil {
				t.Fatal(err)
			}
			if tc.completing {
				if err := l.Completing(r.ID); err != nil {
					t.Fatal(err)
				}
			}
			now = now.Add(2 * time.Minute)
			if _, err := l.Expire(); err != nil {
				t.Fatal(err)
			}
			if got, _ := l.Get(r.ID); got.Status != tc.want {
				t.Fatalf("status %s, want %s", got.Status, tc.want)
			}
			wantOpen := uint64(0)
			if tc.completing {
				wantOpen = 700
			}
			if got := l.Open("p"); got != wantOpen {
				t.Fatalf("open for the payer %d, want %d", got, wantOpen)
			}
		})
	}

	l := open(t, t.TempDir(), clock)
	defer l.Close()
	r, err := l.Reserve(Record{ID: "p:2", Payer: "P", Amount: 700, LeaseUntil: now.Add(time.Minute)}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Minute)
	if err := l.Completing(r.ID); !errors.Is(err, ErrLeaseExpired) {
		t.Fatalf("completion after the lease: %v", err)
	}
	if got, _ := l.Get(r.ID); got.Status != Released || l.Open("p") != 0 {
		t.Fatalf("after a late completion: %s, open %d", got.Status, l.Open("p"))
	}
}

// TestChannelHoldLease: a hold past its lease is dropped by the next Begin (Expired told),
// while a hold taken for its completion is not, however late.
func TestChannelHoldLease(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	var expired []string
	s, err := OpenChannels(ChannelOptions{Dir: t.TempDir(), Sync: journal.SyncNever, Now: func() time.Time { return now },
		Expired: func(id string, v any) { expired = append(expired, id+"="+v.(string)) }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, id := range []string{"0xa", "0xb"} {
		if _, _, err := s.Begin(id); err != nil {
			t.Fatal(err)
		}
		s.Hold(id, "req-"+id, now.Add(time.Minute))
	}
	if v := s.Take("0xb"); v != "req-0xb" { // 0xb's completion is under way
		t.Fatalf("Take: %v", v)
	}
	now = now.Add(2 * time.Minute)
	if _, _, err := s.Begin("0xa"); err != nil {
		t.Fatalf("Begin after the lease: %v", err)
	}
	if _, _, err := s.Begin("0xb"); !errors.Is(err, ErrBusy) {
		t.Fatalf("Begin while a completion is in flight: %v", err)
	}
	if len(expired) != 1 || expired[0] != "0xa=req-0xa" {
		t.Fatalf("expired: %v", expired)
	}
}
