package actormarket

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestActorFromRecordedAnswers(t *testing.T) {
	srv := upstreamtest.New(t)
	srv.Expect("/v2/acts/coding-doctor-omar~reddit-scraper-pro", nil, upstreamtest.File(t, filepath.Join("testdata", "act_coding-doctor-omar~reddit-scraper-pro.json")))
	srv.Expect("/v2/acts/nobody~nothing", nil, upstreamtest.FileStatus(t, filepath.Join("testdata", "not_found.json"), 404))
	c := New(srv.Client(t, Name))
	a, err := c.Actor(context.Background(), "coding-doctor-omar", "reddit-scraper-pro")
	if err != nil {
		t.Fatal(err)
	}
	rs := a.Stats.PublicRunStats30d
	if a.ID != "mw5JvRF7kSxjfNqdu" || rs == nil || rs.Total.V != 690 || rs.Succeeded.V != 659 || rs.TimedOut.V != 2 ||
		a.Stats.TotalUsers30Days.V != 31 || a.IsDeprecated == nil || *a.IsDeprecated || a.TaggedBuilds["latest"].BuildNumber != "0.0.39" {
		t.Errorf("actor = %+v", a)
	}
	if a.Current(time.Now()) != nil {
		t.Error("the record declares no pricing")
	}
	if _, err := c.Actor(context.Background(), "nobody", "nothing"); !upstream.IsNotFound(err) {
		t.Errorf("unknown actor: %v, want a 404", err)
	}
}

// TestTokenSentAsQuery: a configured token travels as ?token=, as the API documents.
func TestTokenSentAsQuery(t *testing.T) {
	srv := upstreamtest.New(t)
	srv.Expect("/v2/acts/jane35~instagram-scraper", upstreamtest.Query("token", "apify_api_test"), upstreamtest.File(t, filepath.Join("testdata", "act_jane35~instagram-scraper.json")))
	spec := srv.Spec(t, Name)
	spec.Key = "apify_api_test"
	h, err := httpc.New(spec, httpc.Options{Contact: "test@example.org"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(h).Actor(context.Background(), "jane35", "instagram-scraper")
	if err != nil || a.IsPublic || a.Stats.PublicRunStats30d != nil || a.Stats.TotalRuns.V != 16 {
		t.Fatalf("%+v %v", a, err)
	}
}

// TestCurrentPricing: the entry in force is the one with the latest start not after now.
// The entries are derived from the API schema (actor-pricing-info/*.yaml); no recorded answer
// with a pricing history was found (testdata/PROVENANCE).
func TestCurrentPricing(t *testing.T) {
	a := &Actor{PricingInfos: []PricingInfo{
		{Model: "PRICE_PER_DATASET_ITEM", StartedAt: "2025-01-01T00:00:00.000Z"},
		{Model: "PAY_PER_EVENT", StartedAt: "2026-03-01T00:00:00.000Z"},
		{Model: "FLAT_PRICE_PER_MONTH", StartedAt: "2027-01-01T00:00:00.000Z"},
	}}
	for _, tt := range []struct {
		at   string
		want string
	}{{"2024-06-01T00:00:00Z", ""}, {"2025-06-01T00:00:00Z", "PRICE_PER_DATASET_ITEM"}, {"2026-11-22T00:00:00Z", "PAY_PER_EVENT"}, {"2027-02-01T00:00:00Z", "FLAT_PRICE_PER_MONTH"}} {
		at, _ := time.Parse(time.RFC3339, tt.at)
		got := ""
		if p := a.Current(at); p != nil {
			got = p.Model
		}
		if got != tt.want {
			t.Errorf("at %s: %q, want %q", tt.at, got, tt.want)
		}
	}
}
