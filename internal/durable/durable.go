// Package durable writes files that survive a crash or a power cut whole or not at all.
package durable

import (
	"os"
	"path/filepath"
)

// WriteFile replaces path with b (mode perm): written to a temporary file in the same
// directory, named by pattern as os.CreateTemp does, fsynced, renamed over path, and the
// directory fsynced, so a reader sees the old content or the new, never half of it. A failure
// leaves no temporary file behind.
func WriteFile(path string, b []byte, perm os.FileMode, pattern string) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return err
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if _, err := f.Write(b); err != nil {
		return fail(err)
	}
	if err := f.Chmod(perm); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return SyncDir(dir)
}

// SyncDir fsyncs a directory, making the entries created, renamed or removed in it durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
