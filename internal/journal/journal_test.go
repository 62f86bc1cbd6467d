package journal

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/peage/appliance/internal/obs"
)

func quiet() *slog.Logger { return obs.Discard() }

func open(t *testing.T, dir string, s Sync) *Journal {
	t.Helper()
	return openRaw(t, dir, s, false)
}

func openRaw(t *testing.T, dir string, s Sync, raw bool) *Journal {
	t.Helper()
	j, err := Open(Options{Dir: dir, Name: "t", Sync: s, Interval: 5 * time.Millisecond, RawIO: raw, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func all(t *testing.T, j *Journal) []string {
	t.Helper()
	var out []string
	if err := j.Replay(func(rec []byte) error { out = append(out, string(rec)); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func appendN(t *testing.T, j *Journal, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if err := j.Append([]byte(fmt.Sprintf("rec-%04d", i))); err != nil {
			t.Fatal(err)
		}
	}
}

func want(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("rec-%04d", i))
	}
	return out
}

func TestReplayOrderAcrossReopen(t *testing.T) {
	for _, s := range []Sync{SyncAlways, SyncInterval, SyncNever} {
		t.Run(s.String(), func(t *testing.T) {
			dir := t.TempDir()
			j := open(t, dir, s)
			if got := all(t, j); len(got) != 0 {
				t.Fatalf("fresh journal replays %v", got)
			}
			appendN(t, j, 0, 50)
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
			j = open(t, dir, s)
			appendN(t, j, 50, 100)
			if got := all(t, j); !slices.Equal(got, want(0, 100)) {
				t.Fatalf("replay = %v", got)
			}
			j.Close()
			if err := j.Append([]byte("x")); err != ErrClosed {
				t.Fatalf("append after close: %v", err)
			}
		})
	}
}

func TestEmptyAndBinaryRecords(t *testing.T) {
	dir := t.TempDir()
	j := open(t, dir, SyncAlways)
	recs := [][]byte{{}, {0, 0, 0, 0, 0, 0, 0, 0}, bytes.Repeat([]byte{0xff}, 100000), []byte("\x00peage-journal-log\x00")}
	for _, r := range recs {
		if err := j.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	j = open(t, dir, SyncAlways)
	defer j.Close()
	i := 0
	j.Replay(func(rec []byte) error {
		if !bytes.Equal(rec, recs[i]) {
			t.Fatalf("record %d differs", i)
		}
		i++
		return nil
	})
	if i != len(recs) {
		t.Fatalf("replayed %d of %d", i, len(recs))
	}
}

func logFile(dir string) string { return filepath.Join(dir, "t.log") }

func TestTornTail(t *testing.T) {
	// Cut the log at every byte position inside the last record: the first 9 records always
	// survive, the 10th never half-survives, and the journal opens and accepts appends.
	dir := t.TempDir()
	j := open(t, dir, SyncAlways)
	appendN(t, j, 0, 10)
	j.Close()
	full, _ := os.ReadFile(logFile(dir))
	lastLen := headerSize + len("rec-0009")
	for cut := 1; cut <= lastLen; cut++ {
		d := t.TempDir()
		os.WriteFile(logFile(d), full[:len(full)-cut], 0o600)
		j := open(t, d, SyncAlways)
		if j.Truncated() != int64(lastLen-cut) {
			t.Fatalf("cut %d: truncated %d bytes, want %d", cut, j.Truncated(), lastLen-cut)
		}
		if got := all(t, j); !slices.Equal(got, want(0, 9)) {
			t.Fatalf("cut %d: replay = %v", cut, got)
		}
		appendN(t, j, 9, 12)
		j.Close()
		j = open(t, d, SyncAlways)
		if got := all(t, j); !slices.Equal(got, want(0, 12)) {
			t.Fatalf("cut %d: after re-append replay = %v", cut, got)
		}
		j.Close()
	}
}

func TestCorruptCRC(t *testing.T) {
	dir := t.TempDir()
	j := open(t, dir, SyncAlways)
	appendN(t, j, 0, 10)
	j.Close()
	b, _ := os.ReadFile(logFile(dir))
	b[len(b)-1] ^= 0x01 // payload of the last record
	os.WriteFile(logFile(dir), b, 0o600)
	j = open(t, dir, SyncAlways)
	if got := all(t, j); !slices.Equal(got, want(0, 9)) {
		t.Fatalf("replay = %v", got)
	}
	j.Close()

	// A corrupt record in the middle ends the valid prefix there.
	b, _ = os.ReadFile(logFile(dir))
	mid := len(b) - 5*(headerSize+8) + 5 // inside the header of record 4 (0-based, of 9)
	b[mid] ^= 0xff
	os.WriteFile(logFile(dir), b, 0o600)
	j = open(t, dir, SyncAlways)
	defer j.Close()
	if got := all(t, j); !slices.Equal(got, want(0, 4)) {
		t.Fatalf("replay after mid corruption = %v", got)
	}
}

func TestAbsurdLengthAndGarbage(t *testing.T) {
	dir := t.TempDir()
	j := open(t, dir, SyncNever)
	appendN(t, j, 0, 3)
	j.Close()
	f, _ := os.OpenFile(logFile(dir), os.O_APPEND|os.O_WRONLY, 0)
	f.Write([]byte{0xff, 0xff, 0xff, 0x7f, 1, 2, 3, 4, 5, 6})
	f.Close()
	j = open(t, dir, SyncNever)
	if got := all(t, j); !slices.Equal(got, want(0, 3)) {
		t.Fatalf("replay = %v", got)
	}
	j.Close()

	// A log that is garbage from the first byte is replaced by a fresh one.
	os.WriteFile(logFile(dir), []byte("not a journal at all"), 0o600)
	j = open(t, dir, SyncNever)
	defer j.Close()
	if got := all(t, j); len(got) != 0 {
		t.Fatalf("replay = %v", got)
	}
	appendN(t, j, 0, 1)
	if got := all(t, j); !slices.Equal(got, want(0, 1)) {
		t.Fatalf("replay = %v", got)
	}
}

func TestCompaction(t *testing.T) {
	dir := t.TempDir()
	j := open(t, dir, SyncAlways)
	appendN(t, j, 0, 100)
	before := j.Size()
	// The state after 100 records is summarised as 3 records.
	if err := j.Compact(func(emit func([]byte) error) error {
		for _, r := range []string{"s1", "s2", "s3"} {
			if err := emit([]byte(r)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if j.Size() >= before {
		t.Fatalf("log did not shrink: %d → %d", before, j.Size())
	}
	appendN(t, j, 100, 103)
	exp := append([]string{"s1", "s2", "s3"}, want(100, 103)...)
	if got := all(t, j); !slices.Equal(got, exp) {
		t.Fatalf("replay = %v", got)
	}
	j.Close()
	j = open(t, dir, SyncAlways)
	if got := all(t, j); !slices.Equal(got, exp) {
		t.Fatalf("replay after reopen = %v", got)
	}
	// Second compaction replaces the first snapshot entirely.
	if err := j.Compact(func(emit func([]byte) error) error { return emit([]byte("only")) }); err != nil {
		t.Fatal(err)
	}
	j.Close()
	j = open(t, dir, SyncAlways)
	defer j.Close()
	if got := all(t, j); !slices.Equal(got, []string{"only"}) {
		t.Fatalf("replay = %v", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "t.snap.tmp")); !os.IsNotExist(err) {
		t.Fatalf("tmp file left behind")
	}
}

func TestCompactionFailureKeepsOldState(t *testing.T) {
	dir := t.TempDir()
	j := open(t, dir, SyncAlways)
	appendN(t, j, 0, 5)
	if err := j.Compact(func(emit func([]byte) error) error {
		emit([]byte("half"))
		return fmt.Errorf("boom")
	}); err == nil {
		t.Fatal("want error")
	}
	appendN(t, j, 5, 6)
	if got := all(t, j); !slices.Equal(got, want(0, 6)) {
		t.Fatalf("replay = %v", got)
	}
	j.Close()
}

// A crash after the new snapshot was renamed into place but before the log was reset leaves a
// log whose generation the snapshot covers: its records must not be replayed twice.
func TestCrashBetweenSnapshotAndLogReset(t *testing.T) {
	dir := t.TempDir()
	j := open(t, dir, SyncAlways)
	appendN(t, j, 0, 5)
	j.Close()
	oldLog, _ := os.ReadFile(logFile(dir))
	j = open(t, dir, SyncAlways)
	if err := j.Compact(func(emit func([]byte) error) error { return emit([]byte("snap")) }); err != nil {
		t.Fatal(err)
	}
	j.Close()
	os.WriteFile(logFile(dir), oldLog, 0o600) // as if the log reset never happened
	j = open(t, dir, SyncAlways)
	if got := all(t, j); !slices.Equal(got, []string{"snap"}) {
		t.Fatalf("replay = %v", got)
	}
	appendN(t, j, 5, 7)
	j.Close()
	j = open(t, dir, SyncAlways)
	defer j.Close()
	if got := all(t, j); !slices.Equal(got, append([]string{"snap"}, want(5, 7)...)) {
		t.Fatalf("replay = %v", got)
	}
}

// A crash while writing the snapshot leaves a tmp file: it is ignored and removed.
func TestLeftoverTmpIgnored(t *testing.T) {
	dir := t.TempDir()
	j := open(t, dir, SyncAlways)
	appendN(t, j, 0, 3)
	j.Close()
	os.WriteFile(filepath.Join(dir, "t.snap.tmp"), []byte("partial garbage"), 0o600)
	j = open(t, dir, SyncAlways)
	defer j.Close()
	if got := all(t, j); !slices.Equal(got, want(0, 3)) {
		t.Fatalf("replay = %v", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "t.snap.tmp")); !os.IsNotExist(err) {
		t.Fatal("tmp not removed")
	}
}

// TestConcurrentAppends, also with RawIO (its fsyncs through AIO where the kernel offers it,
// and by a raw system call where it does not): what raw system calls appended, around a
// compaction, is what a journal opened without it replays.
func TestConcurrentAppends(t *testing.T) {
	for _, c := range []struct {
		s     Sync
		raw   bool
		noAIO bool // the fallback of a kernel that refuses an AIO context
	}{{SyncAlways, false, false}, {SyncInterval, false, false}, {SyncAlways, true, false}, {SyncAlways, true, true}} {
		s := c.s
		t.Run(fmt.Sprintf("%s/raw=%v/noaio=%v", s, c.raw, c.noAIO), func(t *testing.T) {
			dir := t.TempDir()
			j := openRaw(t, dir, s, c.raw)
			if c.noAIO && j.aio != nil {
				j.aio.close()
				j.aio = nil
				j.w.Reset(j.sink(j.f))
			}
			const workers, each = 16, 100
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						if err := j.Append([]byte(fmt.Sprintf("w%02d-%04d", w, i))); err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			// A compaction in the middle of the appends must neither lose nor duplicate records.
			time.Sleep(2 * time.Millisecond)
			var snap []string
			var snapMu sync.Mutex
			err := j.Compact(func(emit func([]byte) error) error {
				// Appends are blocked: what the log holds now is exactly the state.
				snapMu.Lock()
				defer snapMu.Unlock()
				return j.replayFile(j.logPath(), "log", logHeaderMagic, func(rec []byte) error {
					snap = append(snap, string(rec))
					return emit(rec)
				})
			})
			if err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			j.Close()
			j = open(t, dir, s)
			defer j.Close()
			got := all(t, j)
			if len(got) != workers*each {
				t.Fatalf("replayed %d records, want %d (snapshot had %d)", len(got), workers*each, len(snap))
			}
			// Each writer's records appear in its own order, none twice.
			last := map[string]int{}
			seen := map[string]bool{}
			for _, r := range got {
				if seen[r] {
					t.Fatalf("duplicate %s", r)
				}
				seen[r] = true
				var w, i int
				fmt.Sscanf(r, "w%02d-%04d", &w, &i)
				k := fmt.Sprint(w)
				if prev, ok := last[k]; ok && i != prev+1 {
					t.Fatalf("writer %d: %d after %d", w, i, prev)
				}
				last[k] = i
			}
		})
	}
}

func TestIntervalSyncs(t *testing.T) {
	dir := t.TempDir()
	j := open(t, dir, SyncInterval)
	defer j.Close()
	appendN(t, j, 0, 3)
	deadline := time.Now().Add(2 * time.Second)
	for {
		j.mu.Lock()
		done := j.synced == j.written
		j.mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("interval sync never ran")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestParseSync(t *testing.T) {
	for in, w := range map[string]Sync{"always": SyncAlways, "interval": SyncInterval, "never": SyncNever} {
		if s, err := ParseSync(in); err != nil || s != w || s.String() != in {
			t.Fatalf("%s: %v %v", in, s, err)
		}
	}
	if _, err := ParseSync("sometimes"); err == nil {
		t.Fatal("want error")
	}
}

func TestTooLarge(t *testing.T) {
	j := open(t, t.TempDir(), SyncNever)
	defer j.Close()
	if err := j.Append(make([]byte, MaxRecord+1)); err != ErrTooLarge {
		t.Fatalf("err = %v", err)
	}
}

// TestFsyncsCounted: the count the benches report per call is one fsync per durable append
// when appends come one at a time, none when the policy never syncs, under both fsync paths.
func TestFsyncsCounted(t *testing.T) {
	for _, c := range []struct {
		name string
		sync Sync
		raw  bool
		want uint64
	}{
		{"always", SyncAlways, false, 5},
		{"always raw", SyncAlways, true, 5},
		{"never", SyncNever, false, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := openRaw(t, t.TempDir(), c.sync, c.raw)
			defer j.Close()
			before := j.Fsyncs()
			for i := range 5 {
				if err := j.Append([]byte{byte(i)}); err != nil {
					t.Fatal(err)
				}
			}
			if got := j.Fsyncs() - before; got != c.want {
				t.Fatalf("%d fsyncs for 5 appends, want %d", got, c.want)
			}
		})
	}
}
