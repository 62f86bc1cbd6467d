package mica

import (
	"path/filepath"

	"github.com/peage/appliance/api/family"
)

// New builds the family over the pool; the register files are kept under the state
// directory between runs.
func New(d family.Deps) (*Routes, error) {
	return With(Parts{Pool: d.Pool, Dir: filepath.Join(d.Config.StateDir, "esma"), Now: d.Now})
}
