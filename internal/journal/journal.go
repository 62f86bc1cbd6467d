// Package journal is a generic write-ahead journal: an append-only log of opaque records plus
// an optional snapshot that replaces the log's prefix at compaction.
//
// # Files
//
// Under Options.Dir, a journal named N owns:
//
//	N.snap   the last snapshot (records, same framing), replaced atomically
//	N.log    the records appended since that snapshot
//	N.snap.tmp, N.log.tmp  transient files of a compaction in progress (removed at Open)
//
// # Framing
//
// Each record is framed as
//
//	uint32 little-endian length | uint32 little-endian CRC-32C (Castagnoli) of the payload | payload
//
// A record is only "there" if its whole frame is on disk and its checksum matches. At Open the
// log is scanned; the first frame that is short (a torn write), has an absurd length or a bad
// checksum ends the valid prefix: everything from there on is truncated away and logged. That is
// never a reason to refuse to start. A snapshot is written to a temporary file, fsynced and
// renamed, so it is either the old one or the new one, never a mix; a damaged snapshot (which
// only a disk fault can produce) is likewise read up to its first bad frame and logged loudly.
//
// # Durability (Options.Sync)
//
//   - SyncAlways: Append returns only after the record is fsynced. Concurrent appenders share
//     fsyncs (group commit), so the cost per record falls as concurrency rises. What Append
//     acknowledged survives kill -9 and a power cut.
//   - SyncInterval: Append returns once the record is written to the OS (it survives kill -9 of
//     the process); a background loop fsyncs every Options.Interval, so a power cut loses at most
//     that window.
//   - SyncNever: written to the OS only; survives kill -9, not a power cut (the OS flushes when
//     it likes). For tests and caches.
//
// # Compaction
//
// Compact asks the caller to emit the full current state as records, writes them as the new
// snapshot (tmp + fsync + rename + directory fsync), then truncates the log. Appends wait while a
// compaction runs, so no record falls between the snapshot and the fresh log. A crash at any
// point leaves either (old snapshot, full log) or (new snapshot, log possibly not yet
// truncated). To make the second case safe the snapshot carries, in its first record, the log
// generation it supersedes; the log starts with a header naming its generation, and Replay
// skips a log whose generation the snapshot already covers.
package journal

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/peage/appliance/internal/obs"
)

// Sync is the fsync policy of a journal.
type Sync int

const (
	// SyncAlways fsyncs before Append returns (group commit shares fsyncs among concurrent appenders).
	SyncAlways Sync = iota
	// SyncInterval fsyncs every Options.Interval; a power cut loses at most that window.
	SyncInterval
	// SyncNever never fsyncs the log explicitly (survives a process crash, not a power cut).
	SyncNever
)

func (s Sync) String() string {
	switch s {
	case SyncAlways:
		return "always"
	case SyncInterval:
		return "interval"
	case SyncNever:
		return "never"
	}
	return fmt.Sprintf("Sync(%d)", int(s))
}

// ParseSync reads "always", "interval" or "never".
func ParseSync(s string) (Sync, error) {
	switch s {
	case "always", "":
		return SyncAlways, nil
	case "interval":
		return SyncInterval, nil
	case "never":
		return SyncNever, nil
	}
	return 0, fmt.Errorf("journal: unknown sync policy %q (always, interval, never)", s)
}

// Options configures a journal.
type Options struct {
	Dir  string // created if missing (0700)
	Name string // file name stem; several journals may share a Dir under different names
	Sync Sync
	// Interval is the fsync period of SyncInterval (default 100ms).
	Interval time.Duration
	// RawIO keeps the log's fsyncs from costing the process more than the disk's time. A
	// blocking fsync wakes the runtime's monitor thread, which then polls every 20 µs for as
	// long as the call lasts (a millisecond or more); in a process whose other work makes no
	// blocking system call (proxyd copies with raw non-blocking calls), that polling is most
	// of what a durable write costs. Where the kernel offers it, the fsync goes through Linux
	// AIO (AsyncFsync): the kernel's worker syncs while the goroutine waits in the netpoller,
	// and the appends stay ordinary system calls, so that an append the kernel's dirty-page
	// throttling stalls hands its processor off once the monitor notices. Elsewhere appends
	// and fsyncs are raw system calls, which the scheduler does not see: the goroutine keeps
	// its processor through them, which then runs nothing else, and a garbage collection
	// waits for them to end.
	RawIO bool
	// Preallocate, when above 0, keeps that many bytes of zeros written ahead of the log's
	// end, and makes the log durable with fdatasync: a record then overwrites space the file
	// already has, so its flush is the data's alone, without the file size's metadata
	// (fsync of an append flushes both: on ext4 a journal commit more per flush, about a third
	// of a lone writer's fsync on this project's disks, docs/gas.md). The zeros after the last
	// record end the log at Open (so an empty record cannot be written); Close cuts them off.
	Preallocate int64
	Logger      *slog.Logger
}

