package ledger

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/peage/appliance/internal/journal"
	"github.com/peage/appliance/internal/obs"
)

// TestBadRecordDoesNotStopTheLedger: a payments record whose frame is intact but whose content
// is not a record is quarantined by the journal; the ledger opens with the good records, at
// this start and the next (the ledger compacts at open, the copy stays aside).
func TestBadRecordDoesNotStopTheLedger(t *testing.T) {
	dir := t.TempDir()
	quiet := obs.Discard()
	j, err := journal.Open(journal.Options{Dir: dir, Name: "payments", Sync: journal.SyncNever, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range []string{`{"id":"0xaa:0x01","status":"settled"}`, `{"id":`, `["not","a","record"]`, `{"id":"0xaa:0x02","status":"reserved"}`} {
		if err := j.Append([]byte(rec)); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	for start := range 2 {
		l, err := Open(Options{Dir: dir, Sync: journal.SyncNever, Logger: quiet})
		if err != nil {
			t.Fatalf("start %d: %v", start, err)
		}
		if _, ok := l.Get("0xaa:0x01"); !ok {
			t.Fatalf("start %d: the settled record is missing", start)
		}
		if r, ok := l.Get("0xaa:0x02"); !ok || r.Status != Reserved {
			t.Fatalf("start %d: the reserved record is %+v %v", start, r, ok)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	files, err := os.ReadDir(filepath.Join(dir, "payments.quarantine"))
	if err != nil || len(files) != 2 {
		t.Fatalf("quarantine: %v %v, want the 2 bad records", files, err)
	}
}
