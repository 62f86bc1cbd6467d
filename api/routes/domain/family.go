package domain

import (
	"log/slog"

	"github.com/peage/appliance/api/family"
	"github.com/peage/appliance/api/upstream/resolver"
	"github.com/peage/appliance/internal/obs"
)

// New builds the family over the configured resolver. Without a usable resolver the DNS and
// mail routes stay listed, unavailable (503), with the reason.
func New(d family.Deps) (*Routes, error) {
	cfg, err := family.Section[resolver.Config](d.Config, "dns")
	if err != nil {
		return nil, err
	}
	res, err := resolver.New(cfg)
	if err != nil && d.Log != nil {
		d.Log.Warn("no DNS resolver; the DNS and mail routes are unavailable", slog.String(obs.KeyErr, err.Error()))
	}
	return With(Parts{Resolver: res, ResolverErr: err, Egress: d.Egress, Now: d.Now}), nil
}
