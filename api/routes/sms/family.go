package sms

import (
	"context"
	"fmt"

	"github.com/peage/appliance/api/family"
	"github.com/peage/appliance/api/upstream/twilio"
)

// New builds the rented SMS numbers (Twilio) over the journaled store, and schedules the
// reaper that releases the numbers of ended sessions (at start, then every minute). Without
// the store the routes stay unbound.
func New(d family.Deps) (*Routes, error) {
	if d.Store == nil {
		return nil, nil
	}
	h, err := d.Pool.Client(twilio.Name)
	if err != nil {
		return nil, err
	}
	carrier, err := twilio.New(h, d.Upstreams[twilio.Name].Key)
	if err != nil {
		return nil, fmt.Errorf("config key upstream.override.twilio.key: %w", err)
	}
	r := With(carrier, d.Store, d.Log, d.Now)
	if d.Background != nil {
		d.Background(func(ctx context.Context) { r.RunReaper(ctx, ReapEvery) })
	}
	return r, nil
}
