// Package preflight serves /v1/<actor_marketplace>/preflight over the actor marketplace's
// public API (api/upstream/actormarket): whether an actor is worth calling, from its public
// record: deprecation, other users' runs of the last 30 days, last run, latest build, users,
// store notice and pricing. The rules are one table (rules.go) that the answer's method and
// the README state.
package preflight

import (
	"context"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/actormarket"
	"github.com/peage/appliance/api/upstream/httpc"
)

// Parts are the family's collaborators.
type Parts struct {
	Pool *httpc.Pool
	// Names are the neutral path segments: the route is /v1/<ActorMarketplace>/preflight.
	Names catalog.Names
	// Now is the clock (nil is time.Now): the ages are counted to it.
	Now func() time.Time
}

// Routes holds the handler.
type Routes struct {
	am  *actormarket.Client
	id  string
	now func() time.Time
}

// With builds the route over the actor-marketplace upstream of the pool.
func With(d Parts) (*Routes, error) {
	h, err := d.Pool.Client(actormarket.Name)
	if err != nil {
		return nil, err
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Routes{am: actormarket.New(h), id: d.Names.ActorMarketplace + ".preflight", now: d.Now}, nil
}

// Bind attaches the handler.
func (r *Routes) Bind(c *catalog.Catalog) error { return c.Bind(r.id, r.preflight, r.am.Ready) }

// RunStats are the evidence of recent runs.
type RunStats struct {
	Total       int64    `json:"total"`
	Succeeded   int64    `json:"succeeded"`
	Failed      int64    `json:"failed"`
	Aborted     int64    `json:"aborted"`
	TimedOut    int64    `json:"timed_out"`
	SuccessRate *float64 `json:"success_rate"` // null when no run is published
}

// Evidence is what the verdict was computed from.
type Evidence struct {
	Runs30d        *RunStats `json:"runs_30d"` // null for an actor whose statistics are not published
	LastRunDaysAgo *int      `json:"last_run_days_ago"`
	LastRunAt      string    `json:"last_run_at,omitempty"`
	Deprecated     bool      `json:"deprecated"`
	Public         bool      `json:"public"`
	Notice         string    `json:"notice,omitempty"`
	Users30Days    int64     `json:"users_30d"`
	TotalRuns      int64     `json:"total_runs"`
	LatestBuild    string    `json:"latest_build,omitempty"`
	BuildDaysAgo   *int      `json:"latest_build_days_ago"`
	Rating         *float64  `json:"rating,omitempty"`
	Reviews        int64     `json:"reviews"`
}

// Event is one priced event of a pay-per-event actor.
type Event struct {
	Name     string   `json:"name"`
	Title    string   `json:"title,omitempty"`
	PriceUSD *float64 `json:"price_usd"`
}

// Pricing is the pricing in force.
type Pricing struct {
	Model           string   `json:"model"` // FREE, PAY_PER_EVENT, PRICE_PER_DATASET_ITEM, FLAT_PRICE_PER_MONTH, or NONE
	PricePerUnitUSD *float64 `json:"price_per_unit_usd,omitempty"`
	TrialMinutes    int64    `json:"trial_minutes,omitempty"`
	Events          []Event  `json:"events,omitempty"`
	Since           string   `json:"since,omitempty"`
}

// Answer is the route's result.
type Answer struct {
	Actor    string   `json:"actor"`
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Verdict  string   `json:"verdict"`
	Score    int      `json:"score"`
	Alerts   []Alert  `json:"alerts"`
	Evidence Evidence `json:"evidence"`
	Pricing  Pricing  `json:"pricing"`
	Modified string   `json:"modified_at,omitempty"`
	Source   string   `json:"source"`
	Method   string   `json:"method"`
}

const source = "actor marketplace public API (Apify API v2, /v2/acts/{owner}~{name})"

func (r *Routes) preflight(ctx context.Context, req *catalog.Request) (any, error) {
	owner, name, _ := strings.Cut(req.Args.Str("actor"), "/")
	a, err := r.am.Actor(ctx, owner, name)
	if upstream.IsNotFound(err) {
		return nil, apierr.NotFound("no actor %s/%s in the marketplace", owner, name)
	}
	if err != nil {
		return nil, err
	}
	now := r.now().UTC()
	f := Facts{Deprecated: a.IsDeprecated != nil && *a.IsDeprecated, Public: a.IsPublic, Notice: a.Notice,
		RunsTotal: -1, LastRunDaysAgo: -1, BuildDaysAgo: -1, Users30Days: a.Stats.TotalUsers30Days.V}
	ev := Evidence{Deprecated: f.Deprecated, Public: a.IsPublic, Notice: a.Notice, Users30Days: a.Stats.TotalUsers30Days.V,
		TotalRuns: a.Stats.TotalRuns.V, Reviews: a.Stats.ReviewCount.V, LastRunAt: a.Stats.LastRunStartedAt}
	if a.Stats.ReviewCount.V > 0 {
		ev.Rating = a.Stats.ReviewRating.Ptr()
	}
	if rs := a.Stats.PublicRunStats30d; rs != nil {
		total := rs.Total.V
		if !rs.Total.Valid {
			total = rs.Succeeded.V + rs.Failed.V + rs.Aborted.V + rs.TimedOut.V
		}
		f.RunsTotal, f.RunsSucceeded = total, rs.Succeeded.V
		ev.Runs30d = &RunStats{Total: total, Succeeded: rs.Succeeded.V, Failed: rs.Failed.V, Aborted: rs.Aborted.V, TimedOut: rs.TimedOut.V}
		if total > 0 {
			rate := math.Round(10000*f.SuccessRate()) / 10000
			ev.Runs30d.SuccessRate = &rate
		}
	}
	if d, ok := daysAgo(a.Stats.LastRunStartedAt, now); ok {
		f.LastRunDaysAgo, ev.LastRunDaysAgo = d, &d
	}
	if b, ok := a.TaggedBuilds["latest"]; ok {
		ev.LatestBuild = b.BuildNumber
		if d, ok := daysAgo(b.FinishedAt, now); ok {
			f.BuildDaysAgo, ev.BuildDaysAgo = d, &d
		}
	}
	pricing := Pricing{Model: "NONE"}
	if p := a.Current(now); p != nil {
		pricing = Pricing{Model: p.Model, PricePerUnitUSD: p.PricePerUnitUSD.Ptr(), TrialMinutes: p.TrialMinutes.V, Since: p.StartedAt}
		if p.PerEvent != nil {
			for id, e := range p.PerEvent.Events {
				price := e.PriceUSD.Ptr()
				if t, ok := e.TieredUSD["FREE"]; ok && price == nil {
					price = t.PriceUSD.Ptr() // the price a caller without a paid plan pays
				}
				pricing.Events = append(pricing.Events, Event{Name: id, Title: e.Title, PriceUSD: price})
			}
			slices.SortFunc(pricing.Events, func(a, b Event) int { return strings.Compare(a.Name, b.Name) })
		}
	}
	f.PricingModel = pricing.Model
	verdict, score, alerts := Verdict(f)
	return &Answer{Actor: owner + "/" + name, ID: a.ID, Title: a.Title, Verdict: verdict, Score: score, Alerts: alerts,
		Evidence: ev, Pricing: pricing, Modified: a.ModifiedAt, Source: source, Method: method}, nil
}

// daysAgo is the whole days from an RFC 3339 time to now.
func daysAgo(ts string, now time.Time) (int, bool) {
	t, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		return 0, false
	}
	return max(int(now.Sub(t).Hours()/24), 0), true
}
