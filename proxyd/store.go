package proxyd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/peage/appliance/internal/journal"
	"github.com/peage/appliance/internal/state"
)

// Package is a sold package as it is kept durably. ID is the hex SHA-256 of the key: the raw
// key is shown once to the buyer and never written anywhere.
type Package struct {
	ID        string    `json:"id"`
	GB        int       `json:"gb"`
	Bytes     int64     `json:"bytes"`
	Used      int64     `json:"used"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
	Revoked   bool      `json:"revoked,omitempty"`
}

// Usage is a package's meter as an absolute byte count.
type Usage struct {
	ID   string
	Used int64
}

// Store keeps packages and their meters. Create and Revoke return once durable; SetUsed writes
// the meters of many packages at once and returns once the values survive kill -9 of the
// process (they may lag a power cut, see doc.go). SetUsed is monotonic: a value lower than the
// stored one is ignored, and so is an unknown package.
type Store interface {
	Create(ctx context.Context, p Package) error
	SetUsed(ctx context.Context, us []Usage) error
	Revoke(ctx context.Context, id string) error
	All(ctx context.Context) ([]Package, error)
	Close() error
}

// MemStore keeps packages in memory only (tests, and `appliance dev` without a state dir).
type MemStore struct {
	mu   sync.Mutex
	pkgs map[string]Package
}

func NewMemStore() *MemStore { return &MemStore{pkgs: map[string]Package{}} }

func (m *MemStore) Create(_ context.Context, p Package) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, dup := m.pkgs[p.ID]; dup {
		return fmt.Errorf("proxyd: package %s already exists", p.ID[:8])
	}
	m.pkgs[p.ID] = p
	return nil
}

func (m *MemStore) SetUsed(_ context.Context, us []Usage) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, u := range us {
		if p, ok := m.pkgs[u.ID]; ok && u.Used > p.Used {
			p.Used = u.Used
			m.pkgs[u.ID] = p
		}
	}
	return nil
}

func (m *MemStore) Revoke(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.pkgs[id]; ok {
		p.Revoked = true
		m.pkgs[id] = p
	}
	return nil
}

func (m *MemStore) All(context.Context) ([]Package, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Package, 0, len(m.pkgs))
	for _, p := range m.pkgs {
		out = append(out, p)
	}
	return out, nil
}

func (m *MemStore) Close() error { return nil }

// StateStore keeps packages in the appliance's state store (go-memdb over the write-ahead
// journal), opened by proxyd under its own name. The state row's key column holds the
// SHA-256 of the buyer's key, never the key itself.
type StateStore struct {
	st *state.Store
}

// OpenStateStore opens proxyd's state in dir. Every write is fsynced before it returns
// (journal.SyncAlways); a key's meter is written about once per slack it may lag, less the room
// a write needs (meter.go), and the meters of all keys that moved meanwhile go in the same write.
// The journal fsyncs through AIO (journal.Options.RawIO): proxyd's copy loops make no
// blocking system call, so an fsync seen by the scheduler would be the one thing that keeps
// the runtime's monitor polling every 20 µs, which cost more CPU than the fsync itself, and
// on proxyd's one processor (sched.go) an fsync holding it would stop every tunnel.
func OpenStateStore(dir string, log *slog.Logger) (*StateStore, error) {
	st, err := state.Open(dir, state.Options{Name: "proxyd", Sync: journal.SyncAlways, RawIO: true, Logger: log})
	if err != nil {
		return nil, err
	}
	return &StateStore{st: st}, nil
}

// AsyncFsync says whether the store's fsyncs go through AIO (journal.Journal.AsyncFsync).
func (s *StateStore) AsyncFsync() bool { return s.st.AsyncFsync() }

// NewStateStore wraps an already open state store (`appliance dev` shares one).
func NewStateStore(st *state.Store) *StateStore { return &StateStore{st: st} }

func (s *StateStore) Create(_ context.Context, p Package) error {
	_, err := s.st.CreatePackage(state.Package{
		Key: p.ID, GB: p.GB, BytesTotal: p.Bytes, BytesUsed: p.Used, CreatedAt: p.CreatedAt, ExpiresAt: p.ExpiresAt,
	})
	return err
}

func (s *StateStore) SetUsed(_ context.Context, us []Usage) error {
	su := make([]state.Usage, len(us))
	for i, u := range us {
		su[i] = state.Usage{Key: u.ID, Used: u.Used}
	}
	return s.st.SetUsages(su)
}

func (s *StateStore) Revoke(_ context.Context, id string) error {
	err := s.st.RevokePackage(id)
	if errors.Is(err, state.ErrNotFound) {
		return nil
	}
	return err
}

func (s *StateStore) All(context.Context) ([]Package, error) {
	var out []Package
	for _, p := range s.st.Packages() {
		out = append(out, Package{ID: p.Key, GB: p.GB, Bytes: p.BytesTotal, Used: p.BytesUsed,
			CreatedAt: p.CreatedAt, ExpiresAt: p.ExpiresAt, Revoked: p.Revoked})
	}
	return out, nil
}

// Close closes the state store.
func (s *StateStore) Close() error { return s.st.Close() }
