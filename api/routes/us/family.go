package us

import (
	"github.com/peage/appliance/api/family"
	"github.com/peage/appliance/api/upstream/llm"
)

// New builds the family over the pool; /v1/us/brief is written by the configured model.
func New(d family.Deps) (*Routes, error) {
	cfg, err := family.Section[llm.Config](d.Config, "llm")
	if err != nil {
		return nil, err
	}
	h, err := d.Pool.Client(llm.Name)
	if err != nil {
		return nil, err
	}
	return With(Parts{Pool: d.Pool, Model: llm.New(h, cfg)})
}
