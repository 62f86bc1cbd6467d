package proxyd

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

var errTooMany = errors.New("too many open tunnels for this key")

// chunkSize is the user-space copy size; buffers are pooled and only held while bytes are in
// hand, never while a tunnel waits, so an idle tunnel costs two goroutines and no buffer.
const chunkSize = 32 << 10

var bufPool = sync.Pool{New: func() any { b := make([]byte, chunkSize); return &b }}

// bigChunkSize is the buffered relay's buffer during a burst (a full read with as much again
// waiting): a quarter of the system calls per byte where a sender outruns the copy, as 100
// streams on loopback do (about 12% less CPU per GiB in two same-run benchmarks); a home line's
// spans never fill a chunk, so they never take one.
const bigChunkSize = 128 << 10

var bigPool = sync.Pool{New: func() any { b := make([]byte, bigChunkSize); return &b }}

// putBuf gives a copy buffer back to its pool.
func putBuf(bp *[]byte) {
	if len(*bp) == bigChunkSize {
		bigPool.Put(bp)
		return
	}
	bufPool.Put(bp)
}

// tunnel is one CONNECT tunnel between a buyer and a target.
type tunnel struct {
	m      *meter
	client net.Conn
	target net.Conn
	closed atomic.Bool
	ended  atomic.Int32  // directions whose source ended cleanly
	last   atomic.Int64  // unix nanoseconds of the last byte moved, for the idle sweep
	kernel *atomic.Int64 // bytes moved by splice windows (for Stats), may be nil
}

func (t *tunnel) touch() { t.last.Store(time.Now().UnixNano()) }

// shut closes both sides; it may be called with the meter locked, and from inside a pump's
// own socket call. A full close (not a half-close) is what unblocks the other direction's
// read. Close waits until no call on the socket is under way, and relay meters its bytes
// (which may end this very tunnel, or wait for the meter's lock) inside such a call, so the
// sockets are closed by a goroutine of their own, never by the caller.
func (t *tunnel) shut() {
	if t.closed.Swap(true) {
		return
	}
	go func() {
		_ = t.client.Close()
		_ = t.target.Close()
	}()
}

func (t *tunnel) close() {
	t.shut()
	t.m.wake()
}

// run copies both directions until both ended, the client's early bytes (sent after its
// CONNECT head) first; it returns the bytes moved up and down.
func (t *tunnel) run(early []byte) (up, down int64) {
	pu := newPump(t, t.client, t.target)
	pd := newPump(t, t.target, t.client)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if len(early) > 0 {
			if err := pu.forward(early); err != nil {
				t.close()
				return
			}
		}
		if err := pu.run(); err != nil {
			t.close()
		}
	}()
	if err := pd.run(); err != nil {
		t.close()
	}
	wg.Wait()
	t.end()
	return pu.moved, pd.moved
}

// end closes both sockets once both pumps returned: no call on them is under way any more, so
// they are closed here rather than by a goroutine of their own (shut).
func (t *tunnel) end() {
	if !t.closed.Swap(true) {
		_ = t.client.Close()
		_ = t.target.Close()
	}
}

// pump moves one direction of a tunnel.
type pump struct {
	t         *tunnel
	src, dst  net.Conn
	srcTCP    *net.TCPConn
	dstTCP    *net.TCPConn
	srcRaw    syscall.RawConn // both set when both ends are TCP sockets
	dstRaw    syscall.RawConn
	preempted atomic.Bool
	moved     int64
	rs        relayState
}

func newPump(t *tunnel, src, dst net.Conn) *pump {
	p := &pump{t: t, src: src, dst: dst}
	p.srcTCP, _ = src.(*net.TCPConn)
	p.dstTCP, _ = dst.(*net.TCPConn)
	if p.srcTCP != nil && p.dstTCP != nil {
		p.srcRaw, _ = p.srcTCP.SyscallConn()
		p.dstRaw, _ = p.dstTCP.SyscallConn()
	}
	return p
}

// interrupt makes a kernel copy stalled on a quiet sender return now, with what it copied.
// Only a read deadline is used: a write deadline could strand bytes already in splice's pipe.
func (p *pump) interrupt() { _ = p.src.SetReadDeadline(time.Unix(1, 0)) }

func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

func (p *pump) halfClose() error {
	if cw, ok := p.dst.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return p.dst.Close()
}

// run returns nil when the source ended cleanly (the far side got a FIN), or why it stopped.
func (p *pump) run() error {
	err := p.copy()
	if errors.Is(err, io.EOF) {
		if p.t.ended.Add(1) == 2 {
			// Both directions ended: the close that follows sends this side's FIN (every
			// byte of both sources was read, so it is a FIN, not a reset).
			return nil
		}
		return p.halfClose()
	}
	return err
}

// timeZero clears a read deadline (relay_linux.go uses it without importing time).
var timeZero time.Time

func (p *pump) copy() error {
	m := p.t.m
	raw := p.srcRaw != nil && p.dstRaw != nil && canRelay
	if raw && m.window == 0 {
		return p.relay(false)
	}
	for {
		if p.t.closed.Load() {
			return errClosed
		}
		if p.srcRaw != nil {
			// Wait for data without holding a buffer, a pipe or a grant: idle tunnels cost
			// nothing but their goroutines, and grants are only taken for bytes that exist.
			eof, err := waitReadable(p.srcRaw)
			if isTimeout(err) {
				_ = p.src.SetReadDeadline(timeZero)
				continue
			}
			if err != nil {
				return err
			}
			if eof {
				return io.EOF
			}
		}
		if p.srcTCP != nil && p.dstTCP != nil {
			if g, ok := m.grantWindow(p); ok {
				// io.CopyN over a LimitedReader of a *net.TCPConn keeps Linux splice.
				n, err := io.CopyN(p.dstTCP, p.srcTCP, g)
				m.settle(g, n, p)
				p.moved += n
				if p.t.kernel != nil {
					p.t.kernel.Add(n)
				}
				if n > 0 {
					p.t.touch()
				}
				switch {
				case err == nil:
					continue
				case isTimeout(err):
					_ = p.src.SetReadDeadline(timeZero)
					continue
				default:
					return err
				}
			}
		}
		if raw {
			// No window now (the key's slack is shared by many tunnels, or the quota's end is
			// near): copy what is there exactly, then wait again.
			if err := p.relay(true); err != nil {
				return err
			}
			continue
		}
		if err := p.copyChunk(); err != nil {
			return err
		}
	}
}

// copyChunk reads what is there (at most one chunk) and writes exactly what the meter grants.
func (p *pump) copyChunk() error {
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	buf := *bp
	n, rerr := p.src.Read(buf)
	if n > 0 {
		if err := p.forward(buf[:n]); err != nil {
			return err
		}
		p.t.touch()
	}
	if isTimeout(rerr) {
		_ = p.src.SetReadDeadline(timeZero)
		return nil
	}
	return rerr
}

// forward writes b to dst, each part granted by the meter first and settled after; both copy
// paths meter their bytes here (relay from inside src's read callback).
func (p *pump) forward(b []byte) error {
	m := p.t.m
	for off := 0; off < len(b); {
		g, err := m.take(int64(len(b)-off), p.t)
		if g == 0 {
			return err
		}
		w, werr := p.write(b[off : off+int(g)])
		m.settle(g, int64(w), nil)
		p.moved += int64(w)
		off += w
		if werr != nil {
			return werr
		}
	}
	return nil
}
