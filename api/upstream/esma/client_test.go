package esma

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

// serve answers the five recorded files at their real paths and counts the requests.
func serve(t *testing.T, srv *upstreamtest.Server, count *atomic.Int32) {
	t.Helper()
	for _, f := range Files {
		h := upstreamtest.File(t, filepath.Join("testdata", f.File))
		srv.Expect(Folder+f.File, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			count.Add(1)
			h.ServeHTTP(w, r)
		}))
	}
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func find(s *Snapshot, reg Register, lei string) *Entry {
	for i := range s.Entries {
		if e := &s.Entries[i]; e.Register == reg && e.LEI == lei {
			return e
		}
	}
	return nil
}

func TestParsesTheRecordedRegisters(t *testing.T) {
	srv := upstreamtest.New(t)
	var n atomic.Int32
	serve(t, srv, &n)
	c := New(srv.Client(t, Name), "", nil)
	s, err := c.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	count := map[Register]int{}
	for _, e := range s.Entries {
		count[e.Register]++
	}
	// CASPS.csv: 244 logical rows (281 physical lines: quoted addresses span lines) of 243
	// entities (EUWAX AG has two authorisations); the excerpts: EMT 14 rows of 7 issuers, ART
	// header only, OTHER 9 rows of 5 offerors, NCASP 6 rows of 5 decisions (one row repeated
	// verbatim).
	want := map[Register]int{CASP: 243, EMT: 7, WhitePaper: 5, NonCompliant: 5}
	for reg, w := range want {
		if count[reg] != w {
			t.Errorf("%s: %d entities, want %d (all: %v)", reg, count[reg], w, count)
		}
	}
	if count[ART] != 0 {
		t.Errorf("ART: %d entities, the recorded file has none", count[ART])
	}
	bp := find(s, CASP, "5493007WZ7IFULIL8G21")
	if bp == nil || bp.LegalName != "Bitpanda GmbH" || bp.AuthorisedOn != "2025-04-09" || bp.HomeMemberState != "AT" ||
		len(bp.ServiceCodes) != 7 || bp.ServiceCodes[0] != "a" || len(bp.Passport) != 30 || bp.LastUpdate != "2025-04-18" {
		t.Errorf("Bitpanda = %+v", bp)
	}
	// The first column of the header follows a byte order mark.
	if bp != nil && bp.Authority != "Austrian Financial Market Authority (FMA)" {
		t.Errorf("authority %q", bp.Authority)
	}
	st := find(s, CASP, "549300LZMQXXYV4JJ603")
	if st == nil || st.AuthorisationEnd != "2026-04-24" || st.Active(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("Stratos Europe = %+v", st)
	}
	if !st.Active(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Error("Stratos Europe was in force before its end date")
	}
	// A quoted address spanning three lines stays in its record.
	var multiline *Entry
	for i := range s.Entries {
		if s.Entries[i].LegalName == "Coinmotion Oy" {
			multiline = &s.Entries[i]
		}
	}
	if multiline == nil || multiline.HomeMemberState != "FI" || len(multiline.ServiceCodes) == 0 {
		t.Errorf("Coinmotion Oy = %+v", multiline)
	}
	euwax := find(s, CASP, "529900032TYR45XIEW79")
	if euwax == nil || euwax.AuthorisedOn != "2025-04-01" || len(euwax.ServiceCodes) < 3 {
		t.Errorf("EUWAX AG = %+v", euwax)
	}
}

func TestRepairsWindows1252Bytes(t *testing.T) {
	in := []byte("ae_lei_name,ae_commercial_name\nPayward,Kraken (\x93Kraken\x94) Caf\xe9\n")
	tab, err := ParseCSV(in)
	if err != nil {
		t.Fatal(err)
	}
	if got := tab.Rows[0]["ae_commercial_name"]; got != "Kraken (“Kraken”) Café" {
		t.Errorf("repaired %q", got)
	}
	if _, err := ParseCSV([]byte("<html><body>Access denied</body></html>")); err == nil {
		t.Error("an HTML page parsed as a register")
	}
}

func TestSemicolonExport(t *testing.T) {
	tab, err := ParseCSV([]byte("\xef\xbb\xbfae_lei_name;ae_lei\r\nA, B SA;529900T8BM49AURSDO55\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if tab.Rows[0]["ae_lei_name"] != "A, B SA" || tab.Rows[0]["ae_lei"] != "529900T8BM49AURSDO55" {
		t.Errorf("rows %v", tab.Rows)
	}
}

// TestOneRefreshSharedAndDaily: concurrent first callers share one download; the copy serves
// for a day, then one refresh fetches the five files again.
func TestOneRefreshSharedAndDaily(t *testing.T) {
	srv := upstreamtest.New(t)
	var n atomic.Int32
	serve(t, srv, &n)
	clk := &clock{t: time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)}
	c := New(srv.Client(t, Name), "", clk.now)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Snapshot(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n.Load() != 5 {
		t.Fatalf("%d requests for 8 concurrent callers, want 5 (one download)", n.Load())
	}
	clk.add(23 * time.Hour)
	if _, err := c.Snapshot(context.Background()); err != nil || n.Load() != 5 {
		t.Fatalf("within the day: err %v, %d requests", err, n.Load())
	}
	clk.add(2 * time.Hour)
	s, err := c.Snapshot(context.Background())
	if err != nil || n.Load() != 10 {
		t.Fatalf("after a day: err %v, %d requests, want 10", err, n.Load())
	}
	if !s.AsOf.Equal(clk.now()) {
		t.Errorf("as of %v, want %v", s.AsOf, clk.now())
	}
}

// TestStaleCopyServedWhenRefreshFails: a failed refresh serves the last copy with its date
// (from memory, and from disk after a restart); with no copy the upstream error comes back.
func TestStaleCopyServedWhenRefreshFails(t *testing.T) {
	dir := t.TempDir()
	srv := upstreamtest.New(t)
	var n atomic.Int32
	serve(t, srv, &n)
	first := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	clk := &clock{t: first}
	c := New(srv.Client(t, Name), dir, clk.now)
	if _, err := c.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, f := range append([]string{asOfFile}, Files[0].File, Files[4].File) {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("cache: %v", err)
		}
	}

	srv.Reset()
	srv.Handle(upstreamtest.ServerError())
	clk.add(48 * time.Hour)
	s, err := c.Snapshot(context.Background())
	if err != nil || !s.AsOf.Equal(first) || len(s.Entries) == 0 {
		t.Fatalf("stale from memory: %v %v", s, err)
	}
	// A restart reads the copy on disk; the failed refresh still serves it.
	restarted := New(srv.Client(t, Name), dir, clk.now)
	s, err = restarted.Snapshot(context.Background())
	if err != nil || !s.AsOf.Equal(first) || find(s, CASP, "5493007WZ7IFULIL8G21") == nil {
		t.Fatalf("stale from disk: %v %v", s, err)
	}
	// A fresh copy on disk is used without any download.
	srv.Reset()
	srv.Handle(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("unexpected download %s", r.URL.Path)
		w.WriteHeader(500)
	}))
	clk.t = first.Add(time.Hour)
	if _, err := New(srv.Client(t, Name), dir, clk.now).Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}

	srv.Handle(upstreamtest.TooMany())
	_, err = New(srv.Client(t, Name), t.TempDir(), clk.now).Snapshot(context.Background())
	if upstream.StatusOf(err) != 429 {
		t.Errorf("no copy at all: %v, want the upstream's 429", err)
	}
}
