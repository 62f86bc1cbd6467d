// Package state holds the appliance's live state (webhook inboxes and their events, published
// pages, proxy packages and their meters, free-call allowances) in go-memdb, made durable by a
// write-ahead journal (internal/journal) in the state directory.
//
// Every mutation runs under go-memdb's single writer: it is validated, applied to the write
// transaction, written to the journal (in commit order), committed, and only then, outside the
// writer lock, waits for the journal's fsync (group commit). An accessor returns once its change
// is as durable as the journal's Sync policy promises: with journal.SyncAlways (the default),
// what an accessor acknowledged survives kill -9 and a power cut.
//
// At Open the journal (snapshot, then log) is replayed into memory and expired rows are swept.
// In the background the store sweeps expired rows (Options.SweepEvery) and compacts the journal
// (Options.CompactEvery, or sooner once the log passes Options.CompactBytes): it writes the
// in-memory state as a new snapshot and starts a fresh log. Sweeping is not journaled: it is a
// function of the clock, so it is simply redone after a restart.
//
// Event bodies do not live in memory nor in the journal: they are files under
// <dir>/<Name>.inbox-bodies/ (internal/bodystore), written and fsynced before the journal
// record that names them, so the memory an event holds is its metadata alone and the inbox
// budget is a budget of disk. The record carries the body's size and SHA-256, checked on every
// read. A body whose record never reached the journal (a crash in between, a refused delivery)
// is removed at the next Open; the sweep removes the bodies of expired inboxes.
package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/peage/appliance/internal/bodystore"
	"github.com/peage/appliance/internal/diskfree"
	"github.com/peage/appliance/internal/journal"
	"github.com/peage/appliance/internal/obs"
)

// Errors returned by accessors. Handlers map them to HTTP statuses.
var (
	ErrNotFound = errors.New("state: not found")
	ErrExists   = errors.New("state: already exists")
	ErrExpired  = errors.New("state: expired")
	ErrFull     = errors.New("state: limit reached")
	// ErrBudget: the events of all inboxes together hold Options.InboxBudget bytes, or (from
	// CreateInbox) the budget has no room left to reserve another inbox's quota.
	ErrBudget = errors.New("state: inbox storage budget reached")
	// ErrInboxQuota: the inbox's own events hold its quota (Options.InboxQuota) of bytes.
	ErrInboxQuota = errors.New("state: inbox quota reached")
	ErrClosed     = errors.New("state: closed")
)

// Options configures a Store. Zero values take the defaults in brackets.
type Options struct {
	// Name is the journal's file name stem in the state directory ["state"]. Daemons that run as
	// separate processes open the same directory under different names ("api", "proxyd").
	Name string
	// Sync is the journal's fsync policy [journal.SyncAlways].
	Sync journal.Sync
	// SyncInterval is the fsync period for journal.SyncInterval [100ms].
	SyncInterval time.Duration
	// RawIO fsyncs the journal through AIO where the kernel offers it, else writes and fsyncs
	// it by raw system calls (journal.Options.RawIO).
	RawIO bool
	// Now is the clock [time.Now].
	Now func() time.Time
	// Logger [slog.Default()].
	Logger *slog.Logger
	// SweepEvery is the period of the background sweep of expired rows [1m].
	SweepEvery time.Duration
	// CompactEvery is the period of background compaction [10m]; CompactBytes triggers it early
	// when the log grows past that size [32 MiB] (checked at every sweep).
	CompactEvery time.Duration
	CompactBytes int64
	// Tombstone is how long an expired inbox or page is remembered (to answer 410 Gone rather
	// than 404) before it is deleted [7 days]. Its events and HTML are dropped at expiry.
	Tombstone time.Duration
	// PackageRetention is how long an ended proxy package is kept after its expiry [30 days].
	PackageRetention time.Duration
	// NoBackground disables the background sweep and compaction (tests drive them by hand).
	NoBackground bool
	// InboxBudget bounds the bytes that the events of all inboxes hold together on disk
	// (bodies rounded up to whole blocks, headers, query) [DefaultInboxBudget]. At 100 events
	// of 64 KiB, one inbox can hold 6.25 MiB: without a global bound a few USDC of inboxes
	// would fill the disk. At Open it is lowered to what the disk can hold (DiskFree, DiskMargin).
	InboxBudget int64
	// InboxQuota is the bytes one inbox's events may hold (Event.size summed), reserved from
	// InboxBudget when the inbox is created and given back when it expires, so that no inbox
	// ever lacks room for what it was sold, whatever other inboxes receive [InboxQuotaBytes].
	InboxQuota int64
	// DiskFree reads the bytes still free on the state directory's filesystem
	// [diskfree.Available].
	DiskFree func(ctx context.Context, dir string) (int64, error)
	// DiskMargin is the free disk the inbox budget leaves to everything else (journals,
	// snapshots, logs) when the disk is smaller than the budget [DefaultDiskMargin].
	DiskMargin int64
}

