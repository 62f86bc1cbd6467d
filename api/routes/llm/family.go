package llm

import (
	"github.com/peage/appliance/api/family"
	model "github.com/peage/appliance/api/upstream/llm"
)

// New builds the language-model routes: 503 until upstream.override.llm has a key (guard's
// rules and the router's recognisers serve without it); the page-reading ones read through
// the web family's reader, and stay 503 without it (no browser farm).
func New(d family.Deps) (*Routes, error) {
	cfg, err := family.Section[model.Config](d.Config, "llm")
	if err != nil {
		return nil, err
	}
	h, err := d.Pool.Client(model.Name)
	if err != nil {
		return nil, err
	}
	return With(Parts{Model: model.New(h, cfg), Pages: d.Pages, Now: d.Now}), nil
}