// MaxRecord is the largest record accepted (16 MiB). A frame claiming more is treated as corrupt.
const MaxRecord = 16 << 20

const headerSize = 8

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrClosed is returned by operations on a closed journal.
var ErrClosed = errors.New("journal: closed")

// ErrTooLarge is returned by Append for a record over MaxRecord.
var ErrTooLarge = errors.New("journal: record too large")

// ErrEmpty is returned by Append for an empty record in a journal with Options.Preallocate,
// whose frame would read as the zeros that end the log.
var ErrEmpty = errors.New("journal: empty record")

// Journal is an append-only durable log. It is safe for concurrent use.
type Journal struct {
	opts Options
	log  *slog.Logger

	mu     sync.Mutex // guards everything below
	cond   *sync.Cond // on mu: signalled when an fsync ends
	f      *os.File
	w      *bufio.Writer
	gen    uint64 // generation of the current log file
	closed bool
	end    int64 // the log's length: where the next record goes
	room   int64 // the log file's size (end, or more under Options.Preallocate)

	// group commit: the first waiter whose record is not yet fsynced becomes the leader and
	// fsyncs everything written so far (outside mu); the others wait on cond.
	written  uint64 // records handed to the OS
	synced   uint64 // records known to be on stable storage
	syncing  bool   // a leader's fsync is in progress
	syncErr  error  // a failed fsync: sticky, the journal refuses further writes
	stop     chan struct{}
	loopDone chan struct{}
	aio      *aioFsync // under RawIO where the kernel offers AIO fsync; nil otherwise

	truncated   int64 // bytes dropped at Open, for tests and metrics
	quarantined int64 // records a replay rejected and copied aside
	fsyncs      atomic.Uint64
}

// magic header record payloads (distinguishable from user records by prefix).
var (
	logHeaderMagic  = []byte("\x00peage-journal-log\x00")
	snapHeaderMagic = []byte("\x00peage-journal-snap\x00")
)

func (j *Journal) logPath() string  { return filepath.Join(j.opts.Dir, j.opts.Name+".log") }
func (j *Journal) snapPath() string { return filepath.Join(j.opts.Dir, j.opts.Name+".snap") }

// Open opens (or creates) the journal, recovering from a torn or corrupt tail.
func Open(opts Options) (*Journal, error) {
	if opts.Dir == "" || opts.Name == "" {
		return nil, errors.New("journal: Dir and Name are required")
	}
	if opts.Interval <= 0 {
		opts.Interval = 100 * time.Millisecond
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	j := &Journal{opts: opts, log: opts.Logger.With(obs.KeyJournal, opts.Name)}
	j.cond = sync.NewCond(&j.mu)
	for _, tmp := range []string{j.snapPath() + ".tmp", j.logPath() + ".tmp"} {
		_ = os.Remove(tmp)
	}
	snapGen, _, err := j.readSnapshotHeader()
	if err != nil {
		return nil, err
	}
	if err := j.openLog(snapGen); err != nil {
		return nil, err
	}
	if opts.RawIO {
		a, err := newAioFsync(j.f)
		if err != nil {
			j.log.Info("journal fsyncs by a raw system call: no AIO fsync here", obs.KeyErr, err)
		}
		j.aio = a
		j.w.Reset(j.sink(j.f))
	}
	if opts.Sync == SyncInterval {
		j.stop, j.loopDone = make(chan struct{}), make(chan struct{})
		go j.syncLoop()
	}
	return j, nil
}

// readSnapshotHeader returns the log generation the snapshot covers (0 if no snapshot).
func (j *Journal) readSnapshotHeader() (gen uint64, exists bool, err error) {
	f, err := os.Open(j.snapPath())
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("journal: %w", err)
	}
	defer f.Close()
	rec, _, err := readFrame(bufio.NewReader(f), false)
	if err != nil || !bytes.HasPrefix(rec, snapHeaderMagic) || len(rec) != len(snapHeaderMagic)+8 {
		j.log.Error("journal snapshot has no valid header; ignoring the snapshot", obs.KeyPath, j.snapPath(), obs.KeyErr, err)
		return 0, false, nil
	}
	return binary.LittleEndian.Uint64(rec[len(snapHeaderMagic):]), true, nil
}

