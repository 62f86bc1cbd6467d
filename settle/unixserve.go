package settle

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// socketServer serves the facilitator's API on its Unix socket: each connection's goroutine
// reads a request, runs the handler and writes the answer, in turn. net/http's server costs a
// paid call's two round trips to this socket more than their own work (docs/gas.md): for each
// request it starts a goroutine that reads ahead on the connection, to cancel the request's
// context if the client hangs up, and stops it again before answering. Here a request's
// context ends only with the server: a gate that gives up on a call does not interrupt its
// handler, which finishes as it would have (the calls that move money, /settle and the
// completions, are detached from their client anyway).
//
// It speaks the HTTP/1.1 that the gate's client (settle/client) and curl --unix-socket send:
// requests parsed by net/http, answers with a Content-Length, keep-alive unless the request
// asks to close. Graceful shutdown as net/http's: idle connections are closed, requests under
// way are answered first (for at most 10 s).
type socketServer struct {
	h   http.Handler
	log *slog.Logger

	mu      sync.Mutex
	conns   map[*socketConn]struct{}
	closing bool
	wg      sync.WaitGroup
}

type socketConn struct {
	nc   net.Conn
	busy bool // a request is being served (under socketServer.mu)
}

// headerTimeout bounds reading a request once its first byte came, as Serve's
// ReadHeaderTimeout does for net/http.
const headerTimeout = 5 * time.Second

func newSocketServer(h http.Handler, log *slog.Logger) *socketServer {
	return &socketServer{h: h, log: log, conns: map[*socketConn]struct{}{}}
}

// serve accepts connections on l until it is closed.
func (s *socketServer) serve(ctx context.Context, l net.Listener) error {
	for {
		nc, err := l.Accept()
		if err != nil {
			return err
		}
		c := &socketConn{nc: nc}
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			_ = nc.Close()
			continue
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serveConn(ctx, c)
	}
}

// setBusy marks c as serving a request (or idle again); false when the server is closing and c
// should end.
func (s *socketServer) setBusy(c *socketConn, busy bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.busy = busy
	return !s.closing
}

func (s *socketServer) serveConn(ctx context.Context, c *socketConn) {
	defer func() {
		_ = c.nc.Close()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		s.wg.Done()
	}()
	br := bufio.NewReaderSize(c.nc, 8<<10)
	bw := bufio.NewWriterSize(c.nc, 8<<10)
	var body bytes.Buffer
	for {
		if _, err := br.Peek(1); err != nil {
			return // the client closed, or the server is closing this idle connection
		}
		if !s.setBusy(c, true) {
			return
		}
		_ = c.nc.SetReadDeadline(time.Now().Add(headerTimeout))
		req, err := http.ReadRequest(br)
		if err != nil {
			s.log.Debug("settle socket: unreadable request", keyErr, err)
			return
		}
		_ = c.nc.SetReadDeadline(time.Time{})
		w := &socketResponse{header: http.Header{}, body: &body}
		if !s.run(w, req.WithContext(ctx)) {
			return
		}
		// What the handler left of the body is read, so that the next request starts in place.
		if _, err := io.Copy(io.Discard, io.LimitReader(req.Body, maxBody)); err != nil {
			return
		}
		if err := w.writeTo(bw); err != nil {
			return
		}
		body.Reset()
		if req.Close || !req.ProtoAtLeast(1, 1) || !s.setBusy(c, false) {
			return
		}
	}
}

// run calls the handler; false when it aborted the answer (http.ErrAbortHandler) or panicked,
// which closes the connection without one, as net/http does.
func (s *socketServer) run(w *socketResponse, req *http.Request) (ok bool) {
	defer func() {
		if p := recover(); p != nil {
			ok = false
			if p != http.ErrAbortHandler {
				s.log.Error("settle socket: handler panicked", keyErr, p, keyPath, req.URL.Path)
			}
		}
	}()
	s.h.ServeHTTP(w, req)
	return true
}

// shutdown closes the idle connections and waits (until ctx ends) for those serving a request,
// which close after their answer; then it closes what is left.
func (s *socketServer) shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	for c := range s.conns {
		if !c.busy {
			// Unblocks its Peek at once; the goroutine closes the connection.
			_ = c.nc.SetReadDeadline(longAgo)
		}
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		s.close()
		<-done
		return ctx.Err()
	}
}

// close closes every connection at once.
func (s *socketServer) close() {
	s.mu.Lock()
	s.closing = true
	for c := range s.conns {
		_ = c.nc.Close()
	}
	s.mu.Unlock()
}

// longAgo is a deadline already past.
var longAgo = time.Unix(1, 0)

// socketResponse is the handler's http.ResponseWriter: the answer is kept until the handler
// returns, then written with its length.
type socketResponse struct {
	header http.Header
	status int
	body   *bytes.Buffer
}

func (w *socketResponse) Header() http.Header { return w.header }

func (w *socketResponse) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *socketResponse) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}

func (w *socketResponse) writeTo(bw *bufio.Writer) error {
	w.WriteHeader(http.StatusOK)
	bw.WriteString("HTTP/1.1 ")
	bw.WriteString(strconv.Itoa(w.status))
	bw.WriteByte(' ')
	bw.WriteString(http.StatusText(w.status))
	bw.WriteString("\r\n")
	w.header.Del("Content-Length")
	w.header.Del("Transfer-Encoding")
	if err := w.header.Write(bw); err != nil {
		return err
	}
	bw.WriteString("Content-Length: ")
	bw.WriteString(strconv.Itoa(w.body.Len()))
	bw.WriteString("\r\n\r\n")
	bw.Write(w.body.Bytes())
	return bw.Flush()
}

// isUnix reports whether l listens on a Unix socket.
func isUnix(l net.Listener) bool { return l.Addr().Network() == "unix" }
