package state

import (
	"context"
	"time"

	memdb "github.com/hashicorp/go-memdb"
)

// Limits of a webhook inbox (spec: "Webhook inbox", Limits).
const (
	InboxMaxEvents    = 100
	InboxMaxBodyBytes = 64 << 10
)

// CreateInbox stores a new inbox. ErrExists if the id is taken.
func (s *Store) CreateInbox(in Inbox) error {
	return s.mutate(func(txn *memdb.Txn) (*record, error) {
		if raw, _ := txn.First(tInbox, "id", in.ID); raw != nil {
			return nil, ErrExists
		}
		in.Events, in.LastSeq, in.Bytes = 0, 0, 0
		return &record{Op: opInbox, Inbox: &in}, nil
	})
}

// Inbox returns the inbox with id (expired ones too, until they are swept).
func (s *Store) Inbox(id string) (Inbox, bool) {
	var in Inbox
	var ok bool
	s.read(func(txn *memdb.Txn) {
		if raw, _ := txn.First(tInbox, "id", id); raw != nil {
			in, ok = *raw.(*Inbox), true
		}
	})
	return in, ok
}

// AddEvent stores one delivery in its inbox (ev.Inbox), numbering it with the inbox's next
// seq and stamping ReceivedAt if unset. Concurrent deliveries are serialised: every accepted
// event is stored, none overwrites another. Errors: ErrNotFound, ErrExpired, ErrFull (the
// inbox holds InboxMaxEvents), ErrBudget (the events of all inboxes would pass
// Options.InboxBudget: the delivery is refused, nothing stored is evicted, since every stored
// event belongs to an inbox someone paid for). The body size is the caller's to check.
// Waiting readers are woken once the event is durable.
func (s *Store) AddEvent(ev Event) (Event, error) {
	size := ev.size()
	reserved := false
	err := s.mutate(func(txn *memdb.Txn) (*record, error) {
		raw, err := txn.First(tInbox, "id", ev.Inbox)
		if err != nil {
			return nil, err
		}
		if raw == nil {
			return nil, ErrNotFound
		}
		in := raw.(*Inbox)
		now := s.now()
		if in.Expired(now) {
			return nil, ErrExpired
		}
		if in.Events >= InboxMaxEvents {
			return nil, ErrFull
		}
		// Checked and taken under the single writer: no other delivery or sweep moves it
		// meanwhile, so the budget is never passed.
		if s.inboxBytes.Load()+size > s.opts.InboxBudget {
			return nil, ErrBudget
		}
		ev.Seq = in.LastSeq + 1
		if ev.ReceivedAt.IsZero() {
			ev.ReceivedAt = now
		}
		s.inboxBytes.Add(size)
		reserved = true
		return &record{Op: opEvent, Event: &ev}, nil
	})
	if err != nil {
		// A failure after the commit (the fsync) leaves the event stored and counted.
		if reserved && !s.hasEvent(ev.Inbox, ev.Seq) {
			s.inboxBytes.Add(-size)
		}
		return Event{}, err
	}
	s.notify(ev.Inbox)
	return ev, nil
}

func (s *Store) hasEvent(inbox string, seq uint64) bool {
	found := false
	s.read(func(txn *memdb.Txn) {
		raw, _ := txn.First(tEvent, "id", inbox, seq)
		found = raw != nil
	})
	return found
}

// InboxRoom reports whether the inbox storage can still take a delivery of the largest size
// (an inbox sold now could receive something).
func (s *Store) InboxRoom() bool {
	return s.inboxBytes.Load()+InboxMaxBodyBytes+16<<10 <= s.opts.InboxBudget
}

// size is what an event holds in memory and in the journal, to the byte that matters: body,
// header and query text, and the fixed fields.
func (ev *Event) size() int64 {
	n := len(ev.Body) + len(ev.Method) + len(ev.ContentType) + len(ev.Kind) + len(ev.Inbox) + 64
	for k, vs := range ev.Header {
		n += len(k)
		for _, v := range vs {
			n += len(v) + 4
		}
	}
	for _, q := range ev.Query {
		n += len(q[0]) + len(q[1]) + 4
	}
	return int64(n)
}

// eventsAfter lists the events of inbox id with seq > after, oldest first, at most limit
// (0: all). It returns the stored pointers: callers copy before handing out.
func eventsAfter(txn *memdb.Txn, id string, after uint64, limit int) []*Event {
	it, err := txn.LowerBound(tEvent, "id", id, after+1)
	if err != nil {
		return nil
	}
	var out []*Event
	for obj := it.Next(); obj != nil; obj = it.Next() {
		ev := obj.(*Event)
		if ev.Inbox != id {
			break
		}
		out = append(out, ev)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out
}

// Events returns the inbox row and its events with seq > after (oldest first, at most limit;
// 0 means all). ErrNotFound for an unknown inbox. Event bodies are shared: do not modify them.
func (s *Store) Events(id string, after uint64, limit int) (Inbox, []Event, error) {
	var in Inbox
	var evs []Event
	err := ErrNotFound
	s.read(func(txn *memdb.Txn) {
		raw, _ := txn.First(tInbox, "id", id)
		if raw == nil {
			return
		}
		in, err = *raw.(*Inbox), nil
		for _, ev := range eventsAfter(txn, id, after, limit) {
			evs = append(evs, *ev)
		}
	})
	return in, evs, err
}

// WaitEvents is Events that, when there is nothing after the cursor, waits up to wait for a
// delivery (or the inbox's expiry, ctx's end, or Close) before answering. No polling: a
// delivery wakes the waiters of its inbox. A reader that passes the seq of the last event it
// got as after never misses nor repeats an event.
func (s *Store) WaitEvents(ctx context.Context, id string, after uint64, limit int, wait time.Duration) (Inbox, []Event, error) {
	var timer <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timer = t.C
	}
	for {
		ch := s.waitCh(id) // taken before the read, so a delivery in between still wakes us
		in, evs, err := s.Events(id, after, limit)
		if err != nil || len(evs) > 0 || wait <= 0 || in.Expired(s.now()) {
			return in, evs, err
		}
		select {
		case <-ch:
		case <-timer:
			return in, nil, nil
		case <-ctx.Done():
			return in, nil, nil
		case <-s.stop:
			return in, nil, nil
		}
	}
}

func (s *Store) waitCh(id string) <-chan struct{} {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	ch, ok := s.waiters[id]
	if !ok {
		ch = make(chan struct{})
		s.waiters[id] = ch
	}
	return ch
}

func (s *Store) notify(id string) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if ch, ok := s.waiters[id]; ok {
		close(ch)
		delete(s.waiters, id)
	}
}

// Inboxes lists every inbox (for the operator and tests).
func (s *Store) Inboxes() []Inbox {
	var out []Inbox
	s.read(func(txn *memdb.Txn) {
		it, err := txn.Get(tInbox, "id")
		if err != nil {
			return
		}
		for obj := it.Next(); obj != nil; obj = it.Next() {
			out = append(out, *obj.(*Inbox))
		}
	})
	return out
}

// RevokeInbox ends an inbox at once, as if it had expired (410): its payment did not arrive.
func (s *Store) RevokeInbox(id string) error {
	err := s.mutate(func(txn *memdb.Txn) (*record, error) {
		raw, _ := txn.First(tInbox, "id", id)
		if raw == nil {
			return nil, ErrNotFound
		}
		in := *raw.(*Inbox)
		in.ExpiresAt = s.now()
		return &record{Op: opInbox, Inbox: &in}, nil
	})
	if err == nil {
		s.notify(id) // long-polls on it end now
	}
	return err
}