// openLog scans the log, truncates a bad tail, and opens it for appending. A log whose
// generation is covered by the snapshot (a compaction crashed before truncating) is reset.
func (j *Journal) openLog(snapGen uint64) error {
	path := j.logPath()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	gen, valid, total, zeros, err := scanLog(f, j.opts.Preallocate > 0)
	if err != nil {
		f.Close()
		return fmt.Errorf("journal: scan %s: %w", path, err)
	}
	reset := false
	switch {
	case valid == 0 && total == 0:
		reset = true // new file
	case valid == 0:
		j.log.Warn("journal log has no valid header; starting a fresh log", obs.KeyPath, path, obs.KeyBytesDropped, total)
		j.truncated = total
		reset = true
	case gen <= snapGen:
		// The snapshot already contains everything in this log.
		reset = true
	}
	if reset {
		if gen < snapGen+1 {
			gen = snapGen + 1
		}
		if err := j.resetFile(f, gen); err != nil {
			f.Close()
			return err
		}
	} else if valid < total && !zeros {
		j.truncated = total - valid
		j.log.Warn("journal log had a torn or corrupt tail; truncated it", obs.KeyPath, path, obs.KeyValidBytes, valid, obs.KeyBytesDropped, total-valid)
		if err := f.Truncate(valid); err != nil {
			f.Close()
			return fmt.Errorf("journal: truncate: %w", err)
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return fmt.Errorf("journal: sync: %w", err)
		}
		total = valid
	}
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		f.Close()
		return fmt.Errorf("journal: %w", err)
	}
	room := end
	if zeros && !reset {
		// The zeros preallocated after the last record: the next record overwrites them.
		if end, err = f.Seek(valid, io.SeekStart); err != nil {
			f.Close()
			return fmt.Errorf("journal: %w", err)
		}
	}
	j.f, j.w, j.gen, j.end, j.room = f, bufio.NewWriterSize(j.sink(f), 64<<10), gen, end, room
	return nil
}

