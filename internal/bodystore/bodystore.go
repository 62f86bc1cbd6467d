// Package bodystore keeps the bodies of webhook inbox events on disk, one file per body in a
// directory per inbox, so that the in-memory state holds only their metadata: 500 inboxes of
// 100 events of 64 KiB (what 2.5 USDC buys) would not fit in the appliance's memory.
//
// A body is written and fsynced, with its directory entry, before Put returns, so a journal
// record that names it (written after Put) never points at a body a crash lost. The file name
// is random rather than the event's sequence number: the body can then be written before the
// state's single writer numbers the event, and no fsync runs under that writer's lock. A body
// whose record never reached the journal is an orphan; Prune removes orphans at start.
//
// Get verifies the size and the SHA-256 recorded in the journal: a body damaged on disk is
// reported (CorruptError), never served.
package bodystore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sync"
)

// Ref names a stored body and what it must read back as.
type Ref struct {
	File   string // file name in the inbox's directory
	Size   int64
	SHA256 string // lower-case hex
}

// ErrMissing: the body's file is not there (its inbox was swept meanwhile, or the disk lost it).
var ErrMissing = errors.New("bodystore: body missing")

// ErrCorrupt matches every CorruptError.
var ErrCorrupt = errors.New("bodystore: body does not match its checksum")

// CorruptError: a body read back differs from what was stored.
type CorruptError struct {
	Inbox, File           string
	WantSize, GotSize     int64
	WantSHA256, GotSHA256 string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("bodystore: body %s of inbox %s is damaged: %d bytes with SHA-256 %s, stored as %d bytes with SHA-256 %s",
		e.File, e.Inbox, e.GotSize, e.GotSHA256, e.WantSize, e.WantSHA256)
}

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// Store is a directory of bodies. It is safe for concurrent use.
type Store struct {
	dir string

	mu      sync.Mutex
	durable map[string]bool // inbox directories whose entry in dir is fsynced by this process
}

// Open uses (and creates) dir.
func Open(ctx context.Context, dir string) (*Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("bodystore: %w", err)
	}
	return &Store{dir: dir, durable: map[string]bool{}}, nil
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

