package state

import (
	memdb "github.com/hashicorp/go-memdb"
)

// PutSMSNumber stores a new rented number. ErrExists if the session is taken.
func (s *Store) PutSMSNumber(n SMSNumber) error {
	return s.mutate(func(txn *memdb.Txn) (*record, error) {
		if raw, _ := txn.First(tSMS, "id", n.Session); raw != nil {
			return nil, ErrExists
		}
		return &record{Op: opSMS, SMS: &n}, nil
	})
}

// SMSNumber returns the number of a session.
func (s *Store) SMSNumber(session string) (SMSNumber, bool) {
	var n SMSNumber
	var ok bool
	s.read(func(txn *memdb.Txn) {
		if raw, _ := txn.First(tSMS, "id", session); raw != nil {
			n, ok = *raw.(*SMSNumber), true
		}
	})
	return n, ok
}

// SMSNumbers lists every rented number, released or not (for the reaper and the operator).
func (s *Store) SMSNumbers() []SMSNumber {
	var out []SMSNumber
	s.read(func(txn *memdb.Txn) {
		it, err := txn.Get(tSMS, "id")
		if err != nil {
			return
		}
		for obj := it.Next(); obj != nil; obj = it.Next() {
			out = append(out, *obj.(*SMSNumber))
		}
	})
	return out
}

// MarkSMSReleased records that the carrier released the session's number: its session ends
// at once if it had not already.
func (s *Store) MarkSMSReleased(session string) error {
	return s.mutate(func(txn *memdb.Txn) (*record, error) {
		raw, _ := txn.First(tSMS, "id", session)
		if raw == nil {
			return nil, ErrNotFound
		}
		n := *raw.(*SMSNumber)
		if n.Released {
			return &record{Op: opSMS, SMS: &n}, nil // idempotent
		}
		now := s.now()
		n.Released, n.ReleasedAt = true, now
		if now.Before(n.ExpiresAt) {
			n.ExpiresAt = now
		}
		return &record{Op: opSMS, SMS: &n}, nil
	})
}
