package journal

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"
)

func openPrealloc(t testing.TB, dir string, prealloc int64) *Journal {
	t.Helper()
	j, err := Open(Options{Dir: dir, Name: "t", Sync: SyncAlways, Preallocate: prealloc, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// framed is the log's length holding records from..to-1 of appendN after its header.
func framed(from, to int) int64 {
	n := int64(len(frame(logHeader(1))))
	for _, r := range want(from, to) {
		n += int64(headerSize + len(r))
	}
	return n
}

// A preallocated log is found whole after a crash (kill -9: the journal never closed), its
// zeros neither replayed nor taken for damage, and the next records go after the last one:
// across several extensions of its space, a reopening and a compaction.
func TestPreallocatedLogAfterACrash(t *testing.T) {
	const prealloc = 100 // a few records' worth: the space is extended many times
	dir := t.TempDir()
	crashed := openPrealloc(t, dir, prealloc)
	appendN(t, crashed, 0, 40)
	if got, want := crashed.Size(), framed(0, 40); got != want {
		t.Fatalf("Size %d, want the records' %d (not the file's)", got, want)
	}
	if size := fileSize(t, logFile(dir)); size <= framed(0, 40) {
		t.Fatalf("log file of %d bytes for %d of records: nothing preallocated", size, framed(0, 40))
	}
	j := openPrealloc(t, dir, prealloc) // the crashed one is left open, as kill -9 leaves its file
	if got := all(t, j); !slices.Equal(got, want(0, 40)) {
		t.Fatalf("replay after the crash: %v", got)
	}
	if j.Truncated() != 0 {
		t.Errorf("the preallocated zeros were taken for a damaged tail (%d bytes truncated)", j.Truncated())
	}
	appendN(t, j, 40, 60)
	crashed = j
	j = openPrealloc(t, dir, prealloc)
	if got := all(t, j); !slices.Equal(got, want(0, 60)) {
		t.Fatalf("replay after the second crash: %v", got)
	}
	snapshot := func(emit func([]byte) error) error {
		for _, r := range want(0, 60) {
			if err := emit([]byte(r)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := j.Compact(snapshot); err != nil {
		t.Fatal(err)
	}
	appendN(t, j, 60, 80)
	j = openPrealloc(t, dir, prealloc)
	if got := all(t, j); !slices.Equal(got, want(0, 80)) {
		t.Fatalf("replay after compaction and a crash: %v", got)
	}
	_ = crashed.Close()
	size := j.Size()
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if got := fileSize(t, logFile(dir)); got != size {
		t.Errorf("closed log file of %d bytes, want its records' %d: Close leaves no zeros", got, size)
	}
}

// A record torn in the preallocated space (its header written, its payload not) is a damaged
// tail as in any log: cut off, the records before it kept, the next ones appended after them.
func TestPreallocatedLogTornRecord(t *testing.T) {
	dir := t.TempDir()
	crashed := openPrealloc(t, dir, 1<<10)
	defer crashed.Close()
	appendN(t, crashed, 0, 10)
	f, err := os.OpenFile(logFile(dir), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	torn := frame([]byte("rec-0010"))[:headerSize+3]
	if _, err := f.WriteAt(torn, framed(0, 10)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	j := openPrealloc(t, dir, 1<<10)
	defer j.Close()
	if j.Truncated() == 0 {
		t.Error("a torn record was not taken for damage")
	}
	appendN(t, j, 10, 20)
	if got := all(t, j); !slices.Equal(got, want(0, 20)) {
		t.Fatalf("replay: %v", got)
	}
}

// An empty record's frame would read as the zeros that end a preallocated log.
func TestPreallocatedLogRefusesEmptyRecords(t *testing.T) {
	j := openPrealloc(t, t.TempDir(), 1<<10)
	defer j.Close()
	if err := j.Append(nil); err != ErrEmpty {
		t.Fatalf("empty record: %v, want ErrEmpty", err)
	}
}

// BenchmarkDurableAppend compares a lone writer's durable appends (SyncAlways) of a channel
// record's size to a log that grows with each (fsync) and to a preallocated one (fdatasync),
// taking turns record by record so that both see the same disk: it reports each one's median
// time per record, which the disk's other users move less than the mean.
func BenchmarkDurableAppend(b *testing.B) {
	rec := []byte(fmt.Sprintf("%0600d", 0))
	growing, preallocated := openPrealloc(b, b.TempDir(), 0), openPrealloc(b, b.TempDir(), 1<<20)
	defer growing.Close()
	defer preallocated.Close()
	var g, p []time.Duration
	timed := func(j *Journal, d *[]time.Duration) {
		t0 := time.Now()
		if err := j.Append(rec); err != nil {
			b.Fatal(err)
		}
		*d = append(*d, time.Since(t0))
	}
	for b.Loop() {
		timed(growing, &g)
		timed(preallocated, &p)
	}
	median := func(d []time.Duration) float64 { slices.Sort(d); return float64(d[len(d)/2].Nanoseconds()) }
	b.ReportMetric(median(g), "growing-p50-ns")
	b.ReportMetric(median(p), "preallocated-p50-ns")
	b.ReportMetric(median(p)/median(g), "ratio")
}
