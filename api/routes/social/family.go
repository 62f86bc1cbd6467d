package social

import (
	"fmt"

	"github.com/peage/appliance/api/family"
	"github.com/peage/appliance/api/upstream/hackernews"
	"github.com/peage/appliance/api/upstream/reddit"
)

// New builds the community routes: Reddit (keyless, or OAuth with a key) and Hacker News.
func New(d family.Deps) (*Routes, error) {
	rh, err := d.Pool.Client(reddit.Name)
	if err != nil {
		return nil, err
	}
	ah, err := d.Pool.Client(reddit.AuthName)
	if err != nil {
		return nil, err
	}
	hh, err := d.Pool.Client(hackernews.Name)
	if err != nil {
		return nil, err
	}
	rc, err := reddit.New(rh, ah, d.Upstreams[reddit.Name], d.Config.Contact)
	if err != nil {
		return nil, fmt.Errorf("config key upstream.override.reddit.key: %w", err)
	}
	return With(rc, hackernews.New(hh)), nil
}
