//go:build linux

package proxyd

import (
	"io"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// canRelay says whether relay (raw system calls on the sockets) is available here.
const canRelay = true

// relay moves bytes from src to dst through a pooled buffer until src ends, an error, or the
// tunnel closes; with burst it returns nil instead when src has nothing more for now (the
// splice path then waits for the next bytes itself). It is the buffered copy path, shaped by
// what a tunnel costs at a home line's rate, where every few kilobytes wake the proxy:
//
//   - No readiness peek: the first read is the wait. It runs inside src's RawConn.Read, so a
//     read that finds nothing parks the goroutine in the netpoller, and the buffer goes back to
//     the pool first: an idle tunnel still holds no buffer.
//   - The write to dst happens inside the same callback, and when the kernel says (TCP_INQ) that
//     the read left nothing behind, neither bytes nor the peer's FIN, the callback parks right
//     after the write instead of reading again to hear EAGAIN. This is safe because
//     RawConn.Read arms readiness before the callback's first read: a byte or a FIN that arrives
//     after it (during the write too) wakes the wait. Without TCP_INQ a FIN read together with
//     the last bytes would raise no further wakeup, so then the callback reads until EAGAIN.
//   - The reads and writes are raw system calls on non-blocking sockets: they never sleep in
//     the kernel, and skipping the runtime's syscall bookkeeping also spares the scheduler's
//     monitor from waking every 20 µs to hand the processor of a "blocked" thread to another.
//
// Every byte is still granted by the meter before it is written and settled after, exactly as
// in copyChunk: both call forward.
func (p *pump) relay(burst bool) error {
	r := &p.rs
	if r.readFn == nil {
		r.readFn = p.readAndForward
		r.writeFn = p.writeSome
		r.inq = askInq(p.srcRaw)
	}
	r.burst = burst
	defer func() {
		if r.bp != nil {
			putBuf(r.bp)
			r.bp = nil
		}
	}()
	for {
		if p.t.closed.Load() {
			return errClosed
		}
		r.err, r.eof, r.parked = nil, false, false
		err := p.srcRaw.Read(r.readFn)
		switch {
		case err != nil && isTimeout(err):
			// A meter preemption meant for splice windows; nothing is held here.
			_ = p.src.SetReadDeadline(timeZero)
			if burst {
				return nil
			}
			continue
		case err != nil:
			return err
		case r.err != nil:
			return r.err
		case r.eof:
			return io.EOF
		case r.parked:
			return nil
		}
	}
}

// relayState is what relay's callbacks share with it; it lives in the pump so that no
// callback or variable is allocated per chunk.
type relayState struct {
	readFn, writeFn func(fd uintptr) bool
	bp              *[]byte
	burst           bool
	err             error
	eof, parked     bool
	wbuf            []byte
	wdone           int
	werr            error
	// inq: the kernel reports after each read what is left to read (TCP_INQ); msg, iov and
	// oob are the recvmsg arguments that carry it.
	inq bool
	msg unix.Msghdr
	iov unix.Iovec
	oob [64]byte
}

// askInq turns TCP_INQ on for the socket, so that each recvmsg says how much is left to
// read, counting a received FIN as one; it reports whether the kernel agreed (Linux 4.18+).
func askInq(rc syscall.RawConn) bool {
	ok := false
	_ = rc.Control(func(fd uintptr) {
		ok = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, unix.TCP_INQ, 1) == nil
	})
	return ok
}

// readAndForward is the callback of src's RawConn.Read: true ends the Read, false waits in the
// netpoller until src is readable and calls it again.
func (p *pump) readAndForward(fd uintptr) bool {
	r := &p.rs
	for {
		if r.bp == nil {
			r.bp = bufPool.Get().(*[]byte)
		}
		buf := *r.bp
		n, left, errno := p.read(fd, buf)
		switch {
		case errno == syscall.EINTR:
			continue
		case errno == syscall.EAGAIN:
			return p.drained()
		case errno != 0:
			r.err = errno
			return true
		case n == 0:
			r.eof = true
			return true
		}
		if r.err = p.forward(buf[:n]); r.err != nil {
			return true
		}
		p.t.touch()
		if left == 0 {
			// Nothing is left, not even a FIN: wait for more without another read.
			return p.drained()
		}
		if n == len(buf) && left >= len(buf) && len(buf) < bigChunkSize {
			// A full read with as much again waiting: the sender outruns this copy, so the
			// rest of this burst goes through a bigger buffer, in a quarter of the system calls.
			bufPool.Put(r.bp)
			r.bp = bigPool.Get().(*[]byte)
		}
	}
}

// drained gives the buffer back and says whether to wait for src here (false) or return.
func (p *pump) drained() bool {
	r := &p.rs
	putBuf(r.bp)
	r.bp = nil
	r.parked = r.burst
	return r.burst
}

// write writes all of b to dst: by raw system calls when dst is a socket of a relaying pump.
func (p *pump) write(b []byte) (int, error) {
	if p.dstRaw == nil {
		return p.dst.Write(b)
	}
	return p.writeRaw(b)
}

// writeRaw writes all of b to dst, waiting in the netpoller while dst's send buffer is full.
func (p *pump) writeRaw(b []byte) (int, error) {
	r := &p.rs
	if r.writeFn == nil {
		r.writeFn = p.writeSome
	}
	r.wbuf, r.wdone, r.werr = b, 0, nil
	err := p.dstRaw.Write(r.writeFn)
	done := r.wdone
	if err == nil {
		err = r.werr
	}
	r.wbuf, r.werr = nil, nil
	return done, err
}

// writeSome is the callback of dst's RawConn.Write.
func (p *pump) writeSome(fd uintptr) bool {
	r := &p.rs
	for r.wdone < len(r.wbuf) {
		n, errno := rawWrite(fd, r.wbuf[r.wdone:])
		switch {
		case errno == syscall.EINTR:
			continue
		case errno == syscall.EAGAIN:
			return false
		case errno != 0:
			r.werr = errno
			return true
		}
		r.wdone += n
	}
	return true
}

// read reads into b; left is what the kernel says remains to be read (a pending FIN counts
// as 1), or -1 when it cannot say.
func (p *pump) read(fd uintptr, b []byte) (n, left int, errno syscall.Errno) {
	r := &p.rs
	if !r.inq {
		m, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		return int(m), -1, e
	}
	r.iov.Base = &b[0]
	r.iov.SetLen(len(b))
	r.msg.Iov = &r.iov
	r.msg.SetIovlen(1)
	r.msg.Control = &r.oob[0]
	r.msg.SetControllen(len(r.oob))
	m, _, e := syscall.RawSyscall(syscall.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&r.msg)), 0)
	if e != 0 {
		return 0, 0, e
	}
	return int(m), inqOf(r.oob[:r.msg.Controllen]), 0
}

// inqOf reads the TCP_CM_INQ control message, the only one the socket was asked for, from
// oob; -1 when it is not there.
func inqOf(oob []byte) int {
	if len(oob) < syscall.SizeofCmsghdr+4 {
		return -1
	}
	h := (*syscall.Cmsghdr)(unsafe.Pointer(&oob[0]))
	if h.Level != syscall.SOL_TCP || h.Type != unix.TCP_CM_INQ || int(h.Len) < syscall.SizeofCmsghdr+4 {
		return -1
	}
	return int(*(*int32)(unsafe.Pointer(&oob[syscall.SizeofCmsghdr])))
}

func rawWrite(fd uintptr, b []byte) (int, syscall.Errno) {
	n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	return int(n), e
}
