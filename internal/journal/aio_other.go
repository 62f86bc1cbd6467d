//go:build !linux

package journal

import (
	"errors"
	"os"
)

type aioFsync struct{}

func newAioFsync(*os.File) (*aioFsync, error) { return nil, errors.New("AIO fsync is Linux only") }

func (*aioFsync) fsync(*os.File) error { return errors.New("AIO fsync is Linux only") }

func (*aioFsync) close() {}
