package state

import (
	"context"
	"errors"
	"fmt"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/peage/appliance/internal/bodystore"
)

// Limits of a webhook inbox (spec: "Webhook inbox", Limits).
const (
	InboxMaxEvents    = 100
	InboxMaxBodyBytes = 64 << 10
	// InboxQuotaBytes is the default Options.InboxQuota: 100 full-size bodies take 6.26 MiB
	// of it (whole 4 KiB blocks and their fixed fields), leaving 7.4 KiB of request head per
	// event on average (webhook heads are about 1 KiB; the edge takes up to 16 KiB). At the
	// catalog's 0.005 USDC an inbox buys 7 MiB for at most 24 h, and the default 8 GiB budget
	// holds 1,170 such reservations: docs/inbox-quotas.md.
	InboxQuotaBytes = 7 << 20
)

// CreateInbox stores a new inbox and reserves its quota (Options.InboxQuota) from the inbox
// budget. ErrExists if the id is taken; ErrBudget when the budget holds no room for one more
// quota (the inboxes already sold keep theirs: nothing is overbooked).
func (s *Store) CreateInbox(in Inbox) error {
	took := false
	err := s.mutate(func(txn *memdb.Txn) (*record, error) {
		if raw, _ := txn.First(tInbox, "id", in.ID); raw != nil {
			return nil, ErrExists
		}
		if !s.roomFor(1) {
			return nil, ErrBudget
		}
		// Under the single writer, as Sweep's releases are: no other sale passes the check
		// meanwhile.
		s.reserve(in.ID)
		took = true
		in.Events, in.LastSeq, in.Bytes, in.Used = 0, 0, 0, 0
		return &record{Op: opInbox, Inbox: &in}, nil
	})
	if err != nil && took {
		if _, ok := s.Inbox(in.ID); !ok {
			// Not stored (the journal refused the record): give the quota back. A failure
			// after the commit leaves the inbox stored and its quota taken.
			txn := s.db.Txn(true)
			s.unreserve(in.ID)
			txn.Abort()
		}
	}
	return err
}

// roomFor reports whether the budget can reserve n more inbox quotas.
func (s *Store) roomFor(n int64) bool {
	return (s.reservedN.Load()+n)*s.opts.InboxQuota <= s.budget.Load()
}

// reserve and unreserve change the set of inboxes holding a quota; callers hold memdb's
// writer (a write transaction).
func (s *Store) reserve(id string) {
	if _, ok := s.reserved[id]; !ok {
		s.reserved[id] = struct{}{}
		s.reservedN.Add(1)
	}
}

func (s *Store) unreserve(id string) {
	if _, ok := s.reserved[id]; ok {
		delete(s.reserved, id)
		s.reservedN.Add(-1)
	}
}

// reserveLiveInboxes takes the quota of every inbox not yet expired, at Open after the
// replay: reservations are not journaled, they follow from the rows. Inboxes sold before a
// smaller budget may together pass it; sales then wait until enough of them expire.
func (s *Store) reserveLiveInboxes() {
	now := s.now()
	txn := s.db.Txn(true)
	defer txn.Abort()
	it, err := txn.Get(tInbox, "id")
	if err != nil {
		return
	}
	for obj := it.Next(); obj != nil; obj = it.Next() {
		if in := obj.(*Inbox); !in.Expired(now) {
			s.reserve(in.ID)
		}
	}
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
// inbox holds InboxMaxEvents), ErrInboxQuota (the inbox's events would pass its quota),
// ErrBudget (the events of all inboxes would pass the inbox budget, which only inboxes sold
// before the budget was lowered can make happen: the delivery is refused, nothing stored is
// evicted, since every stored event belongs to an inbox someone paid for). The body size is
// the caller's to check.
// The body goes to disk (fsynced) before the event's record goes to the journal; the
// returned event carries it. Waiting readers are woken once the event is durable.
func (s *Store) AddEvent(ctx context.Context, ev Event) (Event, error) {
	select {
	case <-s.stop:
		return Event{}, ErrClosed
	default:
	}
	body := ev.Body
	ev.Body, ev.BodyBytes, ev.BodySHA256, ev.BodyFile = nil, int64(len(body)), "", ""
	size := ev.size()
	// Checked before the write too, so a delivery that would be refused costs no disk write.
	var pre error
	s.read(func(txn *memdb.Txn) { _, pre = s.admit(txn, ev.Inbox, size, s.now()) })
	if pre != nil {
		return Event{}, pre
	}
	if len(body) > 0 {
		ref, err := s.bodies.Put(ctx, ev.Inbox, body)
		if err != nil {
			var again error // the inbox may have expired and been swept meanwhile
			s.read(func(txn *memdb.Txn) { _, again = s.admit(txn, ev.Inbox, size, s.now()) })
			if again != nil {
				return Event{}, again
			}
			return Event{}, fmt.Errorf("state: event body: %w", err)
		}
		ev.BodySHA256, ev.BodyFile = ref.SHA256, ref.File
	}
	reserved := false
	err := s.mutate(func(txn *memdb.Txn) (*record, error) {
		now := s.now()
		in, err := s.admit(txn, ev.Inbox, size, now)
		if err != nil {
			return nil, err
		}
		ev.Seq = in.LastSeq + 1
		if ev.ReceivedAt.IsZero() {
			ev.ReceivedAt = now
		}
		// Taken under the single writer: no other delivery or sweep moves it meanwhile, so
		// the budget is never passed.
		s.inboxBytes.Add(size)
		reserved = true
		return &record{Op: opEvent, Event: &ev}, nil
	})
	if err != nil {
		// A failure after the commit (the fsync) leaves the event stored and counted, and its
		// body with it.
		if !reserved || !s.hasEvent(ev.Inbox, ev.Seq, ev.BodyFile) {
			if reserved {
				s.inboxBytes.Add(-size)
			}
			if ev.BodyFile != "" {
				// An orphan left by a failure here is removed at the next Open.
				_ = s.bodies.Remove(context.WithoutCancel(ctx), ev.Inbox, ev.BodyFile)
			}
		}
		return Event{}, err
	}
	s.notify(ev.Inbox)
	ev.Body = body
	return ev, nil
}

// admit decides whether inbox id takes a delivery of size bytes at now, and returns its row.
// Under the writer's transaction its answer holds until the commit.
func (s *Store) admit(txn *memdb.Txn, id string, size int64, now time.Time) (*Inbox, error) {
	raw, err := txn.First(tInbox, "id", id)
	if err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, ErrNotFound
	}
	in := raw.(*Inbox)
	if in.Expired(now) {
		return nil, ErrExpired
	}
	if in.Events >= InboxMaxEvents {
		return nil, ErrFull
	}
	if in.Used+size > s.opts.InboxQuota {
		return nil, ErrInboxQuota
	}
	if s.inboxBytes.Load()+size > s.budget.Load() {
		return nil, ErrBudget
	}
	return in, nil
}

