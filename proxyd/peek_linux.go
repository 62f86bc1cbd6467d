//go:build linux

package proxyd

import (
	"errors"
	"syscall"
)

// waitReadable blocks in the netpoller until src has data or an end, without reading it:
// a one-byte MSG_PEEK tells data (false) from an orderly end (true).
func waitReadable(rc syscall.RawConn) (eof bool, err error) {
	var b [1]byte
	var n int
	var serr error
	err = rc.Read(func(fd uintptr) bool {
		for {
			n, _, serr = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
			if !errors.Is(serr, syscall.EINTR) {
				break
			}
		}
		return !errors.Is(serr, syscall.EAGAIN)
	})
	if err != nil {
		return false, err
	}
	if serr != nil {
		return false, serr
	}
	return n == 0, nil
}
