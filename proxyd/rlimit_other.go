//go:build !linux

package proxyd

import "errors"

// RaiseFileLimit is Linux-only.
func RaiseFileLimit() (uint64, error) { return 0, errors.New("not supported on this system") }
