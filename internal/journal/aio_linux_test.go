//go:build linux

package journal

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// kernelOffersAIO asks the kernel, without the journal's code, for an AIO context and one
// AIO fsync (IOCB_CMD_FSYNC came in Linux 4.18, after io_setup) of a scratch file.
func kernelOffersAIO(t *testing.T) bool {
	t.Helper()
	var ctx uintptr
	if _, _, e := syscall.RawSyscall(unix.SYS_IO_SETUP, 1, uintptr(unsafe.Pointer(&ctx)), 0); e != 0 {
		t.Logf("io_setup: %v: the journal must fall back to a raw fsync", e)
		return false
	}
	defer syscall.Syscall(unix.SYS_IO_DESTROY, ctx, 0, 0)
	f, err := os.Create(filepath.Join(t.TempDir(), "probe"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cb := &iocb{opcode: iocbCmdFsync, fd: uint32(f.Fd())}
	if _, _, e := syscall.RawSyscall(unix.SYS_IO_SUBMIT, ctx, 1, uintptr(unsafe.Pointer(&cb))); e != 0 {
		t.Logf("io_submit of an fsync: %v: the journal must fall back to a raw fsync", e)
		return false
	}
	var ev ioEvent
	if n, _, e := syscall.Syscall6(unix.SYS_IO_GETEVENTS, ctx, 1, 1, uintptr(unsafe.Pointer(&ev)), 0, 0); e != 0 || n != 1 || ev.res != 0 {
		t.Logf("io_getevents: %d events, %v, result %d: the journal must fall back to a raw fsync", n, e, ev.res)
		return false
	}
	return true
}

// TestRawIOFsyncsThroughAIO: under RawIO the journal fsyncs through AIO wherever the kernel
// lets it set up a context, and what it wrote that way replays after a reopen; where the
// kernel refuses, it says so and still writes durably.
func TestRawIOFsyncsThroughAIO(t *testing.T) {
	dir := t.TempDir()
	j := openRaw(t, dir, SyncAlways, true)
	if got, want := j.AsyncFsync(), kernelOffersAIO(t); got != want {
		t.Fatalf("AsyncFsync() = %v, want %v (what io_setup answers)", got, want)
	}
	appendN(t, j, 0, 50)
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	j = open(t, dir, SyncAlways)
	defer j.Close()
	if j.AsyncFsync() {
		t.Fatal("a journal without RawIO fsyncs through AIO")
	}
	if got := all(t, j); !slices.Equal(got, want(0, 50)) {
		t.Fatalf("replayed %v, want %v", got, want(0, 50))
	}
}

// TestAIOFsyncErrors: a fsync the kernel refuses (a closed descriptor, a pipe that cannot be
// synced) is an error, and the context stays usable for the next fsync.
func TestAIOFsyncErrors(t *testing.T) {
	if !kernelOffersAIO(t) {
		t.Skip("no AIO context here; TestRawIOFsyncsThroughAIO checks the fallback")
	}
	good, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()
	a, err := newAioFsync(good)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	closed, err := os.Create(filepath.Join(t.TempDir(), "closed"))
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	// The completion is awaited in the netpoller: the eventfd must stay non-blocking, or the
	// wait would be a read that holds the processor until the disk is done.
	if err := a.fsync(good); err != nil {
		t.Fatal(err)
	}
	if fl, err := unix.FcntlInt(a.ev.Fd(), unix.F_GETFL, 0); err != nil || fl&unix.O_NONBLOCK == 0 {
		t.Fatalf("eventfd flags %#x (%v) after an fsync: want O_NONBLOCK", fl, err)
	}
	for _, f := range []*os.File{closed, r} {
		if err := a.fsync(f); err == nil {
			t.Errorf("fsync of %s: no error", f.Name())
		}
		if _, err := good.WriteString("x"); err != nil {
			t.Fatal(err)
		}
		if err := a.fsync(good); err != nil {
			t.Fatalf("fsync after a refused one: %v", err)
		}
	}
}

// TestAIOLayout: the iocb and io_event the kernel reads and writes are laid out as
// include/uapi/linux/aio_abi.h declares them (64 and 32 bytes, the same on every architecture).
func TestAIOLayout(t *testing.T) {
	var cb iocb
	var ev ioEvent
	for _, c := range []struct {
		what      string
		got, want uintptr
	}{
		{"sizeof(struct iocb)", unsafe.Sizeof(cb), 64},
		{"aio_lio_opcode", unsafe.Offsetof(cb.opcode), 16},
		{"aio_fildes", unsafe.Offsetof(cb.fd), 20},
		{"aio_buf", unsafe.Offsetof(cb.buf), 24},
		{"aio_offset", unsafe.Offsetof(cb.offset), 40},
		{"aio_flags", unsafe.Offsetof(cb.flags), 56},
		{"aio_resfd", unsafe.Offsetof(cb.resfd), 60},
		{"sizeof(struct io_event)", unsafe.Sizeof(ev), 32},
		{"io_event.res", unsafe.Offsetof(ev.res), 16},
	} {
		if c.got != c.want {
			t.Errorf("%s at %d, want %d", c.what, c.got, c.want)
		}
	}
}
