//go:build !linux

package proxyd

import "syscall"

// waitReadable is a no-op off Linux: the pump then blocks in Read holding a pooled buffer.
func waitReadable(syscall.RawConn) (bool, error) { return false, nil }
