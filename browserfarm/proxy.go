package browserfarm

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/peage/appliance/internal/egress"
)

// blockedHeader marks the proxy's own refusals so a refused document is never mistaken for
// the target's answer.
const blockedHeader = "X-Peage-Egress-Refused"

// BlockedRequest is one request of a page that the egress policy refused.
type BlockedRequest struct {
	URL    string `json:"url"`
	Reason string `json:"reason"`
}

// recorder collects what the proxy refused during one job.
type recorder struct {
	mu      sync.Mutex
	blocked []BlockedRequest
}

func (r *recorder) add(u, reason string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range r.blocked {
		if b.URL == u {
			return
		}
	}
	if len(r.blocked) < 200 {
		r.blocked = append(r.blocked, BlockedRequest{URL: u, Reason: reason})
	}
}

func (r *recorder) list() []BlockedRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]BlockedRequest(nil), r.blocked...)
}

// filterProxy is the only way out of a browser: an HTTP forward proxy with CONNECT on
// loopback whose every dial goes through the egress policy, so the checked address is the one
// connected to (no second DNS lookup by Chromium, no rebinding window). One proxy serves one
// browser, and a browser runs one job at a time, so what it refuses belongs to that job.
type filterProxy struct {
	policy *egress.Policy
	log    *slog.Logger
	ln     net.Listener
	srv    *http.Server
	tr     *http.Transport

	mu  sync.Mutex
	rec *recorder
}

func newFilterProxy(policy *egress.Policy, log *slog.Logger) (*filterProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	tr := policy.Transport()
	tr.ForceAttemptHTTP2 = false
	tr.MaxIdleConnsPerHost = 8
	p := &filterProxy{policy: policy, log: log, ln: ln, tr: tr}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

func (p *filterProxy) addr() string { return p.ln.Addr().String() }

func (p *filterProxy) setRecorder(r *recorder) {
	p.mu.Lock()
	p.rec = r
	p.mu.Unlock()
}

func (p *filterProxy) recorder() *recorder {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rec
}

func (p *filterProxy) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = p.srv.Shutdown(ctx)
	_ = p.srv.Close()
	p.tr.CloseIdleConnections()
}

func (p *filterProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	p.forward(w, r)
}

func (p *filterProxy) refuse(w http.ResponseWriter, target string, err error) {
	var b *egress.Blocked
	reason := "refused"
	if errors.As(err, &b) {
		reason = b.Reason
	}
	p.recorder().add(target, reason)
	w.Header().Set(blockedHeader, reason)
	http.Error(w, "refused by the appliance's egress policy: "+reason, http.StatusForbidden)
}

func (p *filterProxy) connect(w http.ResponseWriter, r *http.Request) {
	target := "https://" + r.Host
	up, err := p.policy.DialContext(r.Context(), "tcp", r.Host)
	if err != nil {
		if egress.IsBlocked(err) {
			p.refuse(w, target, err)
			return
		}
		http.Error(w, "connect failed", http.StatusBadGateway)
		return
	}
	rc := http.NewResponseController(w)
	down, buf, err := rc.Hijack()
	if err != nil {
		_ = up.Close()
		return
	}
	if _, err := down.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		_ = up.Close()
		_ = down.Close()
		return
	}
	// Bytes the browser sent after CONNECT may already sit in the server's reader.
	if n := buf.Reader.Buffered(); n > 0 {
		pending, _ := buf.Reader.Peek(n)
		if _, err := up.Write(pending); err != nil {
			_ = up.Close()
			_ = down.Close()
			return
		}
	}
	go pipe(up, down)
	pipe(down, up)
}

// pipe copies one direction and then closes both ends, so the other direction ends too.
func pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	_ = dst.Close()
	_ = src.Close()
}

var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func (p *filterProxy) forward(w http.ResponseWriter, r *http.Request) {
	if r.URL.Scheme != "http" || r.URL.Host == "" {
		http.Error(w, "only absolute http URLs are proxied", http.StatusBadRequest)
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	resp, err := p.tr.RoundTrip(out)
	if err != nil {
		if egress.IsBlocked(err) {
			p.refuse(w, r.URL.String(), err)
			return
		}
		http.Error(w, "upstream failed", http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for _, h := range hopHeaders {
		resp.Header.Del(h)
	}
	// Only the proxy may say it refused something; a target must not fake it.
	resp.Header.Del(blockedHeader)
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	// Flush every chunk: a page that streams slowly must reach the browser as it comes,
	// or its first bytes would wait in our buffer until the job's deadline.
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			_ = rc.Flush()
		}
		if err != nil {
			return
		}
	}
}

// hostOf returns host:port of an http(s) URL with the scheme's default port filled in.
func hostOf(rawURL string) string {
	s := rawURL
	scheme := "http"
	if i := strings.Index(s, "://"); i >= 0 {
		scheme, s = strings.ToLower(s[:i]), s[i+3:]
	}
	if i := strings.IndexAny(s, "/?#"); i >= 0 {
		s = s[:i]
	}
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		s = s[i+1:]
	}
	if _, _, err := net.SplitHostPort(s); err == nil {
		return strings.ToLower(s)
	}
	port := "80"
	if scheme == "https" {
		port = "443"
	}
	return strings.ToLower(net.JoinHostPort(strings.Trim(s, "[]"), port))
}