// resetFile empties f and writes a log header for gen, durably.
func (j *Journal) resetFile(f *os.File, gen uint64) error {
	if err := f.Truncate(0); err != nil {
		return fmt.Errorf("journal: truncate: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if _, err := f.Write(frame(logHeader(gen))); err != nil {
		return fmt.Errorf("journal: write header: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("journal: sync: %w", err)
	}
	return syncDir(j.opts.Dir)
}

func logHeader(gen uint64) []byte {
	b := append([]byte(nil), logHeaderMagic...)
	return binary.LittleEndian.AppendUint64(b, gen)
}

func snapHeader(gen uint64) []byte {
	b := append([]byte(nil), snapHeaderMagic...)
	return binary.LittleEndian.AppendUint64(b, gen)
}

// scanLog returns the log's generation, the length of its valid prefix and its total size.
// With preallocated, zeros says that nothing but zeros follows the valid prefix (the space
// preallocated after the last record, not damage).
func scanLog(f *os.File, preallocated bool) (gen uint64, valid, total int64, zeros bool, err error) {
	st, err := f.Stat()
	if err != nil {
		return 0, 0, 0, false, err
	}
	total = st.Size()
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, 0, 0, false, err
	}
	r := bufio.NewReaderSize(f, 256<<10)
	first := true
	for {
		rec, n, err := readFrame(r, preallocated)
		if errors.Is(err, errZeros) {
			return gen, valid, total, onlyZeros(r), nil
		}
		if err != nil {
			return gen, valid, total, false, nil
		}
		if first {
			if !bytes.HasPrefix(rec, logHeaderMagic) || len(rec) != len(logHeaderMagic)+8 {
				return 0, 0, total, false, nil
			}
			gen = binary.LittleEndian.Uint64(rec[len(logHeaderMagic):])
			first = false
		}
		valid += n
	}
}

var (
	errCorrupt = errors.New("corrupt frame")
	// errZeros: a header of zeros in a preallocated log, where the records end.
	errZeros = errors.New("preallocated zeros")
)

// readFrame reads one frame; io.EOF at a clean end, errZeros at a preallocated log's zeros,
// errCorrupt or io.ErrUnexpectedEOF otherwise.
func readFrame(r *bufio.Reader, preallocated bool) ([]byte, int64, error) {
	var hdr [headerSize]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, 0, err
	}
	n := binary.LittleEndian.Uint32(hdr[0:4])
	sum := binary.LittleEndian.Uint32(hdr[4:8])
	if preallocated && n == 0 && sum == 0 {
		return nil, 0, errZeros
	}
	if n > MaxRecord {
		return nil, 0, errCorrupt
	}
	rec := make([]byte, n)
	if _, err := io.ReadFull(r, rec); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, 0, err
	}
	if crc32.Checksum(rec, castagnoli) != sum {
		return nil, 0, errCorrupt
	}
	return rec, int64(headerSize) + int64(n), nil
}

// onlyZeros reports whether r holds nothing but zero bytes to its end.
func onlyZeros(r *bufio.Reader) bool {
	for {
		b, err := r.Peek(r.Size())
		for _, c := range b {
			if c != 0 {
				return false
			}
		}
		if _, derr := r.Discard(len(b)); derr != nil {
			return false
		}
		if err != nil {
			return errors.Is(err, io.EOF)
		}
	}
}

func frame(rec []byte) []byte {
	b := make([]byte, headerSize+len(rec))
	putHeader(b, rec)
	copy(b[headerSize:], rec)
	return b
}

func putHeader(b []byte, rec []byte) {
	binary.LittleEndian.PutUint32(b[0:4], uint32(len(rec)))
	binary.LittleEndian.PutUint32(b[4:8], crc32.Checksum(rec, castagnoli))
}

// Append writes one record. With SyncAlways it returns once the record is on stable storage;
// with the other policies once the OS has it (it then survives a crash of this process).
// The record is copied; the caller may reuse rec.
func (j *Journal) Append(rec []byte) error {
	seq, err := j.Write(rec)
	if err != nil {
		return err
	}
	return j.WaitDurable(seq)
}

// Write hands one record to the OS without waiting for fsync and returns its sequence number
// for WaitDurable. Callers that must order records with their own in-memory commits write under
// their lock and wait outside it, so concurrent writers still share fsyncs.
func (j *Journal) Write(rec []byte) (uint64, error) {
	if len(rec) > MaxRecord {
		return 0, ErrTooLarge
	}
	if len(rec) == 0 && j.opts.Preallocate > 0 {
		return 0, ErrEmpty
	}
	var hdr [headerSize]byte
	putHeader(hdr[:], rec)
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return 0, ErrClosed
	}
	if j.syncErr != nil {
		return 0, j.syncErr
	}
	size := int64(headerSize + len(rec))
	if err := j.preallocate(size); err != nil {
		return 0, j.fail(err)
	}
	if _, err := j.w.Write(hdr[:]); err != nil {
		return 0, j.fail(err)
	}
	if _, err := j.w.Write(rec); err != nil {
		return 0, j.fail(err)
	}
	if err := j.w.Flush(); err != nil {
		return 0, j.fail(err)
	}
	j.end += size
	j.room = max(j.room, j.end)
	j.written++
	return j.written, nil
}

