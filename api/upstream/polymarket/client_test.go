package polymarket

import (
	"context"
	"os"
	"testing"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

// listOf is the recorded market of testdata/market_559651.json as GET /markets lists it: the
// list answer is an array of the same Market objects (DERIVED, see testdata/PROVENANCE).
func listOf(t testing.TB, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return append(append([]byte("["), b...), ']')
}

func TestTopByVolume(t *testing.T) {
	s := upstreamtest.New(t)
	q := upstreamtest.Query("active", "true", "closed", "false", "order", "volume24hr", "ascending", "false", "limit", "100")
	s.Expect("/markets", q, upstreamtest.JSON(200, string(listOf(t, "testdata/market_559651.json"))))
	c := New(s.Client(t, Name))
	ms, err := c.TopByVolume(context.Background(), 100)
	if err != nil || len(ms) != 1 {
		t.Fatalf("TopByVolume = %+v, %v", ms, err)
	}
	m := ms[0]
	if m.ID != "559651" || m.Question != "Xi Jinping out before 2027?" || m.Slug != "xi-jinping-out-before-2027" ||
		m.EndDate != "2026-12-31T00:00:00Z" || !m.Active || m.Closed {
		t.Errorf("market = %+v", m)
	}
	if m.Volume24hr.V != 14542.225487 || !m.Volume24hr.Valid || m.Liquidity.V != 237253.02375 {
		t.Errorf("volume24hr %+v liquidityNum %+v", m.Volume24hr, m.Liquidity)
	}
	oc, ok := m.Parsed()
	if !ok || len(oc) != 2 || oc[0] != (Outcome{"Yes", 0.0455}) || oc[1] != (Outcome{"No", 0.9545}) {
		t.Errorf("outcomes = %+v, %v", oc, ok)
	}
	// The recording carries no events (a /markets/{id} answer): the link falls back to the
	// market's own page.
	if l := m.Link(); l != "https://polymarket.com/market/xi-jinping-out-before-2027" {
		t.Errorf("link = %s", l)
	}
}

func TestTopByVolumeDown(t *testing.T) {
	s := upstreamtest.New(t)
	s.Handle(upstreamtest.ServerError())
	if _, err := New(s.Client(t, Name)).TopByVolume(context.Background(), 100); upstream.StatusOf(err) != 500 {
		t.Fatalf("err = %v, want a 500", err)
	}
}

func TestParsedRejectsUnpaired(t *testing.T) {
	for _, m := range []Market{
		{Outcomes: `["Yes","No"]`, OutcomePrices: `["0.5"]`},
		{Outcomes: `not json`, OutcomePrices: `["0.5","0.5"]`},
	} {
		if oc, ok := m.Parsed(); ok {
			t.Errorf("%+v parsed as %+v", m, oc)
		}
	}
}