func (s *Store) hasEvent(inbox string, seq uint64, file string) bool {
	found := false
	s.read(func(txn *memdb.Txn) {
		raw, _ := txn.First(tEvent, "id", inbox, seq)
		found = raw != nil && raw.(*Event).BodyFile == file
	})
	return found
}

// InboxRoom reports whether the inbox budget can reserve one more inbox's quota (an inbox
// sold now is sure of its room, whatever the others receive).
func (s *Store) InboxRoom() bool { return s.roomFor(1) }

// InboxQuota is the bytes one inbox's events may hold (Options.InboxQuota).
func (s *Store) InboxQuota() int64 { return s.opts.InboxQuota }

// blockBytes is the filesystem block a body file occupies at least a whole number of: 100
// one-byte bodies take 400 KiB of disk, not 100 bytes, and the budget counts the disk.
const blockBytes = 4096

// size is what an event takes from the budget: its body file in whole blocks, and the header
// and query text and fixed fields that its journal record and its row in memory hold.
func (ev *Event) size() int64 {
	n := len(ev.Method) + len(ev.ContentType) + len(ev.Kind) + len(ev.Inbox) + 64
	if ev.BodyBytes > 0 {
		// The file name and checksum in the record are fixed-size, and counted before the
		// body is written (AddEvent checks the budget first), so not read from the fields.
		n += int((ev.BodyBytes+blockBytes-1)/blockBytes*blockBytes) + 32 + 64
	}
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

// ErrBody matches every BodyError.
var ErrBody = errors.New("state: event body unreadable")

// BodyError: a stored event's body could not be read back intact (damaged or lost on disk).
// Err wraps bodystore.ErrCorrupt for a body that does not match its checksum.
type BodyError struct {
	Inbox string
	Seq   uint64
	Err   error
}

func (e *BodyError) Error() string {
	return fmt.Sprintf("state: body of event %d of inbox %s: %v", e.Seq, e.Inbox, e.Err)
}

func (e *BodyError) Unwrap() []error { return []error{ErrBody, e.Err} }

// Events returns the inbox row and its events with seq > after (oldest first, at most limit;
// 0 means all), bodies read back from disk and checked. ErrNotFound for an unknown inbox; a
// *BodyError when a body is damaged or lost, rather than an event served wrong.
func (s *Store) Events(ctx context.Context, id string, after uint64, limit int) (Inbox, []Event, error) {
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
	if err != nil {
		return in, nil, err
	}
	// Read outside the transaction: the files are immutable once named by a row.
	for i := range evs {
		ev := &evs[i]
		if ev.BodyFile == "" {
			continue
		}
		b, err := s.bodies.Get(ctx, id, bodystore.Ref{File: ev.BodyFile, Size: ev.BodyBytes, SHA256: ev.BodySHA256})
		switch {
		case err == nil:
			ev.Body = b
		case errors.Is(err, bodystore.ErrMissing) && s.sweptSince(id):
			// Expired and swept after our read: answer as the sweep left it.
			return in, nil, nil
		case ctx.Err() != nil:
			return in, nil, ctx.Err()
		default:
			return in, nil, &BodyError{Inbox: id, Seq: ev.Seq, Err: err}
		}
	}
	return in, evs, nil
}

// sweptSince reports whether inbox id holds no events any more (expired and swept).
func (s *Store) sweptSince(id string) bool {
	empty := true
	s.read(func(txn *memdb.Txn) { empty = len(eventsAfter(txn, id, 0, 1)) == 0 })
	return empty
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
		in, evs, err := s.Events(ctx, id, after, limit)
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