// preallocate makes sure (mu held) that the log file has room for size more bytes past its
// end under Options.Preallocate, writing Preallocate bytes of zeros after the end when not.
// The zeros are written once: a record overwrites them, and its flush carries no size change.
func (j *Journal) preallocate(size int64) error {
	if j.opts.Preallocate <= 0 || j.end+size <= j.room {
		return nil
	}
	zeros := make([]byte, j.end+size+j.opts.Preallocate-j.room)
	if _, err := j.f.WriteAt(zeros, j.room); err != nil {
		return fmt.Errorf("preallocate: %w", err)
	}
	j.room += int64(len(zeros))
	return nil
}

// WaitDurable returns once record seq is as durable as the policy promises: fsynced under
// SyncAlways (group commit), immediately under SyncInterval and SyncNever.
func (j *Journal) WaitDurable(seq uint64) error {
	if j.opts.Sync != SyncAlways {
		return nil
	}
	return j.syncUpTo(seq)
}

// syncUpTo makes sure record seq is fsynced (group commit). If no fsync is running, the caller
// leads one covering every record written so far; otherwise it waits for the running one and
// checks again. Writers keep appending while an fsync runs, so each fsync covers a batch.
func (j *Journal) syncUpTo(seq uint64) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	for j.synced < seq {
		if j.syncErr != nil {
			return j.syncErr
		}
		if j.closed {
			return nil // Close fsynced everything
		}
		if j.syncing {
			j.cond.Wait()
			continue
		}
		if err := j.leadSync(); err != nil {
			return err
		}
	}
	return nil
}

// leadSync fsyncs everything written so far. Called with mu held and no fsync running; mu is
// released during the fsync.
func (j *Journal) leadSync() error {
	j.syncing = true
	// Let writers woken by the previous fsync append their next records first: they join this
	// batch instead of waiting for the next one.
	j.mu.Unlock()
	runtime.Gosched()
	j.mu.Lock()
	upto, f := j.written, j.f
	j.mu.Unlock()
	err := j.fsync(f)
	j.mu.Lock()
	j.syncing = false
	if err != nil {
		j.syncErr = j.fail(fmt.Errorf("fsync: %w", err))
	} else if upto > j.synced {
		j.synced = upto
	}
	j.cond.Broadcast()
	return j.syncErr
}

// sink is what the log's buffered writer writes to: f itself, or f by raw system calls under
// RawIO without AIO fsync (Options.RawIO).
func (j *Journal) sink(f *os.File) io.Writer {
	if j.opts.RawIO && j.aio == nil {
		return rawWriter{fd: f.Fd()}
	}
	return f
}

// AsyncFsync says whether the journal's fsyncs leave the waiting goroutine's processor free
// (Options.RawIO where the kernel offers AIO fsync).
func (j *Journal) AsyncFsync() bool { return j.aio != nil }

// Fsyncs counts the fsyncs of the log so far (group commit shares one among appenders): the
// benches report them per call.
func (j *Journal) Fsyncs() uint64 { return j.fsyncs.Load() }

// fsync makes f durable: through AIO or by a raw system call under Options.RawIO.
func (j *Journal) fsync(f *os.File) error {
	j.fsyncs.Add(1)
	if j.aio != nil {
		return j.aio.fsync(f)
	}
	if !j.opts.RawIO {
		if j.opts.Preallocate > 0 {
			return datasync(f)
		}
		return f.Sync()
	}
	for {
		_, _, e := syscall.RawSyscall(syscall.SYS_FSYNC, f.Fd(), 0, 0)
		switch e {
		case 0:
			return nil
		case syscall.EINTR:
			continue
		}
		return &os.PathError{Op: "fsync", Path: f.Name(), Err: e}
	}
}

// rawWriter writes to a regular file's descriptor by raw system calls (see Options.RawIO).
type rawWriter struct{ fd uintptr }

func (w rawWriter) Write(b []byte) (int, error) {
	done := 0
	for done < len(b) {
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, w.fd, uintptr(unsafe.Pointer(&b[done])), uintptr(len(b)-done))
		switch e {
		case 0:
			done += int(n)
		case syscall.EINTR:
		default:
			return done, e
		}
	}
	return done, nil
}

// idle waits (mu held) until no fsync is running.
func (j *Journal) idle() {
	for j.syncing {
		j.cond.Wait()
	}
}

func (j *Journal) fail(err error) error {
	j.log.Error("journal write failed", obs.KeyErr, err)
	return fmt.Errorf("journal: %w", err)
}

