package state

import (
	"errors"
	"time"

	memdb "github.com/hashicorp/go-memdb"
)

// errNoop aborts a mutation that has nothing to write; accessors turn it into success.
var errNoop = errors.New("state: nothing to write")

// Day is the UTC day of t as the free-call table keys it (YYYY-MM-DD).
func Day(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// UseFreeCall takes client's free call of the current UTC day on a route family. It returns
// granted true (and records it durably) if the call was still available, false if it was
// already used, and the UTC day it counted against. If the free call then fails, give it back
// with ReleaseFreeCall(client, family, day): no allowance is spent on a failed call.
func (s *Store) UseFreeCall(client, family, route string) (granted bool, day string, err error) {
	err = s.mutate(func(txn *memdb.Txn) (*record, error) {
		now := s.now()
		day = Day(now)
		if raw, _ := txn.First(tFreeCall, "id", client, day, family); raw != nil {
			return nil, errNoop
		}
		granted = true
		return &record{Op: opFree, Free: &FreeCall{Client: client, Day: day, Family: family, Route: route, At: now}}, nil
	})
	if err == errNoop {
		return false, day, nil
	}
	return granted && err == nil, day, err
}

// FreeCallUsed reports whether client used its free call of the UTC day on family.
func (s *Store) FreeCallUsed(client, family string, day string) bool {
	used := false
	s.read(func(txn *memdb.Txn) {
		raw, _ := txn.First(tFreeCall, "id", client, day, family)
		used = raw != nil
	})
	return used
}

// ReleaseFreeCall gives back a free call taken on day (the failed call's day, from Day).
func (s *Store) ReleaseFreeCall(client, family, day string) error {
	err := s.mutate(func(txn *memdb.Txn) (*record, error) {
		if raw, _ := txn.First(tFreeCall, "id", client, day, family); raw == nil {
			return nil, errNoop
		}
		return &record{Op: opFreeDel, Free: &FreeCall{Client: client, Day: day, Family: family}}, nil
	})
	if err == errNoop {
		return nil
	}
	return err
}

// FreeCalls lists the recorded free calls (for tests and the operator).
func (s *Store) FreeCalls() []FreeCall {
	var out []FreeCall
	s.read(func(txn *memdb.Txn) {
		it, err := txn.Get(tFreeCall, "id")
		if err != nil {
			return
		}
		for obj := it.Next(); obj != nil; obj = it.Next() {
			out = append(out, *obj.(*FreeCall))
		}
	})
	return out
}
