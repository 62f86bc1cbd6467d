package proxyroutes

import (
	"github.com/peage/appliance/api/family"
)

// New builds the proxy routes on proxyd; without it they stay unbound.
func New(d family.Deps) (*Routes, error) {
	if d.Proxy == nil {
		return nil, nil
	}
	return With(d.Proxy, d.Log), nil
}