func (j *Journal) syncLoop() {
	defer close(j.loopDone)
	t := time.NewTicker(j.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-j.stop:
			return
		case <-t.C:
			j.Sync()
		}
	}
}

// Sync fsyncs whatever has been appended so far, whatever the policy.
func (j *Journal) Sync() error {
	j.mu.Lock()
	if j.closed {
		j.mu.Unlock()
		return ErrClosed
	}
	seq := j.written
	j.mu.Unlock()
	return j.syncUpTo(seq)
}

// Replay calls fn for every record: the snapshot's records first, then the log's, in order.
// A record fn cannot use (fn returns an error or panics) is quarantined: copied to the
// journal's quarantine directory (N.quarantine/), logged at error level, and skipped, and the
// replay goes on. A record that passed its checksum but holds content the reader rejects would
// otherwise stop every start of the daemon for good; its copy stays for the operator. Replay
// fails only when a quarantine copy cannot be written (then the record would be lost at the
// next compaction). Call it before concurrent Appends start (typically once, right after
// Open); it reads the files, not memory.
func (j *Journal) Replay(fn func(rec []byte) error) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return ErrClosed
	}
	if err := j.w.Flush(); err != nil {
		return j.fail(err)
	}
	if err := j.replayFile(j.snapPath(), "snap", snapHeaderMagic, fn); err != nil {
		return err
	}
	return j.replayFile(j.logPath(), "log", logHeaderMagic, fn)
}

func (j *Journal) replayFile(path, kind string, magic []byte, fn func([]byte) error) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 256<<10)
	first := true
	var off int64
	for {
		rec, n, err := readFrame(r, kind == "log" && j.opts.Preallocate > 0)
		if err == io.EOF || errors.Is(err, errZeros) {
			return nil
		}
		if err != nil {
			// Only a snapshot can get here (the log was truncated at Open): a disk fault.
			j.log.Error("journal file damaged; replay stops at the damage", obs.KeyPath, path, obs.KeyErr, err)
			return nil
		}
		at := off
		off += n
		if first {
			first = false
			if bytes.HasPrefix(rec, magic) {
				continue
			}
			j.log.Error("journal file has no header; ignoring it", obs.KeyPath, path)
			return nil
		}
		if ferr := callSafely(fn, rec); ferr != nil {
			if err := j.quarantine(kind, at, rec, ferr); err != nil {
				return err
			}
		}
	}
}

// callSafely runs a replay callback, turning a panic into an error: a record's content must
// not be able to crash the daemon at every start.
func callSafely(fn func([]byte) error, rec []byte) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("replay panicked: %v", p)
		}
	}()
	return fn(rec)
}

// quarantineDir is where records a replay rejected are copied.
func (j *Journal) quarantineDir() string {
	return filepath.Join(j.opts.Dir, j.opts.Name+".quarantine")
}

// quarantine copies a rejected record aside. The file name (source file, byte offset,
// checksum) is stable, so the same record met again at the next start is not copied twice.
func (j *Journal) quarantine(kind string, offset int64, rec []byte, reason error) error {
	dir := j.quarantineDir()
	name := filepath.Join(dir, fmt.Sprintf("%s-%d-%08x.rec", kind, offset, crc32.Checksum(rec, castagnoli)))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("journal: quarantine: %w", err)
	}
	if err := writeFileSync(name, rec); err != nil {
		return fmt.Errorf("journal: quarantine: %w", err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("journal: quarantine: %w", err)
	}
	j.quarantined++
	j.log.Error("journal record rejected at replay: quarantined and skipped; the daemon starts without it",
		obs.KeyJournal, j.opts.Name, obs.KeyFile, kind, obs.KeyOffset, offset, obs.KeyBytes, len(rec), obs.KeyCopy, name, obs.KeyErr, reason.Error())
	return nil
}

func writeFileSync(name string, b []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
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

// Quarantined is the number of records the replays of this journal quarantined.
func (j *Journal) Quarantined() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.quarantined
}

// QuarantineDir is where rejected records are copied (it exists only once one was).
func (j *Journal) QuarantineDir() string { return j.quarantineDir() }

