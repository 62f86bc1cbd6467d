// Package actormarket is the connector of the actor marketplace's public API (Apify API v2,
// upstream name actor-marketplace): one actor's public record, with its store statistics
// (other users' runs of the last 30 days), its pricing and its latest build. The API is
// readable without a token for public actors; a token (upstream.override.actor-marketplace.key,
// sent as ?token=) raises the rate limits.
package actormarket

import (
	"context"
	"net/url"
	"time"

	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/wire"
)

// Name is the registry name of the upstream.
const Name = "actor-marketplace"

// Client reads actors.
type Client struct{ h *httpc.Client }

// New builds the connector over the actor-marketplace client.
func New(h *httpc.Client) *Client { return &Client{h: h} }

// Ready is nil: public actors are readable without a token.
func (c *Client) Ready() error { return c.h.Ready() }

// RunStats are the counts of other users' runs of the last 30 days, by final status.
type RunStats struct {
	Succeeded wire.Int `json:"SUCCEEDED"`
	Failed    wire.Int `json:"FAILED"`
	Aborted   wire.Int `json:"ABORTED"`
	TimedOut  wire.Int `json:"TIMED-OUT"`
	Total     wire.Int `json:"TOTAL"`
}

// Stats are the actor's usage figures.
type Stats struct {
	TotalRuns         wire.Int   `json:"totalRuns"`
	TotalUsers        wire.Int   `json:"totalUsers"`
	TotalUsers30Days  wire.Int   `json:"totalUsers30Days"`
	LastRunStartedAt  string     `json:"lastRunStartedAt"`
	ReviewCount       wire.Int   `json:"actorReviewCount"`
	ReviewRating      wire.Float `json:"actorReviewRating"`
	PublicRunStats30d *RunStats  `json:"publicActorRunStats30Days"`
}

// ChargeEvent is one priced event of a pay-per-event actor.
type ChargeEvent struct {
	Title     string     `json:"eventTitle"`
	PriceUSD  wire.Float `json:"eventPriceUsd"`
	TieredUSD map[string]struct {
		PriceUSD wire.Float `json:"tieredEventPriceUsd"`
	} `json:"eventTieredPricingUsd"`
}

// PricingInfo is one entry of the actor's pricing history.
type PricingInfo struct {
	Model           string     `json:"pricingModel"`
	StartedAt       string     `json:"startedAt"`
	PricePerUnitUSD wire.Float `json:"pricePerUnitUsd"`
	TrialMinutes    wire.Int   `json:"trialMinutes"`
	PerEvent        *struct {
		Events map[string]ChargeEvent `json:"actorChargeEvents"`
	} `json:"pricingPerEvent"`
}

// Actor is the data of GET /v2/acts/{owner}~{name}.
type Actor struct {
	ID           string        `json:"id"`
	Name         string        `json:"name"`
	Username     string        `json:"username"`
	Title        string        `json:"title"`
	IsPublic     bool          `json:"isPublic"`
	IsDeprecated *bool         `json:"isDeprecated"`
	Notice       string        `json:"notice"`
	ModifiedAt   string        `json:"modifiedAt"`
	Stats        Stats         `json:"stats"`
	PricingInfos []PricingInfo `json:"pricingInfos"`
	TaggedBuilds map[string]struct {
		BuildNumber string `json:"buildNumber"`
		FinishedAt  string `json:"finishedAt"`
	} `json:"taggedBuilds"`
}

// Actor reads one actor by owner and name; an unknown actor is an *upstream.Error with
// Status 404.
func (c *Client) Actor(ctx context.Context, owner, name string) (*Actor, error) {
	var out struct {
		Data Actor `json:"data"`
	}
	// The API names an actor owner~name in a path segment ("/" would be a path separator).
	err := c.h.GetJSON(ctx, "/v2/acts/"+url.PathEscape(owner+"~"+name), nil, &out)
	return &out.Data, err
}

// Current is the pricing in force at t: the entry with the latest start not after t.
func (a *Actor) Current(t time.Time) *PricingInfo {
	var cur *PricingInfo
	var curStart time.Time
	for i := range a.PricingInfos {
		p := &a.PricingInfos[i]
		start, err := time.Parse(time.RFC3339, p.StartedAt)
		if err != nil && p.StartedAt != "" {
			continue
		}
		if start.After(t) {
			continue
		}
		if cur == nil || !start.Before(curStart) {
			cur, curStart = p, start
		}
	}
	return cur
}
