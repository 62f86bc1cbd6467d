package update

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/peage/appliance/internal/durable"
)

// Store is the update root on disk:
//
//	current                  symlink to the binary the units run (versions/appliance_<v>,
//	                         or the factory binary of the image until the first update)
//	versions/appliance_<v>   installed, verified binaries (mode 0755, owned by root)
//	update.json              the update in progress, if any, and the versions rolled back
//	lock                     held by the one updater that may run
//
// The root belongs to root and is not the daemons' state directory: a daemon that could write
// here could plant a binary that the next restart runs.
type Store struct {
	Root string
}

const (
	currentName  = "current"
	versionsDir  = "versions"
	binaryPrefix = "appliance_"
	stateName    = "update.json"
	tempMark     = ".tmp-"
)

func (s Store) currentPath() string  { return filepath.Join(s.Root, currentName) }
func (s Store) versionsPath() string { return filepath.Join(s.Root, versionsDir) }
func (s Store) statePath() string    { return filepath.Join(s.Root, stateName) }

// VersionPath is where version v is installed.
func (s Store) VersionPath(v string) string {
	return filepath.Join(s.versionsPath(), binaryPrefix+v)
}

// Current is the absolute path `current` names, "" when there is no `current` yet.
func (s Store) Current() (string, error) {
	t, err := os.Readlink(s.currentPath())
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(t) {
		t = filepath.Join(s.Root, t)
	}
	return filepath.Clean(t), nil
}

// VersionOf is the version a target path was installed as, "" for a binary not installed by
// the updater (the image's factory binary).
func (s Store) VersionOf(target string) string {
	if filepath.Dir(target) != filepath.Clean(s.versionsPath()) {
		return ""
	}
	v, ok := strings.CutPrefix(filepath.Base(target), binaryPrefix)
	if !ok || !versionPattern.MatchString(v) {
		return ""
	}
	return v
}

// Flip points `current` at target atomically: a new symlink under a temporary name is
// renamed over `current`, and the directory is fsynced so the flip survives a power cut.
func (s Store) Flip(target string) error {
	link := target
	if rel, err := filepath.Rel(s.Root, target); err == nil && !strings.HasPrefix(rel, "..") {
		link = rel // relative inside the root, so the tree can move (tests, image builds)
	}
	tmp := filepath.Join(s.Root, currentName+tempMark+randomSuffix())
	if err := os.Symlink(link, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, s.currentPath()); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return durable.SyncDir(s.Root)
}

// Install copies a verified release into versions/ and returns its path. The copy is hashed
// again while it is written (the source could change after Verify) and only a copy that
// matches the manifest is renamed into place; a failure leaves no file behind.
func (s Store) Install(rel *Release) (string, error) {
	m := &rel.Manifest
	dst := s.VersionPath(m.Version)
	if err := os.MkdirAll(s.versionsPath(), 0o755); err != nil {
		return "", err
	}
	if _, err := os.Stat(dst); err == nil {
		if err := sameContent(dst, m); err == nil {
			// The same release is already installed; it counts as the newest for pruning.
			now := time.Now()
			return dst, os.Chtimes(dst, now, now)
		}
	}
	src, err := os.Open(rel.Binary)
	if err != nil {
		return "", err
	}
	defer src.Close()
	tmp := filepath.Join(s.versionsPath(), tempMark+binaryPrefix+m.Version+"-"+randomSuffix())
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	fail := func(err error) (string, error) {
		out.Close()
		os.Remove(tmp)
		return "", err
	}
	if err := checkContent(io.TeeReader(src, out), m); err != nil {
		return fail(err)
	}
	if err := out.Chmod(0o755); err != nil {
		return fail(err)
	}
	if err := out.Sync(); err != nil {
		return fail(err)
	}
	if err := out.Close(); err != nil {
		os.Remove(tmp)
		return "", err
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return "", err
	}
	return dst, durable.SyncDir(s.versionsPath())
}

// sameContent checks an installed file against a manifest.
func sameContent(path string, m *Manifest) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return checkContent(f, m)
}

// Installed lists the installed versions' paths, most recently installed first.
func (s Store) Installed() ([]string, error) {
	entries, err := os.ReadDir(s.versionsPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	type inst struct {
		path string
		at   time.Time
	}
	var all []inst
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), binaryPrefix) || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		all = append(all, inst{filepath.Join(s.versionsPath(), e.Name()), info.ModTime()})
	}
	slices.SortFunc(all, func(a, b inst) int { return b.at.Compare(a.at) })
	paths := make([]string, len(all))
	for i, a := range all {
		paths[i] = a.path
	}
	return paths, nil
}

// Prune removes installed versions beyond the keep most recent, never one of protect.
func (s Store) Prune(keep int, protect ...string) ([]string, error) {
	paths, err := s.Installed()
	if err != nil {
		return nil, err
	}
	var removed []string
	kept := 0
	for _, p := range paths {
		if slices.Contains(protect, p) {
			kept++
			continue
		}
		if kept < keep {
			kept++
			continue
		}
		if err := os.Remove(p); err != nil {
			return removed, err
		}
		removed = append(removed, p)
	}
	if len(removed) > 0 {
		return removed, durable.SyncDir(s.versionsPath())
	}
	return removed, nil
}

// CleanTemps removes what an updater killed mid-step left: half-copied binaries and
// temporary symlinks. Neither is ever named by `current`.
func (s Store) CleanTemps() error {
	for _, dir := range []string{s.Root, s.versionsPath()} {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		for _, e := range entries {
			if strings.Contains(e.Name(), tempMark) {
				if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Phase is how far an update went, recorded before each step that the recovery must know of.
type Phase string

const (
	PhaseInstalled   Phase = "installed"    // the binary is in versions/, current not flipped yet
	PhaseFlipped     Phase = "flipped"      // current names the new version, not yet proven healthy
	PhaseRollingBack Phase = "rolling-back" // the new version failed; current goes back to From
)

// Pending is the update in progress.
type Pending struct {
	Version string    `json:"version"`
	From    string    `json:"from"` // what current named before
	To      string    `json:"to"`
	Phase   Phase     `json:"phase"`
	Started time.Time `json:"started"`
	Reason  string    `json:"reason,omitempty"` // why it is rolling back
}

// Record is update.json.
type Record struct {
	Pending *Pending `json:"pending,omitempty"`
	// Bad lists versions that were rolled back, so a timer does not install them again.
	Bad []string `json:"bad,omitempty"`
	// Previous is what ran before the current version, the target of a manual rollback.
	Previous string `json:"previous,omitempty"`
	// Last is the outcome of the last update, for `appliance update status`.
	Last string `json:"last,omitempty"`
}

// Load reads update.json (an empty record when there is none).
func (s Store) Load() (Record, error) {
	var r Record
	b, err := os.ReadFile(s.statePath())
	if errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: %w", s.statePath(), err)
	}
	return r, nil
}

// Save writes update.json atomically and durably.
func (s Store) Save(r Record) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return durable.WriteFile(s.statePath(), append(b, '\n'), 0o644, stateName+tempMark+"*")
}

// Lock takes the updater's exclusive lock; it is released when the process ends, even by
// kill -9, so a killed updater never blocks the next one.
func (s Store) Lock() (release func(), err error) {
	if err := os.MkdirAll(s.Root, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(s.Root, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("another updater holds %s: %w", f.Name(), err)
	}
	return func() { f.Close() }, nil
}

func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