// DefaultInboxBudget is the default Options.InboxBudget: more than twice what 2.5 USDC of
// inboxes can hold (500 inboxes of 100 events of 64 KiB: 3.05 GiB), so that sum of money
// cannot deny delivery to every other inbox.
const DefaultInboxBudget = 8 << 30

// DefaultDiskMargin is the default Options.DiskMargin.
const DefaultDiskMargin = 1 << 30

func (o *Options) defaults() {
	if o.Name == "" {
		o.Name = "state"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.SweepEvery <= 0 {
		o.SweepEvery = time.Minute
	}
	if o.CompactEvery <= 0 {
		o.CompactEvery = 10 * time.Minute
	}
	if o.CompactBytes <= 0 {
		o.CompactBytes = 32 << 20
	}
	if o.Tombstone <= 0 {
		o.Tombstone = 7 * 24 * time.Hour
	}
	if o.PackageRetention <= 0 {
		o.PackageRetention = 30 * 24 * time.Hour
	}
	if o.InboxBudget <= 0 {
		o.InboxBudget = DefaultInboxBudget
	}
	if o.InboxQuota <= 0 {
		o.InboxQuota = InboxQuotaBytes
	}
	if o.DiskFree == nil {
		o.DiskFree = diskfree.Available
	}
	if o.DiskMargin <= 0 {
		o.DiskMargin = DefaultDiskMargin
	}
}

// Store is the durable in-memory state of one daemon. It is safe for concurrent use.
type Store struct {
	opts Options
	log  *slog.Logger
	db   *memdb.MemDB
	j    *journal.Journal
	// bodies holds the event bodies; only the metadata of an event is in db.
	bodies *bodystore.Store

	wmu     sync.Mutex
	waiters map[string]chan struct{} // inbox id → closed on the next delivery

	// inboxBytes is what the stored events hold (Event.size): changed under memdb's single
	// writer (deliveries, sweeps, replay), read anywhere.
	inboxBytes atomic.Int64
	// budget is the inbox budget in force: Options.InboxBudget, or less when the disk was
	// smaller at Open. diskFree is what the disk had then (-1: unknown).
	budget   atomic.Int64
	diskFree int64
	// reserved holds the inboxes whose quota is taken from the budget: created and not yet
	// swept after their expiry. Changed under memdb's single writer (CreateInbox, Sweep);
	// reservedN is its size, read anywhere.
	reserved  map[string]struct{}
	reservedN atomic.Int64

	closeOnce sync.Once
	stop      chan struct{}
	done      chan struct{}

	stats struct {
		sync.Mutex
		replayed, skipped, compactions, swept int64
		lastCompact                           time.Time
		migrated, pruned                      int64
	}
}

// Open opens the store in dir, replaying its journal.
func Open(dir string, opts Options) (*Store, error) {
	opts.defaults()
	db, err := memdb.NewMemDB(schema())
	if err != nil {
		return nil, fmt.Errorf("state: schema: %w", err)
	}
	j, err := journal.Open(journal.Options{Dir: dir, Name: opts.Name, Sync: opts.Sync, Interval: opts.SyncInterval, RawIO: opts.RawIO, Logger: opts.Logger})
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	// Open has no caller context to honour: it runs once at start, before serving.
	ctx := context.Background()
	bodies, err := bodystore.Open(ctx, filepath.Join(dir, opts.Name+".inbox-bodies"))
	if err != nil {
		j.Close()
		return nil, fmt.Errorf("state: %w", err)
	}
	s := &Store{opts: opts, log: opts.Logger.With(obs.KeyState, opts.Name), db: db, j: j, bodies: bodies,
		waiters: map[string]chan struct{}{}, reserved: map[string]struct{}{}, stop: make(chan struct{}), done: make(chan struct{})}
	s.budget.Store(opts.InboxBudget)
	if err := s.replay(ctx); err != nil {
		j.Close()
		return nil, err
	}
	s.Sweep()
	s.reserveLiveInboxes()
	if err := s.pruneBodies(ctx); err != nil {
		j.Close()
		return nil, err
	}
	if s.stats.migrated > 0 {
		// The journal still carries the migrated bodies inline: rewrite it without them.
		if err := s.Compact(); err != nil {
			j.Close()
			return nil, fmt.Errorf("state: compaction after moving bodies to disk: %w", err)
		}
	}
	s.fitBudgetToDisk(ctx)
	if opts.NoBackground {
		close(s.done)
	} else {
		go s.background()
	}
	return s, nil
}

// AsyncFsync says whether the journal's fsyncs leave the writer's processor free
// (journal.Journal.AsyncFsync).
func (s *Store) AsyncFsync() bool { return s.j.AsyncFsync() }

// replay rebuilds memory from the journal. A record that cannot be applied (bad JSON, an
// unknown op, a missing row) is returned to the journal as an error, which quarantines it and
// goes on: one bad record must not stop the daemon from starting, ever.
func (s *Store) replay(ctx context.Context) error {
	txn := s.db.Txn(true)
	var n, skipped, migrated int64
	err := s.j.Replay(func(b []byte) error {
		var r record
		if err := json.Unmarshal(b, &r); err != nil {
			skipped++
			return fmt.Errorf("state: unreadable record: %w", err)
		}
		if ev := r.Event; r.Op == opEvent && ev != nil && ev.BodyFile == "" && len(ev.Body) > 0 {
			// Written before bodies moved to disk: move this one now.
			ref, err := s.bodies.Put(ctx, ev.Inbox, ev.Body)
			if err != nil {
				skipped++
				return fmt.Errorf("state: moving an inline body to disk: %w", err)
			}
			ev.Body, ev.BodyBytes, ev.BodySHA256, ev.BodyFile = nil, ref.Size, ref.SHA256, ref.File
			migrated++
		}
		if err := apply(txn, &r); err != nil {
			// A meter update of a package swept since is normal until the next compaction.
			if errors.Is(err, ErrNotFound) {
				return nil
			}
			skipped++
			return fmt.Errorf("state: record %q not applied: %w", r.Op, err)
		}
		n++
		return nil
	})
	if err != nil {
		txn.Abort()
		return fmt.Errorf("state: replay: %w", err)
	}
	txn.Commit()
	s.recountInboxBytes()
	s.stats.Lock()
	s.stats.replayed, s.stats.skipped, s.stats.migrated = n, skipped, migrated
	s.stats.Unlock()
	if n > 0 || skipped > 0 {
		s.log.Info("state: journal replayed", obs.KeyRecords, n, obs.KeyQuarantined, skipped, obs.KeyTruncatedBytes, s.j.Truncated(),
			obs.KeyBodiesMovedToDisk, migrated)
	}
	return nil
}

// pruneBodies removes the body files no stored event names: bodies written for deliveries
// whose record never reached the journal, and bodies of inboxes swept before a crash.
func (s *Store) pruneBodies(ctx context.Context) error {
	keep := map[[2]string]bool{}
	s.read(func(txn *memdb.Txn) {
		it, err := txn.Get(tEvent, "id")
		if err != nil {
			return
		}
		for obj := it.Next(); obj != nil; obj = it.Next() {
			if ev := obj.(*Event); ev.BodyFile != "" {
				keep[[2]string{ev.Inbox, ev.BodyFile}] = true
			}
		}
	})
	p, err := s.bodies.Prune(ctx, func(inbox, file string) bool { return keep[[2]string{inbox, file}] })
	if err != nil {
		return fmt.Errorf("state: removing orphan bodies: %w", err)
	}
	s.stats.Lock()
	s.stats.pruned = p.Files
	s.stats.Unlock()
	if p.Files > 0 {
		s.log.Info("state: orphan event bodies removed", obs.KeyFiles, p.Files, obs.KeyBytes, p.Bytes)
	}
	return nil
}

// fitBudgetToDisk lowers the inbox budget to what the disk can still take, leaving
// DiskMargin free: a budget the disk cannot hold bounds nothing, and deliveries would then
// fail on a full disk (taking the journals of every daemon with them) instead of getting 507.
// What the stored events already hold is on the disk, so it counts towards what fits.
func (s *Store) fitBudgetToDisk(ctx context.Context) {
	s.diskFree = -1
	free, err := s.opts.DiskFree(ctx, s.bodies.Dir())
	if err != nil {
		s.log.Warn("state: cannot read the free disk space; the inbox budget is not checked against it",
			obs.KeyBudgetBytes, s.opts.InboxBudget, obs.KeyErr, err)
		return
	}
	s.diskFree = free
	fits := s.inboxBytes.Load() + free - s.opts.DiskMargin
	if fits >= s.opts.InboxBudget {
		return
	}
	fits = max(fits, 0)
	s.budget.Store(fits)
	s.log.Warn("state: the disk cannot hold the inbox budget; lowered to what it can",
		obs.KeyBudgetBytes, s.opts.InboxBudget, obs.KeyEffectiveBudgetBytes, fits, obs.KeyDiskFreeBytes, free,
		obs.KeyDiskMarginBytes, s.opts.DiskMargin, obs.KeyStoredBytes, s.inboxBytes.Load(), obs.KeyDir, s.bodies.Dir())
}

// apply performs one record on a write transaction. It is the only code that changes tables,
// used both live and at replay, so both always agree.
func apply(txn *memdb.Txn, r *record) error {
	switch r.Op {
	case opInbox:
		if r.Inbox == nil {
			return errors.New("no inbox")
		}
		in := *r.Inbox
		return txn.Insert(tInbox, &in)
	case opEvent:
		if r.Event == nil {
			return errors.New("no event")
		}
		ev := *r.Event
		if err := txn.Insert(tEvent, &ev); err != nil {
			return err
		}
		raw, err := txn.First(tInbox, "id", ev.Inbox)
		if err != nil {
			return err
		}
		if raw == nil {
			return nil
		}
		in := *raw.(*Inbox)
		if ev.Seq <= in.LastSeq {
			return nil // already counted (the inbox row came from a snapshot)
		}
		in.LastSeq = ev.Seq
		in.Events++
		in.Bytes += ev.BodyBytes
		in.Used += ev.size()
		return txn.Insert(tInbox, &in)
	case opPage:
		if r.Page == nil {
			return errors.New("no page")
		}
		p := *r.Page
		return txn.Insert(tPage, &p)
	case opPackage:
		if r.Package == nil {
			return errors.New("no package")
		}
		p := *r.Package
		return txn.Insert(tPackage, &p)
	case opUsage:
		if r.Usage == nil {
			return errors.New("no usage")
		}
		return applyUsage(txn, *r.Usage)
	case opUsages:
		for _, u := range r.Usages {
			if err := applyUsage(txn, u); err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
		}
		return nil
	case opFree:
		if r.Free == nil {
			return errors.New("no free call")
		}
		f := *r.Free
		return txn.Insert(tFreeCall, &f)
	case opResult:
		if r.Result == nil {
			return errors.New("no result")
		}
		res := *r.Result
		return txn.Insert(tResult, &res)
	case opSMS:
		if r.SMS == nil {
			return errors.New("no sms number")
		}
		n := *r.SMS
		return txn.Insert(tSMS, &n)
	case opFreeDel:
		if r.Free == nil {
			return errors.New("no free call")
		}
		_, err := txn.DeleteAll(tFreeCall, "id", r.Free.Client, r.Free.Day, r.Free.Family)
		return err
	}
	return fmt.Errorf("unknown op %q", r.Op)
}

func applyUsage(txn *memdb.Txn, u usage) error {
	raw, err := txn.First(tPackage, "id", u.Key)
	if err != nil {
		return err
	}
	if raw == nil {
		return ErrNotFound
	}
	p := *raw.(*Package)
	p.BytesUsed, p.UpdatedAt = u.Used, u.At
	return txn.Insert(tPackage, &p)
}

// mutate runs one journaled change. build reads the write transaction, validates, and returns
// the record to apply (or an error, and nothing changes). The record reaches the journal before
// the transaction commits; the call returns once it is durable.
func (s *Store) mutate(build func(txn *memdb.Txn) (*record, error)) error {
	select {
	case <-s.stop:
		return ErrClosed
	default:
	}
	txn := s.db.Txn(true)
	r, err := build(txn)
	if err != nil {
		txn.Abort()
		return err
	}
	if err := apply(txn, r); err != nil {
		txn.Abort()
		return fmt.Errorf("state: %s: %w", r.Op, err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		txn.Abort()
		return fmt.Errorf("state: encode %s: %w", r.Op, err)
	}
	seq, err := s.j.Write(b)
	if err != nil {
		txn.Abort()
		if errors.Is(err, journal.ErrClosed) {
			return ErrClosed
		}
		return fmt.Errorf("state: %w", err)
	}
	txn.Commit()
	if err := s.j.WaitDurable(seq); err != nil {
		return fmt.Errorf("state: %w", err)
	}
	return nil
}

// read runs fn on a read-only snapshot.
func (s *Store) read(fn func(txn *memdb.Txn)) {
	txn := s.db.Txn(false)
	defer txn.Abort()
	fn(txn)
}

func (s *Store) now() time.Time { return s.opts.Now() }

func (s *Store) background() {
	defer close(s.done)
	sweep := time.NewTicker(s.opts.SweepEvery)
	defer sweep.Stop()
	compact := time.NewTicker(s.opts.CompactEvery)
	defer compact.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-sweep.C:
			s.Sweep()
			if s.j.Size() > s.opts.CompactBytes {
				s.compactLogged()
			}
		case <-compact.C:
			s.compactLogged()
		}
	}
}

