package state

import (
	"errors"
	"github.com/peage/appliance/internal/testclock"
	"testing"
	"time"
)

// TestResultKeptAcrossRestartUntilExpiry: a kept answer survives a restart and a compaction,
// a second put under the same key returns the first, and it is gone once expired and swept.
func TestResultKeptAcrossRestartUntilExpiry(t *testing.T) {
	dir := t.TempDir()
	clk := testclock.At(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	s := openStore(t, dir, clk)
	first := Result{Key: "token.verdict|k1", Body: []byte(`{"grade":"MID"}`), CreatedAt: clk.Now(), ExpiresAt: clk.Now().Add(time.Hour)}
	if _, err := s.PutResult(first); err != nil {
		t.Fatal(err)
	}
	kept, err := s.PutResult(Result{Key: first.Key, Body: []byte(`{"grade":"BASED"}`), ExpiresAt: clk.Now().Add(time.Hour)})
	if !errors.Is(err, ErrExists) || string(kept.Body) != `{"grade":"MID"}` {
		t.Fatalf("second put: %v %s, want ErrExists and the first body", err, kept.Body)
	}
	if err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, dir, clk)
	if r, ok := s.Result(first.Key); !ok || string(r.Body) != `{"grade":"MID"}` {
		t.Fatalf("after restart: %v %s", ok, r.Body)
	}
	clk.Add(time.Hour)
	if _, ok := s.Result(first.Key); ok {
		t.Fatal("an expired result is still answered")
	}
	if n := s.Sweep(); n != 1 {
		t.Errorf("sweep changed %d rows, want 1", n)
	}
	if _, err := s.PutResult(Result{Key: first.Key, Body: []byte(`{}`), ExpiresAt: clk.Now().Add(time.Hour)}); err != nil {
		t.Errorf("the key is free again once expired: %v", err)
	}
}
