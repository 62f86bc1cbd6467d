package rechercheentreprises

import (
	"context"
	"testing"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestFind(t *testing.T) {
	s := upstreamtest.New(t)
	s.Handle(upstreamtest.File(t, "testdata/search.json"))
	c := New(s.Client(t, Name))
	tests := []struct {
		q         string
		wantSiren []string
	}{
		{"atelier durand", []string{"812345676", "552032534"}},
		{"812345676", []string{"812345676"}},
		{"812 345 676", []string{"812345676"}},
		{"81234567600025", []string{"812345676"}},
		{"55203253400646", []string{"552032534"}}, // the head office
		{"81234567600033", nil},                   // right SIREN, unknown establishment
		{"552032534", []string{"552032534"}},
		{"130025265", nil},
	}
	for _, tt := range tests {
		r, err := c.Find(context.Background(), tt.q, 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Results) != len(tt.wantSiren) || r.TotalResults != len(tt.wantSiren) {
			t.Fatalf("Find(%q) = %d results, want %v", tt.q, len(r.Results), tt.wantSiren)
		}
		for i, u := range r.Results {
			if u.Siren != tt.wantSiren[i] {
				t.Errorf("Find(%q)[%d] = %s", tt.q, i, u.Siren)
			}
		}
	}
	if q := s.Last().URL.Query(); q.Get("q") != "130025265" || q.Get("per_page") != "5" {
		t.Errorf("query sent = %v", q)
	}
	r, _ := c.Find(context.Background(), "812345676", 5)
	u := r.Results[0]
	if u.Siege.Latitude != "45.7412" || len(u.Dirigeants) != 2 || *u.Finances["2023"].CA != 1843200 || len(u.MatchingEtablissements) != 2 {
		t.Errorf("decoded = %+v", u)
	}
}

func TestBadRequestIsNotRetried(t *testing.T) {
	s := upstreamtest.New(t)
	s.Handle(upstreamtest.FileStatus(t, "testdata/bad_request.json", 400))
	_, err := New(s.Client(t, Name)).Search(context.Background(), Query{Q: "x"})
	if upstream.StatusOf(err) != 400 || len(s.Requests()) != 1 {
		t.Fatalf("err = %v after %d calls", err, len(s.Requests()))
	}
}
