package state

import (
	"slices"
	"time"

	memdb "github.com/hashicorp/go-memdb"
)

// Proxy packages and their meters, for proxyd.
//
// proxyd opens its own Store (Options{Name: "proxyd"}) in the shared state directory. Each
// meter update is one journal record holding the absolute byte count, so a replay never counts
// a byte twice. With journal.SyncAlways every update is fsynced before it returns: meter in
// batches (e.g. every 1 MiB relayed per key and at the end of every tunnel, or once a second)
// so a crash loses at most one batch of unrecorded bytes, which is then the buyer's gain, never
// the buyer's loss.

// GiB is the size of one bought gigabyte, in bytes.
const GiB = int64(1) << 30

// Active reports whether the package may carry traffic at now: not revoked, not expired,
// quota not used up.
func (p Package) Active(now time.Time) bool {
	return !p.Revoked && now.Before(p.ExpiresAt) && p.BytesUsed < p.BytesTotal
}

// Remaining is the number of bytes left on the package (0 when used up).
func (p Package) Remaining() int64 { return max(0, p.BytesTotal-p.BytesUsed) }

// CreatePackage stores a newly sold package. Zero fields get defaults: BytesTotal = GB GiB,
// CreatedAt = now, ExpiresAt = CreatedAt + 30 days, UpdatedAt = CreatedAt. ErrExists if the key
// is taken. The returned package is what was stored.
func (s *Store) CreatePackage(p Package) (Package, error) {
	err := s.mutate(func(txn *memdb.Txn) (*record, error) {
		if raw, _ := txn.First(tPackage, "id", p.Key); raw != nil {
			return nil, ErrExists
		}
		if p.BytesTotal == 0 {
			p.BytesTotal = int64(p.GB) * GiB
		}
		if p.CreatedAt.IsZero() {
			p.CreatedAt = s.now()
		}
		if p.ExpiresAt.IsZero() {
			p.ExpiresAt = p.CreatedAt.Add(30 * 24 * time.Hour)
		}
		if p.UpdatedAt.IsZero() {
			p.UpdatedAt = p.CreatedAt
		}
		return &record{Op: opPackage, Package: &p}, nil
	})
	return p, err
}

// Package returns the package with key (ended ones too, until swept after PackageRetention).
func (s *Store) Package(key string) (Package, bool) {
	var p Package
	var ok bool
	s.read(func(txn *memdb.Txn) {
		if raw, _ := txn.First(tPackage, "id", key); raw != nil {
			p, ok = *raw.(*Package), true
		}
	})
	return p, ok
}

// Packages lists every package, oldest first.
func (s *Store) Packages() []Package {
	var out []Package
	s.read(func(txn *memdb.Txn) {
		it, err := txn.Get(tPackage, "id")
		if err != nil {
			return
		}
		for obj := it.Next(); obj != nil; obj = it.Next() {
			out = append(out, *obj.(*Package))
		}
	})
	slices.SortFunc(out, func(a, b Package) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out
}

// AddUsage adds delta bytes to the package's meter (durably) and returns the updated package.
// Usage is recorded even past quota or expiry: bytes that flowed are counted. ErrNotFound for
// an unknown key. A zero delta writes nothing.
func (s *Store) AddUsage(key string, delta int64) (Package, error) {
	var out Package
	err := s.mutate(func(txn *memdb.Txn) (*record, error) {
		raw, err := txn.First(tPackage, "id", key)
		if err != nil {
			return nil, err
		}
		if raw == nil {
			return nil, ErrNotFound
		}
		out = *raw.(*Package)
		if delta == 0 {
			return nil, errNoop
		}
		out.BytesUsed += delta
		out.UpdatedAt = s.now()
		return &record{Op: opUsage, Usage: &usage{Key: key, Used: out.BytesUsed, At: out.UpdatedAt}}, nil
	})
	if err == errNoop {
		err = nil
	}
	return out, err
}

// Usage is a package's meter as an absolute byte count.
type Usage struct {
	Key  string
	Used int64
}

// SetUsages raises the meters of many packages in one durable write (one journal record, one
// fsync), so the meters of many tunnels cost one write. A meter never goes down: a value at or
// below the stored one is left out, and so is an unknown key (a package already forgotten).
func (s *Store) SetUsages(us []Usage) error {
	err := s.mutate(func(txn *memdb.Txn) (*record, error) {
		now := s.now()
		var out []usage
		for _, u := range us {
			raw, _ := txn.First(tPackage, "id", u.Key)
			if raw == nil || raw.(*Package).BytesUsed >= u.Used {
				continue
			}
			out = append(out, usage{Key: u.Key, Used: u.Used, At: now})
		}
		if len(out) == 0 {
			return nil, errNoop
		}
		return &record{Op: opUsages, Usages: out}, nil
	})
	if err == errNoop {
		err = nil
	}
	return err
}

// RevokePackage ends a package at once (operator action, refund). ErrNotFound for an unknown key.
func (s *Store) RevokePackage(key string) error {
	return s.mutate(func(txn *memdb.Txn) (*record, error) {
		raw, _ := txn.First(tPackage, "id", key)
		if raw == nil {
			return nil, ErrNotFound
		}
		p := *raw.(*Package)
		p.Revoked = true
		return &record{Op: opPackage, Package: &p}, nil
	})
}
