// Package diskfree reads how much of a filesystem an unprivileged process may still fill.
package diskfree

import (
	"context"
	"fmt"
	"syscall"
)

// Available returns the bytes of dir's filesystem that this process may still write: the
// blocks free to unprivileged users, not the ones kept for root, since the daemons do not run
// as root and could never use those.
func Available(ctx context.Context, dir string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("diskfree: statfs %s: %w", dir, err)
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}
