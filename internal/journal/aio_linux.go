//go:build linux

package journal

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// aioFsync runs fsync through Linux AIO (IOCB_CMD_FSYNC, Linux 4.18+): the kernel syncs the
// file in its own worker and signals an eventfd, which the caller waits on in the netpoller.
// The waiting goroutine's processor runs other goroutines meanwhile and no thread sits in a
// system call, so a process with a single processor (proxyd) relays through its fsyncs.
type aioFsync struct {
	mu  sync.Mutex // one fsync in flight at a time
	ctx uintptr    // aio_context_t
	ev  *os.File   // the completion eventfd, non-blocking, so os.File polls it
	rc  syscall.RawConn
	cb  iocb
	out [1]ioEvent
}

//lint:file-ignore U1000 iocb's fields are the kernel's layout: the kernel reads those Go never sets

// iocb is the kernel's struct iocb (little-endian layout: aio_key before aio_rw_flags).
type iocb struct {
	data     uint64
	key      uint32
	rwFlags  int32
	opcode   uint16
	prio     int16
	fd       uint32
	buf      uint64
	nbytes   uint64
	offset   int64
	reserved uint64
	flags    uint32
	resfd    uint32
}

type ioEvent struct {
	data, obj uint64
	res, res2 int64
}

const (
	iocbCmdFsync = 2
	iocbFlagRes  = 1 // IOCB_FLAG_RESFD: signal aio_resfd on completion
)

// newAioFsync sets up an AIO context and proves it by syncing f once; an error means the
// kernel (or a seccomp filter) does not offer AIO fsync and the caller fsyncs itself.
func newAioFsync(f *os.File) (*aioFsync, error) {
	a := &aioFsync{}
	if _, _, e := syscall.RawSyscall(unix.SYS_IO_SETUP, 1, uintptr(unsafe.Pointer(&a.ctx)), 0); e != 0 {
		return nil, fmt.Errorf("io_setup: %w", e)
	}
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		a.destroy()
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	a.ev = os.NewFile(uintptr(efd), "aio-fsync-eventfd")
	if a.rc, err = a.ev.SyscallConn(); err != nil {
		a.close()
		return nil, err
	}
	if err := a.fsync(f); err != nil {
		a.close()
		return nil, err
	}
	return a, nil
}

// fsync makes f durable, waiting for the kernel's worker in the netpoller.
func (a *aioFsync) fsync(f *os.File) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cb = iocb{opcode: iocbCmdFsync, fd: uint32(f.Fd()), flags: iocbFlagRes, resfd: uint32(a.ev.Fd())}
	p := &a.cb
	for {
		_, _, e := syscall.RawSyscall(unix.SYS_IO_SUBMIT, a.ctx, 1, uintptr(unsafe.Pointer(&p)))
		if e == 0 {
			break
		}
		if e != syscall.EINTR && e != syscall.EAGAIN {
			return &os.PathError{Op: "io_submit fsync", Path: f.Name(), Err: e}
		}
	}
	var count [8]byte
	var rerr syscall.Errno
	err := a.rc.Read(func(fd uintptr) bool {
		_, _, rerr = syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&count[0])), 8)
		return rerr != syscall.EAGAIN && rerr != syscall.EINTR
	})
	if err == nil && rerr != 0 {
		err = rerr
	}
	if err != nil {
		// The fsync is still the kernel's: reap its completion, so that the next fsync does
		// not find it in the ring (this fsync's error already fails the journal).
		a.reapBlocking()
		return fmt.Errorf("journal: wait for fsync: %w", err)
	}
	var zero unix.Timespec
	n, _, e := syscall.RawSyscall6(unix.SYS_IO_GETEVENTS, a.ctx, 1, 1, uintptr(unsafe.Pointer(&a.out[0])), uintptr(unsafe.Pointer(&zero)), 0)
	switch {
	case e != 0:
		return &os.PathError{Op: "io_getevents", Path: f.Name(), Err: e}
	case n != 1:
		return &os.PathError{Op: "io_getevents", Path: f.Name(), Err: errors.New("completion signalled but not found")}
	case a.out[0].res < 0:
		return &os.PathError{Op: "fsync", Path: f.Name(), Err: syscall.Errno(-a.out[0].res)}
	}
	return nil
}

// reapBlocking waits (in a blocking system call) for the one fsync in flight.
func (a *aioFsync) reapBlocking() {
	for {
		_, _, e := syscall.Syscall6(unix.SYS_IO_GETEVENTS, a.ctx, 1, 1, uintptr(unsafe.Pointer(&a.out[0])), 0, 0)
		if e != syscall.EINTR {
			return
		}
	}
}

func (a *aioFsync) destroy() {
	if a.ctx != 0 {
		_, _, _ = syscall.Syscall(unix.SYS_IO_DESTROY, a.ctx, 0, 0)
		a.ctx = 0
	}
}

func (a *aioFsync) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.destroy()
	if a.ev != nil {
		_ = a.ev.Close()
	}
}
