package uk

import (
	"github.com/peage/appliance/api/family"
)

// New builds the family over the pool.
func New(d family.Deps) (*Routes, error) { return With(Parts{Pool: d.Pool}) }