// Compact writes the state that snapshot emits as the new snapshot, then starts a fresh log.
// Appends block while it runs, so snapshot must not call Append. snapshot must emit the
// complete state (it replaces both the old snapshot and the log).
func (j *Journal) Compact(snapshot func(emit func(rec []byte) error) error) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.idle() // no fsync of the old file races with the swap
	if j.closed {
		return ErrClosed
	}
	if j.syncErr != nil {
		return j.syncErr
	}
	if err := j.w.Flush(); err != nil {
		return j.fail(err)
	}
	gen := j.gen
	tmp := j.snapPath() + ".tmp"
	sf, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("journal: compact: %w", err)
	}
	sw := bufio.NewWriterSize(sf, 256<<10)
	cleanup := func(e error) error {
		sf.Close()
		os.Remove(tmp)
		return fmt.Errorf("journal: compact: %w", e)
	}
	if _, err := sw.Write(frame(snapHeader(gen))); err != nil {
		return cleanup(err)
	}
	var hdr [headerSize]byte
	emit := func(rec []byte) error {
		if len(rec) > MaxRecord {
			return ErrTooLarge
		}
		putHeader(hdr[:], rec)
		if _, err := sw.Write(hdr[:]); err != nil {
			return err
		}
		_, err := sw.Write(rec)
		return err
	}
	if err := snapshot(emit); err != nil {
		return cleanup(err)
	}
	if err := sw.Flush(); err != nil {
		return cleanup(err)
	}
	if err := sf.Sync(); err != nil {
		return cleanup(err)
	}
	if err := sf.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("journal: compact: %w", err)
	}
	if err := os.Rename(tmp, j.snapPath()); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("journal: compact: %w", err)
	}
	if err := syncDir(j.opts.Dir); err != nil {
		return fmt.Errorf("journal: compact: %w", err)
	}
	// The snapshot now covers generation gen. Start log generation gen+1 in a new file,
	// renamed over the old one, so the log is never observed half-reset.
	ltmp := j.logPath() + ".tmp"
	lf, err := os.OpenFile(ltmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("journal: compact: %w", err)
	}
	if _, err := lf.Write(frame(logHeader(gen + 1))); err != nil {
		lf.Close()
		return fmt.Errorf("journal: compact: %w", err)
	}
	if err := lf.Sync(); err != nil {
		lf.Close()
		return fmt.Errorf("journal: compact: %w", err)
	}
	if err := os.Rename(ltmp, j.logPath()); err != nil {
		lf.Close()
		return fmt.Errorf("journal: compact: %w", err)
	}
	if err := syncDir(j.opts.Dir); err != nil {
		lf.Close()
		return fmt.Errorf("journal: compact: %w", err)
	}
	old := j.f
	j.f, j.gen = lf, gen+1
	j.end = int64(len(frame(logHeader(gen + 1))))
	j.room = j.end
	j.w.Reset(j.sink(lf))
	j.synced = j.written // everything written so far is in the fsynced snapshot
	j.cond.Broadcast()
	old.Close()
	return nil
}

// Size reports the current log file size in bytes (for deciding when to compact).
func (j *Journal) Size() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return 0
	}
	return j.end + int64(j.w.Buffered())
}

// Truncated reports how many bytes of damaged tail Open dropped.
func (j *Journal) Truncated() int64 { return j.truncated }

// Close flushes, fsyncs and closes the journal.
func (j *Journal) Close() error {
	j.mu.Lock()
	if j.closed {
		j.mu.Unlock()
		return nil
	}
	j.mu.Unlock()
	if j.stop != nil {
		close(j.stop)
		<-j.loopDone
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.idle()
	if j.closed {
		return nil
	}
	j.closed = true
	err := j.w.Flush()
	if j.room > j.end && err == nil {
		// A log closed cleanly ends with its last record, as one written without
		// preallocation does.
		err = j.f.Truncate(j.end)
	}
	if e := j.f.Sync(); err == nil {
		err = e
	}
	if e := j.f.Close(); err == nil {
		err = e
	}
	if j.aio != nil {
		j.aio.close()
	}
	j.cond.Broadcast()
	if err != nil {
		return fmt.Errorf("journal: close: %w", err)
	}
	return nil
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
