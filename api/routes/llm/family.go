package llm

import (
	"github.com/peage/appliance/api/family"
	"github.com/peage/appliance/api/routes/web"
	model "github.com/peage/appliance/api/upstream/llm"
)

// New builds the language-model routes: 503 until upstream.override.llm has a key (guard's
// rules and the router's recognisers serve without it); the page-reading ones need the
// browser farm.
func New(d family.Deps) (*Routes, error) {
	h, err := d.Pool.Client(model.Name)
	if err != nil {
		return nil, err
	}
	p := Parts{Model: model.New(h, d.Config.LLM), Now: d.Now}
	pages, err := web.New(d)
	if err != nil {
		return nil, err
	}
	if pages != nil {
		p.Pages = pages
	}
	return With(p), nil
}
