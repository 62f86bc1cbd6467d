package websearch

import (
	"github.com/peage/appliance/api/family"
	"github.com/peage/appliance/api/upstream/search"
)

// New builds the family over the configured providers (Serper and/or SearXNG); with
// neither, the routes stay listed, unavailable (503).
func New(d family.Deps) (*Routes, error) {
	s, err := search.FromPool(d.Pool, d.Upstreams)
	if err != nil {
		return nil, err
	}
	return With(s), nil
}
