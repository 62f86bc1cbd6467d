package state

import (
	"os"
	"testing"

	"github.com/peage/appliance/internal/journal"
)

// TestBadRecordsNeverStopTheStart: records whose frame is intact but whose content is invalid
// (not JSON, an unknown op, an op without its row) are quarantined; the store opens with every
// good record, and keeps opening at every later start.
func TestBadRecordsNeverStopTheStart(t *testing.T) {
	dir := t.TempDir()
	clk := newClock()
	s := openStore(t, dir, clk)
	fill(t, s, clk)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	j, err := journal.Open(journal.Options{Dir: dir, Name: "state", Sync: journal.SyncNever, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`not json`, `{"op":"teleport"}`, `{"op":"event"}`, `["op"]`} {
		if err := j.Append([]byte(bad)); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	for start := range 2 {
		s, err := Open(dir, Options{Now: clk.Now, Logger: quiet(), NoBackground: true})
		if err != nil {
			t.Fatalf("start %d: %v", start, err)
		}
		st := s.Stats()
		if st.Inboxes != 2 || st.Events != 4 || st.Pages != 1 || st.Skipped != 4 {
			t.Fatalf("start %d: %+v", start, st)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	files, err := os.ReadDir(dir + "/state.quarantine")
	if err != nil || len(files) != 4 {
		t.Fatalf("quarantine: %v %v, want the 4 bad records", files, err)
	}
}
