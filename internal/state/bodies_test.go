package state

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/peage/appliance/internal/bodystore"
	"github.com/peage/appliance/internal/journal"
)

// fullBody is a full-size body that differs for every n (random bytes: nothing compresses or
// dedupes it by accident).
func fullBody(n int) []byte {
	b := make([]byte, InboxMaxBodyBytes)
	r := rand.New(rand.NewPCG(uint64(n), 42))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC() // the second cycle frees what the first one's finalizers released
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestBodiesDoNotLiveInMemory stores 200 full-size events (12.5 MiB of bodies) and checks that
// the store's heap grows by far less than the bodies (their metadata only), then that every
// body reads back identical after a restart, from the log and from a snapshot.
func TestBodiesDoNotLiveInMemory(t *testing.T) {
	const events = 2 * InboxMaxEvents
	const bodies = events * InboxMaxBodyBytes
	dir, clk := t.TempDir(), newClock()
	s := openStore(t, dir, clk)
	ids := []string{"0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"}
	for _, id := range ids {
		if err := s.CreateInbox(Inbox{ID: id, Key: "k", CreatedAt: clk.Now(), ExpiresAt: clk.Now().Add(24 * time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string][][32]byte{}
	before := heapInUse()
	for n := range events {
		id := ids[n%len(ids)]
		body := fullBody(n)
		if _, err := s.AddEvent(context.Background(), Event{Inbox: id, Method: "POST", Kind: "binary",
			Header: map[string][]string{"Content-Type": {"application/octet-stream"}}, Body: body}); err != nil {
			t.Fatalf("event %d: %v", n, err)
		}
		want[id] = append(want[id], sha256.Sum256(body))
	}
	after := heapInUse()
	grew := int64(after) - int64(before)
	t.Logf("heap in use after GC: %d → %d bytes, grew %d bytes (%.1f%% of the %d bytes of bodies stored, %d bytes per event)",
		before, after, grew, 100*float64(grew)/bodies, bodies, grew/events)
	if limit := int64(bodies / 16); grew > limit {
		t.Fatalf("the heap grew by %d bytes for %d bytes of bodies (limit %d): bodies are held in memory", grew, bodies, limit)
	}
	if st := s.Stats(); st.Events != events || st.InboxBytes < bodies {
		t.Fatalf("stats %+v: want %d events counting at least %d bytes", st, events, bodies)
	}

	for _, tc := range []struct {
		name    string
		compact bool
	}{{"replayed from the log", false}, {"replayed from a snapshot", true}} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.compact {
				if err := s.Compact(); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = openStore(t, dir, clk)
			for _, id := range ids {
				in, evs, err := s.Events(context.Background(), id, 0, 0)
				if err != nil || len(evs) != len(want[id]) || in.Bytes != int64(len(evs))*InboxMaxBodyBytes {
					t.Fatalf("inbox %s: %d events, row %+v, %v", id, len(evs), in, err)
				}
				for i, ev := range evs {
					if sha256.Sum256(ev.Body) != want[id][i] {
						t.Fatalf("inbox %s event %d: body differs after the restart", id, ev.Seq)
					}
				}
			}
			if st := s.Stats(); st.BodiesPruned != 0 {
				t.Fatalf("a restart removed %d bodies still referenced", st.BodiesPruned)
			}
		})
	}
	s.Close()
}

// The journal holds an event's size and checksum, never its body (raw or as JSON's base64).
func TestJournalDoesNotCarryBodies(t *testing.T) {
	dir, clk := t.TempDir(), newClock()
	s := openStore(t, dir, clk)
	s.CreateInbox(Inbox{ID: "in", CreatedAt: clk.Now(), ExpiresAt: clk.Now().Add(time.Hour)})
	body := []byte("a body that must not be in the journal: 7f3a9c")
	if _, err := s.AddEvent(context.Background(), Event{Inbox: "in", Method: "POST", Body: body}); err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{"log", "snapshot"} {
		if step == "snapshot" {
			if err := s.Compact(); err != nil {
				t.Fatal(err)
			}
		}
		for _, f := range []string{"state.log", "state.snap"} {
			b, _ := os.ReadFile(filepath.Join(dir, f))
			if bytes.Contains(b, body) || bytes.Contains(b, []byte(base64.StdEncoding.EncodeToString(body)[:24])) {
				t.Fatalf("after the %s step, %s holds the body", step, f)
			}
		}
	}
	s.Close()
}

// A body damaged or lost on disk is reported with the event it belongs to, never served.
func TestDamagedBodiesAreReported(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(path string) error
		want   error
	}{
		{"a byte flipped", func(p string) error {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b[len(b)/2] ^= 0x20
			return os.WriteFile(p, b, 0o600)
		}, bodystore.ErrCorrupt},
		{"truncated", func(p string) error { return os.Truncate(p, 3) }, bodystore.ErrCorrupt},
		{"deleted", os.Remove, bodystore.ErrMissing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, clk := t.TempDir(), newClock()
			s := openStore(t, dir, clk)
			defer s.Close()
			s.CreateInbox(Inbox{ID: "in", CreatedAt: clk.Now(), ExpiresAt: clk.Now().Add(time.Hour)})
			var second Event
			for i := range 3 {
				ev, err := s.AddEvent(context.Background(), Event{Inbox: "in", Body: []byte(fmt.Sprintf(`{"n":%d}`, i))})
				if err != nil {
					t.Fatal(err)
				}
				if i == 1 {
					second = ev
				}
			}
			if err := tc.damage(filepath.Join(dir, "state.inbox-bodies", "in", second.BodyFile)); err != nil {
				t.Fatal(err)
			}
			_, evs, err := s.Events(context.Background(), "in", 0, 0)
			be, ok := errors.AsType[*BodyError](err)
			if !ok || be.Seq != 2 || be.Inbox != "in" || !errors.Is(err, tc.want) || !errors.Is(err, ErrBody) || evs != nil {
				t.Fatalf("Events = %d events, %v; want a BodyError for seq 2 wrapping %v", len(evs), err, tc.want)
			}
			// The events after it are still served.
			if _, evs, err := s.Events(context.Background(), "in", 2, 0); err != nil || len(evs) != 1 || string(evs[0].Body) != `{"n":2}` {
				t.Fatalf("after the damaged event: %v %v", evs, err)
			}
		})
	}
}