func (s *Store) compactLogged() {
	if err := s.Compact(); err != nil && !errors.Is(err, ErrClosed) {
		s.log.Error("state: compaction failed; the log keeps growing until the next try", obs.KeyErr, err)
	}
}

// Compact writes the whole in-memory state as the journal's new snapshot and starts a fresh
// log. It holds the writer lock meanwhile, so no mutation falls between snapshot and log.
func (s *Store) Compact() error {
	txn := s.db.Txn(true) // excludes writers; we only read from it
	defer txn.Abort()
	err := s.j.Compact(func(emit func([]byte) error) error {
		put := func(r *record) error {
			b, err := json.Marshal(r)
			if err != nil {
				return err
			}
			return emit(b)
		}
		// Inboxes before their events: replaying an event skips counting when the inbox row
		// already covers its seq.
		for _, t := range []string{tInbox, tEvent, tPage, tPackage, tFreeCall, tResult, tSMS} {
			it, err := txn.Get(t, "id")
			if err != nil {
				return err
			}
			for obj := it.Next(); obj != nil; obj = it.Next() {
				var r *record
				switch v := obj.(type) {
				case *Inbox:
					r = &record{Op: opInbox, Inbox: v}
				case *Event:
					r = &record{Op: opEvent, Event: v}
				case *Page:
					r = &record{Op: opPage, Page: v}
				case *Package:
					r = &record{Op: opPackage, Package: v}
				case *FreeCall:
					r = &record{Op: opFree, Free: v}
				case *Result:
					r = &record{Op: opResult, Result: v}
				case *SMSNumber:
					r = &record{Op: opSMS, SMS: v}
				}
				if err := put(r); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if errors.Is(err, journal.ErrClosed) {
		return ErrClosed
	}
	if err == nil {
		s.stats.Lock()
		s.stats.compactions++
		s.stats.lastCompact = s.now()
		s.stats.Unlock()
	}
	return err
}

// Sweep drops what has expired: events of expired inboxes and HTML of expired pages at once,
// their rows after Options.Tombstone, ended proxy packages after Options.PackageRetention and
// free-call allowances of days before yesterday (UTC). It returns the number of rows changed.
func (s *Store) Sweep() int {
	now := s.now()
	var woke []string
	txn := s.db.Txn(true)
	n := 0
	each := func(table string, fn func(obj any)) {
		it, err := txn.Get(table, "id")
		if err != nil {
			return
		}
		var objs []any
		for obj := it.Next(); obj != nil; obj = it.Next() {
			objs = append(objs, obj)
		}
		for _, obj := range objs {
			fn(obj)
		}
	}
	var emptied []string // inboxes whose bodies go once the rows are gone
	each(tInbox, func(obj any) {
		in := obj.(*Inbox)
		if !in.Expired(now) {
			return
		}
		s.unreserve(in.ID)
		if evs := eventsAfter(txn, in.ID, 0, 0); len(evs) > 0 {
			emptied = append(emptied, in.ID)
			var freed int64
			for _, ev := range evs {
				if txn.Delete(tEvent, ev) == nil {
					freed += ev.size()
				}
			}
			n += len(evs)
			s.inboxBytes.Add(-freed)
		}
		woke = append(woke, in.ID) // long-polls on it return now rather than at their timeout
		if !now.Before(in.ExpiresAt.Add(s.opts.Tombstone)) {
			txn.Delete(tInbox, in)
			n++
		}
	})
	each(tPage, func(obj any) {
		p := obj.(*Page)
		switch {
		case !now.Before(p.ExpiresAt.Add(s.opts.Tombstone)):
			txn.Delete(tPage, p)
			n++
		case p.Expired(now) && p.HTML != "":
			c := *p
			c.HTML = ""
			txn.Insert(tPage, &c)
			n++
		}
	})
	each(tPackage, func(obj any) {
		p := obj.(*Package)
		if !now.Before(p.ExpiresAt.Add(s.opts.PackageRetention)) {
			txn.Delete(tPackage, p)
			n++
		}
	})
	each(tResult, func(obj any) {
		if r := obj.(*Result); !now.Before(r.ExpiresAt) {
			txn.Delete(tResult, r)
			n++
		}
	})
	yesterday := now.UTC().AddDate(0, 0, -1).Format(time.DateOnly)
	each(tFreeCall, func(obj any) {
		if f := obj.(*FreeCall); f.Day < yesterday {
			txn.Delete(tFreeCall, f)
			n++
		}
	})
	txn.Commit()
	for _, id := range woke {
		s.notify(id)
	}
	// After the commit, so no reader can find a row whose body is gone for good; a reader
	// that took its rows before reports the inbox as expired (Events). A crash before this
	// leaves orphans, which the next Open removes.
	for _, id := range emptied {
		if err := s.bodies.RemoveInbox(context.Background(), id); err != nil {
			s.log.Error("state: cannot remove the bodies of an expired inbox; the next start will", obs.KeyInbox, id, obs.KeyErr, err)
		}
	}
	if n > 0 {
		s.stats.Lock()
		s.stats.swept += int64(n)
		s.stats.Unlock()
	}
	return n
}

// recountInboxBytes sums the stored events (after a replay, where snapshot and log may both
// carry an event).
func (s *Store) recountInboxBytes() {
	var total int64
	s.read(func(txn *memdb.Txn) {
		it, err := txn.Get(tEvent, "id")
		if err != nil {
			return
		}
		for obj := it.Next(); obj != nil; obj = it.Next() {
			total += obj.(*Event).size()
		}
	})
	s.inboxBytes.Store(total)
}

// Stats describes the store for /metrics and health.
type Stats struct {
	Inboxes, Events, Pages, Packages, FreeCalls int
	// InboxBytes is what the stored events hold, against InboxBudget, the budget in force;
	// InboxBudgetConfigured is Options.InboxBudget, higher when the disk could not hold it.
	InboxBytes, InboxBudget, InboxBudgetConfigured int64
	// DiskFree is the free disk under the bodies at Open (-1: unknown).
	DiskFree int64
	// BodiesMoved counts inline bodies of an older journal moved to disk at Open;
	// BodiesPruned the orphan body files removed at Open.
	BodiesMoved, BodiesPruned             int64
	LogBytes                              int64
	Replayed, Skipped, Compactions, Swept int64
	TruncatedBytes                        int64
	LastCompaction                        time.Time
}

// Stats counts rows and reports journal figures.
func (s *Store) Stats() Stats {
	var st Stats
	s.read(func(txn *memdb.Txn) {
		count := func(t string) int {
			it, err := txn.Get(t, "id")
			if err != nil {
				return 0
			}
			c := 0
			for obj := it.Next(); obj != nil; obj = it.Next() {
				c++
			}
			return c
		}
		st.Inboxes, st.Events, st.Pages = count(tInbox), count(tEvent), count(tPage)
		st.Packages, st.FreeCalls = count(tPackage), count(tFreeCall)
	})
	st.InboxBytes, st.InboxBudget, st.InboxBudgetConfigured = s.inboxBytes.Load(), s.budget.Load(), s.opts.InboxBudget
	st.DiskFree = s.diskFree
	st.LogBytes = s.j.Size()
	st.TruncatedBytes = s.j.Truncated()
	s.stats.Lock()
	st.Replayed, st.Skipped, st.Compactions, st.Swept = s.stats.replayed, s.stats.skipped, s.stats.compactions, s.stats.swept
	st.LastCompaction = s.stats.lastCompact
	st.BodiesMoved, st.BodiesPruned = s.stats.migrated, s.stats.pruned
	s.stats.Unlock()
	return st
}

// Close stops the background work and closes the journal (fsyncing it). Waiting long-polls are
// woken.
func (s *Store) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.stop)
		<-s.done
		err = s.j.Close()
		s.wmu.Lock()
		for id, ch := range s.waiters {
			close(ch)
			delete(s.waiters, id)
		}
		s.wmu.Unlock()
	})
	return err
}