// safeName is what an inbox id may be as a directory name as it is; any other id is
// hex-encoded behind '=', which safeName never matches, so names cannot collide and an id can
// never climb out of the store ("..", "/").
var safeName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,100}$`)

func dirName(inbox string) string {
	if safeName.MatchString(inbox) {
		return inbox
	}
	return "=" + hex.EncodeToString([]byte(inbox))
}

func inboxOf(name string) (string, bool) {
	if safeName.MatchString(name) {
		return name, true
	}
	if len(name) > 1 && name[0] == '=' {
		b, err := hex.DecodeString(name[1:])
		return string(b), err == nil
	}
	return "", false
}

// Put stores body for inbox durably and returns its reference.
func (s *Store) Put(ctx context.Context, inbox string, body []byte) (Ref, error) {
	if err := ctx.Err(); err != nil {
		return Ref{}, err
	}
	dir, err := s.inboxDir(inbox)
	if err != nil {
		return Ref{}, err
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return Ref{}, fmt.Errorf("bodystore: %w", err)
	}
	name := hex.EncodeToString(b[:])
	path := filepath.Join(dir, name)
	if err := writeSync(path, body); err != nil {
		os.Remove(path)
		return Ref{}, fmt.Errorf("bodystore: %w", err)
	}
	if err := syncDir(dir); err != nil {
		os.Remove(path)
		return Ref{}, fmt.Errorf("bodystore: %w", err)
	}
	sum := sha256.Sum256(body)
	return Ref{File: name, Size: int64(len(body)), SHA256: hex.EncodeToString(sum[:])}, nil
}

// inboxDir creates the inbox's directory if needed and makes its entry durable once per
// process, before any body in it counts as stored.
func (s *Store) inboxDir(inbox string) (string, error) {
	dir := filepath.Join(s.dir, dirName(inbox))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.durable[inbox] {
		return dir, nil
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("bodystore: %w", err)
	}
	if err := syncDir(s.dir); err != nil {
		return "", fmt.Errorf("bodystore: %w", err)
	}
	s.durable[inbox] = true
	return dir, nil
}

// Get reads a body back and checks it against ref.
func (s *Store) Get(ctx context.Context, inbox string, ref Ref) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !safeFile(ref.File) {
		return nil, fmt.Errorf("%w: inbox %s: bad file name %q", ErrMissing, inbox, ref.File)
	}
	f, err := os.Open(filepath.Join(s.dir, dirName(inbox), ref.File))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: inbox %s file %s", ErrMissing, inbox, ref.File)
	}
	if err != nil {
		return nil, fmt.Errorf("bodystore: %w", err)
	}
	defer f.Close()
	// One byte more than stored is enough to see the file grew; never more than that is read.
	b, err := io.ReadAll(io.LimitReader(f, ref.Size+1))
	if err != nil {
		return nil, fmt.Errorf("bodystore: %w", err)
	}
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); int64(len(b)) != ref.Size || got != ref.SHA256 {
		return nil, &CorruptError{Inbox: inbox, File: ref.File, WantSize: ref.Size, GotSize: int64(len(b)),
			WantSHA256: ref.SHA256, GotSHA256: got}
	}
	return b, nil
}

var hexName = regexp.MustCompile(`^[0-9a-f]{32}$`)

func safeFile(name string) bool { return hexName.MatchString(name) }

// Remove deletes one body (a delivery refused after its body was written). A missing file is
// not an error.
func (s *Store) Remove(ctx context.Context, inbox, file string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !safeFile(file) {
		return nil
	}
	if err := os.Remove(filepath.Join(s.dir, dirName(inbox), file)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("bodystore: %w", err)
	}
	return nil
}

// RemoveInbox deletes every body of inbox.
func (s *Store) RemoveInbox(ctx context.Context, inbox string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.durable, inbox)
	s.mu.Unlock()
	if err := os.RemoveAll(filepath.Join(s.dir, dirName(inbox))); err != nil {
		return fmt.Errorf("bodystore: %w", err)
	}
	return nil
}

// Pruned counts what Prune removed.
type Pruned struct {
	Files, Bytes int64
}

// Prune removes every file that keep does not claim (orphans: bodies whose journal record was
// never written, bodies of inboxes swept before a crash) and every directory left empty. Run it
// before any Put, once the journal is replayed.
func (s *Store) Prune(ctx context.Context, keep func(inbox, file string) bool) (Pruned, error) {
	var p Pruned
	dirs, err := os.ReadDir(s.dir)
	if err != nil {
		return p, fmt.Errorf("bodystore: %w", err)
	}
	for _, d := range dirs {
		if err := ctx.Err(); err != nil {
			return p, err
		}
		path := filepath.Join(s.dir, d.Name())
		inbox, ok := inboxOf(d.Name())
		if !ok || !d.IsDir() {
			p.add(path)
			if err := os.RemoveAll(path); err != nil {
				return p, fmt.Errorf("bodystore: %w", err)
			}
			continue
		}
		files, err := os.ReadDir(path)
		if err != nil {
			return p, fmt.Errorf("bodystore: %w", err)
		}
		kept := 0
		for _, f := range files {
			if keep(inbox, f.Name()) {
				kept++
				continue
			}
			fp := filepath.Join(path, f.Name())
			p.add(fp)
			if err := os.RemoveAll(fp); err != nil {
				return p, fmt.Errorf("bodystore: %w", err)
			}
		}
		if kept == 0 {
			if err := os.Remove(path); err != nil {
				return p, fmt.Errorf("bodystore: %w", err)
			}
		}
	}
	return p, nil
}

func (p *Pruned) add(path string) {
	p.Files++
	if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() {
		p.Bytes += st.Size()
	}
}

func writeSync(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync dir %s: %w", dir, err)
	}
	return nil
}