// Bodies without a journal record (a crash between the two, a refused delivery) are removed at
// Open; sweeping an expired inbox removes its bodies; compaction keeps every referenced body.
func TestBodyFilesFollowTheirRecords(t *testing.T) {
	dir, clk := t.TempDir(), newClock()
	bodiesDir := filepath.Join(dir, "state.inbox-bodies")
	s := openStore(t, dir, clk)
	s.CreateInbox(Inbox{ID: "short", CreatedAt: clk.Now(), ExpiresAt: clk.Now().Add(time.Hour)})
	s.CreateInbox(Inbox{ID: "long", CreatedAt: clk.Now(), ExpiresAt: clk.Now().Add(24 * time.Hour)})
	for _, id := range []string{"short", "long"} {
		if _, err := s.AddEvent(context.Background(), Event{Inbox: id, Body: []byte("body of " + id)}); err != nil {
			t.Fatal(err)
		}
	}
	// Refused deliveries leave no file behind.
	for i := range InboxMaxEvents {
		if _, err := s.AddEvent(context.Background(), Event{Inbox: "long", Body: []byte(fmt.Sprint(i))}); errors.Is(err, ErrFull) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.AddEvent(context.Background(), Event{Inbox: "long", Body: []byte("one too many")}); !errors.Is(err, ErrFull) {
		t.Fatalf("101st delivery: %v", err)
	}
	if n := countFiles(t, filepath.Join(bodiesDir, "long")); n != InboxMaxEvents {
		t.Fatalf("inbox long: %d body files for %d events", n, InboxMaxEvents)
	}
	s.Close()

	// Orphans as a crash leaves them: a body written, its record never journaled.
	bs, err := bodystore.Open(context.Background(), bodiesDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"long", "short", "never-created"} {
		if _, err := bs.Put(context.Background(), id, []byte("orphan")); err != nil {
			t.Fatal(err)
		}
	}
	s = openStore(t, dir, clk)
	if st := s.Stats(); st.BodiesPruned != 3 {
		t.Fatalf("removed %d orphans at open, want 3", st.BodiesPruned)
	}
	if n := countFiles(t, filepath.Join(bodiesDir, "long")); n != InboxMaxEvents {
		t.Fatalf("inbox long: %d body files after open", n)
	}
	if _, err := os.Stat(filepath.Join(bodiesDir, "never-created")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("orphan directory kept: %v", err)
	}

	clk.Add(2 * time.Hour)
	s.Sweep()
	if _, err := os.Stat(filepath.Join(bodiesDir, "short")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("bodies of the swept inbox kept: %v", err)
	}
	if err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openStore(t, dir, clk)
	defer s.Close()
	_, evs, err := s.Events(context.Background(), "long", 0, 1)
	if err != nil || len(evs) != 1 || string(evs[0].Body) != "body of long" {
		t.Fatalf("after sweep, compaction and restart: %v %v", evs, err)
	}
	if st := s.Stats(); st.BodiesPruned != 0 || st.Events != InboxMaxEvents {
		t.Fatalf("stats %+v", st)
	}
}

func countFiles(t *testing.T, dir string) int {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

// A journal written before bodies moved to disk (bodies inline in the records) opens with its
// bodies moved to files and is rewritten without them.
func TestInlineBodiesMoveToDisk(t *testing.T) {
	dir, clk := t.TempDir(), newClock()
	j, err := journal.Open(journal.Options{Dir: dir, Name: "state", Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	now := clk.Now()
	body := []byte(`{"legacy":"inline body 5b1e"}`)
	for _, r := range []record{
		{Op: opInbox, Inbox: &Inbox{ID: "old", Key: "k", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}},
		{Op: opEvent, Event: &Event{Inbox: "old", Seq: 1, ReceivedAt: now, Method: "POST", Kind: "json", Body: body}},
		{Op: opEvent, Event: &Event{Inbox: "old", Seq: 2, ReceivedAt: now, Method: "GET", Kind: "empty"}},
	} {
		b, _ := json.Marshal(r)
		if err := j.Append(b); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	for start := range 2 {
		s := openStore(t, dir, clk)
		in, evs, err := s.Events(context.Background(), "old", 0, 0)
		if err != nil || len(evs) != 2 || !bytes.Equal(evs[0].Body, body) || evs[1].Body != nil || in.Bytes != int64(len(body)) {
			t.Fatalf("start %d: %+v %v %v", start, in, evs, err)
		}
		if st := s.Stats(); st.BodiesMoved != int64(1-start) || st.InboxBytes != evs[0].size()+evs[1].size() {
			t.Fatalf("start %d: stats %+v", start, st)
		}
		s.Close()
		for _, f := range []string{"state.log", "state.snap"} {
			if b, _ := os.ReadFile(filepath.Join(dir, f)); bytes.Contains(b, []byte("inline body 5b1e")) {
				t.Fatalf("start %d: %s still holds the body", start, f)
			}
		}
	}
}

// The inbox budget is lowered to what the disk can hold, leaving the margin free.
func TestBudgetFitsTheDisk(t *testing.T) {
	const budget, margin = 8 << 30, 1 << 30
	for _, tc := range []struct {
		name     string
		free     int64
		err      error
		want     int64
		roomLeft bool
	}{
		{"plenty of disk", 100 << 30, nil, budget, true},
		{"exactly enough", budget + margin, nil, budget, true},
		{"smaller disk", 3 << 30, nil, 2 << 30, true},
		{"disk within the margin", 512 << 20, nil, 0, false},
		{"unreadable", 0, errors.New("statfs: no"), budget, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			s, err := Open(t.TempDir(), Options{Now: clk.Now, Logger: quiet(), NoBackground: true, InboxBudget: budget, DiskMargin: margin,
				DiskFree: func(context.Context, string) (int64, error) { return tc.free, tc.err }})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			st := s.Stats()
			if st.InboxBudget != tc.want || st.InboxBudgetConfigured != budget || s.InboxRoom() != tc.roomLeft {
				t.Fatalf("budget %d (configured %d), room %v; want %d, room %v", st.InboxBudget, st.InboxBudgetConfigured,
					s.InboxRoom(), tc.want, tc.roomLeft)
			}
			if !tc.roomLeft {
				if err := s.CreateInbox(Inbox{ID: "in", CreatedAt: clk.Now(), ExpiresAt: clk.Now().Add(time.Hour)}); !errors.Is(err, ErrBudget) {
					t.Fatalf("sale with no room: %v", err)
				}
			}
		})
	}
}
