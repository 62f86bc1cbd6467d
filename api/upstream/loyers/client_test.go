package loyers

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestRecordedRows(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect(at("appartement"), nil, upstreamtest.File(t, "testdata/pred-app-mef-dhup.csv"))
	s.Expect(at("maison"), nil, upstreamtest.File(t, "testdata/pred-mai-mef-dhup.csv"))
	c := New(s.Client(t, Name))
	for _, tt := range []struct {
		typ, insee string
		want       Rent
	}{
		{"appartement", "92012", Rent{Insee: "92012", Commune: "Boulogne-Billancourt", PerM2: 29.7322054471064, Low: 23.9513952838298, High: 36.9082481531152, Level: "commune", Listings: 20474}},
		{"appartement", "69383", Rent{Insee: "69383", Commune: "Lyon 3e Arrondissement", PerM2: 16.4010917810445, Low: 12.8243613172001, High: 20.9753768594671, Level: "commune", Listings: 30256}},
		{"maison", "37200", Rent{Insee: "37200", Commune: "Rivarennes", PerM2: 8.95647852540627, Low: 6.94544866376119, High: 11.5497949030441, Level: "maille", Listings: 20}},
	} {
		got, err := c.Rent(context.Background(), tt.typ, tt.insee)
		if err != nil || got != tt.want {
			t.Errorf("%s %s = %+v, %v", tt.typ, tt.insee, got, err)
		}
	}
	if _, err := c.Rent(context.Background(), "maison", "92012"); !errors.Is(err, ErrNoRent) {
		t.Errorf("absent commune: %v", err)
	}
	// Each table was read once, however many lookups.
	if n := len(s.Requests()); n != 2 {
		t.Errorf("%d reads, want 2", n)
	}
}

// Concurrent callers share one read.
func TestOneReadForConcurrentCallers(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect(at("appartement"), nil, upstreamtest.File(t, "testdata/pred-app-mef-dhup.csv"))
	c := New(s.Client(t, Name))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := c.Rent(context.Background(), "appartement", "84050"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := len(s.Requests()); n != 1 {
		t.Errorf("%d reads, want 1", n)
	}
}

// A failed read is reported and not kept; a header without the rent is a bad answer naming
// the column (DERIVED from the recorded header).
func TestFailures(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect(at("appartement"), nil, upstreamtest.ServerError())
	c := New(s.Client(t, Name))
	if _, err := c.Rent(context.Background(), "appartement", "92012"); upstream.StatusOf(err) != 500 {
		t.Errorf("500: %v", err)
	}
	s.Reset()
	s.Expect(at("appartement"), nil, upstreamtest.Body(200, "text/csv", []byte("\"id_zone\";\"INSEE_C\";\"LIBGEO\"\r\n\"1\";\"92012\";\"Boulogne-Billancourt\"\r\n")))
	_, err := c.Rent(context.Background(), "appartement", "92012")
	var ue *upstream.Error
	if !errors.As(err, &ue) || ue.Field != "loypredm2" || !errors.Is(err, upstream.ErrBadAnswer) {
		t.Errorf("bad header: %v", err)
	}
}

// The tables come in Windows-1252: names decode to UTF-8.
func TestLatin1(t *testing.T) {
	b := []byte("\"INSEE_C\";\"LIBGEO\";\"loypredm2\"\n\"37264\";\"Vall\xe8res\";8,96\n")
	rs, err := Parse(b)
	if err != nil || rs["37264"].Commune != "Vallères" || rs["37264"].PerM2 != 8.96 {
		t.Errorf("parse = %+v, %v", rs, err)
	}
}

// at is the path of a table on the fixture server, which keeps the base URL's path. The
// files are written out, not read from Files, so that a changed file name fails here.
func at(typ string) string {
	return "/resources/carte-des-loyers-indicateurs-de-loyers-dannonce-par-commune-en-2025" + map[string]string{
		"appartement": "/20251211-145010/pred-app-mef-dhup.csv",
		"maison":      "/20251211-145039/pred-mai-mef-dhup.csv",
	}[typ]
}
