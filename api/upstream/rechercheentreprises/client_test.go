package rechercheentreprises

import (
	"context"
	"net/url"
	"testing"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func search(q, per string) url.Values {
	return upstreamtest.Query("q", q, "page", "1", "per_page", per, "limite_matching_etablissements", "100")
}

func TestFind(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect("/search", search("la poste", "5"), upstreamtest.File(t, "testdata/search_la_poste.json"))
	s.Expect("/search", search("552032534", "5"), upstreamtest.File(t, "testdata/search_552032534.json"))
	s.Expect("/search", search("88087814500015", "5"), upstreamtest.File(t, "testdata/search_88087814500015.json"))
	s.Expect("/search", search("88087814500099", "5"), upstreamtest.File(t, "testdata/search_88087814500015.json"))
	s.Expect("/search", search("81280923400030", "5"), upstreamtest.File(t, "testdata/search_81280923400030.json"))
	c := New(s.Client(t, Name))
	tests := []struct {
		q         string
		wantSiren []string
	}{
		// A name keeps its spaces: the upstream sees "la poste", not "laposte".
		{"la poste", []string{"356000000", "532484755", "903908796", "505017012", "987940533"}},
		{"  la   poste ", []string{"356000000", "532484755", "903908796", "505017012", "987940533"}},
		{"552032534", []string{"552032534"}},
		{"552 032 534", []string{"552032534"}},
		{"88087814500015", []string{"880878145"}}, // the head office
		{"88087814500099", nil},                   // right SIREN, unknown establishment
		{"81280923400030", []string{"812809234"}}, // a secondary establishment, not the head office
	}
	for _, tt := range tests {
		r, err := c.Find(context.Background(), tt.q, 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Results) > len(tt.wantSiren) {
			r.Results = r.Results[:len(tt.wantSiren)] // la poste: the recording holds 10 of 10000
		}
		if len(r.Results) != len(tt.wantSiren) {
			t.Fatalf("Find(%q) = %d results, want %v", tt.q, len(r.Results), tt.wantSiren)
		}
		for i, u := range r.Results {
			if u.Siren != tt.wantSiren[i] {
				t.Errorf("Find(%q)[%d] = %s", tt.q, i, u.Siren)
			}
		}
	}
	r, _ := c.Find(context.Background(), "552032534", 5)
	u := r.Results[0]
	if u.Siege.Latitude != "48.876352027085" || len(u.Dirigeants) != 13 || *u.Finances["2024"].CA != 27376000000 {
		t.Errorf("decoded = %+v", u)
	}
	// A turnover of 0 is a figure, not a missing one (recorded September 2026 format, with the NAF 2025 fields).
	r, _ = c.Find(context.Background(), "81280923400030", 5)
	u = r.Results[0]
	if ca := u.Finances["2023"].CA; ca == nil || *ca != 0 || u.Siege.Siret != "81280923400014" || len(u.MatchingEtablissements) != 1 {
		t.Errorf("decoded = %+v", u)
	}
}

func TestBadRequestIsNotRetried(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect("/search", upstreamtest.Query("q", "x", "page", "1", "per_page", "10"), upstreamtest.FileStatus(t, "testdata/bad_request.json", 400))
	_, err := New(s.Client(t, Name)).Search(context.Background(), Query{Q: "x"})
	if upstream.StatusOf(err) != 400 || len(s.Requests()) != 1 {
		t.Fatalf("err = %v after %d calls", err, len(s.Requests()))
	}
}
