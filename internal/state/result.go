package state

import (
	memdb "github.com/hashicorp/go-memdb"
)

// PutResult keeps an answer under its key until ExpiresAt. When the key is taken by a live
// result, that result is returned with ErrExists: two concurrent first calls with one key end
// with one answer.
func (s *Store) PutResult(r Result) (Result, error) {
	var kept Result
	err := s.mutate(func(txn *memdb.Txn) (*record, error) {
		if raw, _ := txn.First(tResult, "id", r.Key); raw != nil {
			if old := raw.(*Result); s.now().Before(old.ExpiresAt) {
				kept = *old
				return nil, ErrExists
			}
		}
		kept = r
		return &record{Op: opResult, Result: &r}, nil
	})
	return kept, err
}

// Result returns the live answer kept under key.
func (s *Store) Result(key string) (Result, bool) {
	var r Result
	var ok bool
	s.read(func(txn *memdb.Txn) {
		if raw, _ := txn.First(tResult, "id", key); raw != nil {
			if x := raw.(*Result); s.now().Before(x.ExpiresAt) {
				r, ok = *x, true
			}
		}
	})
	return r, ok
}
