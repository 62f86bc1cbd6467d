package web

import (
	"context"
	"errors"

	"github.com/peage/appliance/api/family"
	"github.com/peage/appliance/api/upstream/search"
)

// New builds the web routes on the browser farm (without one they stay unbound), with web
// search for /v1/search/sources and the residential exit's country when proxyd runs.
func New(d family.Deps) (*Routes, error) {
	if d.Farm == nil {
		return nil, nil
	}
	s, err := search.FromPool(d.Pool, d.Upstreams)
	if err != nil {
		return nil, err
	}
	farm, ok := d.Farm.(Farm)
	if !ok {
		return nil, errNoTasks
	}
	r := With(farm, d.Egress).WithSearch(s)
	if px := d.Proxy; px != nil {
		r.ExitCountry = func(ctx context.Context) (string, error) {
			st, err := px.Status(ctx)
			if err != nil {
				return "", err
			}
			return st.Exit.Country, nil
		}
	}
	return r, nil
}

var errNoTasks = errors.New("the browser farm runs no tasks")
