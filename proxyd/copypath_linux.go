//go:build linux

package proxyd

import (
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// measureCopyPaths moves chunk-sized spans from one loopback TCP socket to another, on one
// locked thread, by splice (socket → pipe → socket) and by read and write through a user-space
// buffer, and returns the median CPU time of each, read from the thread's own CPU clock. Both
// paths wait for data the same way in a tunnel (the netpoller), so what differs between them is
// what is timed here: the system calls and the copies.
func measureCopyPaths(chunk, rounds int) (splice, buffered time.Duration, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, 0, err
	}
	defer ln.Close()
	pair := func() (w, r *net.TCPConn, err error) {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			return nil, nil, err
		}
		s, err := ln.Accept()
		if err != nil {
			c.Close()
			return nil, nil, err
		}
		return c.(*net.TCPConn), s.(*net.TCPConn), nil
	}
	feed, src, err := pair()
	if err != nil {
		return 0, 0, err
	}
	defer feed.Close()
	defer src.Close()
	dst, sink, err := pair()
	if err != nil {
		return 0, 0, err
	}
	defer dst.Close()
	defer sink.Close()
	srcFD, err := fdOf(src)
	if err != nil {
		return 0, 0, err
	}
	dstFD, err := fdOf(dst)
	if err != nil {
		return 0, 0, err
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		return 0, 0, err
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	if _, err := unix.FcntlInt(uintptr(p[1]), unix.F_SETPIPE_SZ, max(chunk, 64<<10)); err != nil {
		return 0, 0, err
	}

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	data := make([]byte, chunk)
	buf := make([]byte, chunk)
	drain := make([]byte, chunk)
	viaSplice := func() error {
		for moved := 0; moved < chunk; {
			n, err := unix.Splice(srcFD, nil, p[1], nil, chunk-moved, unix.SPLICE_F_MOVE|unix.SPLICE_F_NONBLOCK)
			if err != nil {
				return fmt.Errorf("splice in: %w", err)
			}
			for out := int64(0); out < n; {
				k, err := unix.Splice(p[0], nil, dstFD, nil, int(n-out), unix.SPLICE_F_MOVE|unix.SPLICE_F_NONBLOCK)
				if err != nil {
					return fmt.Errorf("splice out: %w", err)
				}
				out += k
			}
			moved += int(n)
		}
		// io.CopyN's splice drains the socket until EAGAIN before it waits for more, so in a
		// tunnel every span ends with one splice that finds nothing; the buffered relay knows
		// from TCP_INQ that the socket is empty and makes no such call.
		if _, err := unix.Splice(srcFD, nil, p[1], nil, chunk, unix.SPLICE_F_MOVE|unix.SPLICE_F_NONBLOCK); err != unix.EAGAIN {
			return fmt.Errorf("splice on an empty socket: %v", err)
		}
		return nil
	}
	viaBuffer := func() error {
		for moved := 0; moved < chunk; {
			n, err := unix.Read(srcFD, buf[:chunk-moved])
			if err != nil {
				return fmt.Errorf("read: %w", err)
			}
			for out := 0; out < n; {
				k, err := unix.Write(dstFD, buf[out:n])
				if err != nil {
					return fmt.Errorf("write: %w", err)
				}
				out += k
			}
			moved += n
		}
		return nil
	}
	// Each round feeds one chunk, waits until all of it is readable, times the move alone and
	// drains the far end, so every move finds its data in place and room on the other side.
	timed := func(move func() error) (time.Duration, error) {
		if _, err := feed.Write(data); err != nil {
			return 0, err
		}
		for {
			n, err := unix.IoctlGetInt(srcFD, unix.SIOCINQ)
			if err != nil {
				return 0, err
			}
			if n >= chunk {
				break
			}
			runtime.Gosched()
		}
		t0 := threadCPU()
		err := move()
		d := threadCPU() - t0
		if err != nil {
			return 0, err
		}
		_, err = io.ReadFull(sink, drain)
		return d, err
	}
	var sp, bu []time.Duration
	for i := 0; i < rounds; i++ {
		a, err := timed(viaSplice)
		if err != nil {
			return 0, 0, err
		}
		b, err := timed(viaBuffer)
		if err != nil {
			return 0, 0, err
		}
		sp, bu = append(sp, a), append(bu, b)
	}
	slices.Sort(sp)
	slices.Sort(bu)
	return sp[len(sp)/2], bu[len(bu)/2], nil
}

func threadCPU() time.Duration {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}

// fdOf returns the descriptor of c; it stays valid while c is open.
func fdOf(c *net.TCPConn) (int, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	fd := -1
	if err := rc.Control(func(f uintptr) { fd = int(f) }); err != nil {
		return 0, err
	}
	if fd < 0 {
		return 0, errors.New("no descriptor")
	}
	return fd, nil
}
