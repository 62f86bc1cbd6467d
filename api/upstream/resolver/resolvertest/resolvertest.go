// Package resolvertest serves zone files from a miekg/dns server on a loopback UDP and TCP port
// for tests and benchmarks: it answers like a recursive resolver that already knows the zones
// (recursion available, CNAME chains followed inside the data, NXDOMAIN for names that own
// nothing and have nothing below them, NODATA otherwise).
package resolvertest

import (
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/miekg/dns"
)

// Server is a running resolver.
type Server struct {
	Addr       string // HOST:PORT, UDP and TCP
	Queries    atomic.Int64
	TCPQueries atomic.Int64        // queries asked again over TCP after a truncated UDP answer
	records    map[string][]dns.RR // owner (lower-case FQDN) → records
	udp        *dns.Server
	tcp        *dns.Server
	// AD is set in every answer when true (a validating resolver vouching for the data).
	AD atomic.Bool
	// ServFail makes every answer SERVFAIL when true.
	ServFail atomic.Bool
}

// Start parses zone (RFC 1035 master file text with absolute owner names) and serves it until
// the test ends.
func Start(t testing.TB, zone string) *Server {
	t.Helper()
	s, err := New(zone)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// New starts a server without a test (benchmark programs); Close stops it.
func New(zone string) (*Server, error) {
	s := &Server{records: map[string][]dns.RR{}}
	zp := dns.NewZoneParser(strings.NewReader(zone), ".", "zone")
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		owner := strings.ToLower(rr.Header().Name)
		s.records[owner] = append(s.records[owner], rr)
	}
	if err := zp.Err(); err != nil {
		return nil, fmt.Errorf("zone: %w", err)
	}
	pc, ln, err := listen()
	if err != nil {
		return nil, err
	}
	s.Addr = pc.LocalAddr().String()
	h := dns.HandlerFunc(s.serve)
	s.udp = &dns.Server{PacketConn: pc, Handler: h}
	s.tcp = &dns.Server{Listener: ln, Handler: h}
	started := make(chan struct{}, 2)
	s.udp.NotifyStartedFunc = func() { started <- struct{}{} }
	s.tcp.NotifyStartedFunc = func() { started <- struct{}{} }
	go func() { _ = s.udp.ActivateAndServe() }()
	go func() { _ = s.tcp.ActivateAndServe() }()
	<-started
	<-started
	return s, nil
}

// listen takes a UDP port and the TCP port of the same number; the TCP one may be taken
// already, so a few ports are tried.
func listen() (net.PacketConn, net.Listener, error) {
	var last error
	for range 20 {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			return nil, nil, err
		}
		ln, err := net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			return pc, ln, nil
		}
		pc.Close()
		last = err
	}
	return nil, nil, last
}

// Close stops the server; its port then refuses queries.
func (s *Server) Close() {
	_ = s.udp.Shutdown()
	_ = s.tcp.Shutdown()
}

func (s *Server) serve(w dns.ResponseWriter, req *dns.Msg) {
	s.Queries.Add(1)
	m := new(dns.Msg)
	m.SetReply(req)
	m.RecursionAvailable = true
	if s.ServFail.Load() || len(req.Question) != 1 {
		m.Rcode = dns.RcodeServerFailure
		_ = w.WriteMsg(m)
		return
	}
	q := req.Question[0]
	name := strings.ToLower(q.Name)
	for range 8 { // follow a CNAME chain inside the data, as a recursive resolver would
		var cname *dns.CNAME
		found := false
		for _, rr := range s.records[name] {
			if rr.Header().Rrtype == q.Qtype {
				m.Answer = append(m.Answer, rr)
				found = true
			} else if c, ok := rr.(*dns.CNAME); ok {
				cname = c
			}
		}
		if found || cname == nil {
			break
		}
		m.Answer = append(m.Answer, cname)
		name = strings.ToLower(cname.Target)
	}
	if len(m.Answer) == 0 && !s.exists(name) {
		m.Rcode = dns.RcodeNameError
	}
	m.AuthenticatedData = s.AD.Load()
	// A UDP answer larger than the client's buffer is truncated, so the TCP retry is exercised.
	if _, udp := w.RemoteAddr().(*net.UDPAddr); !udp {
		s.TCPQueries.Add(1)
	} else {
		size := dns.MinMsgSize
		if o := req.IsEdns0(); o != nil {
			size = int(o.UDPSize())
		}
		m.Truncate(size)
	}
	_ = w.WriteMsg(m)
}

// exists reports whether name owns records or has names below it (an empty non-terminal).
func (s *Server) exists(name string) bool {
	if len(s.records[name]) > 0 {
		return true
	}
	for owner := range s.records {
		if strings.HasSuffix(owner, "."+name) {
			return true
		}
	}
	return false
}

// Unreachable returns the address of a UDP port that nothing listens on (its queries are
// refused by the kernel), for resolver-down tests.
func Unreachable(t testing.TB) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	pc.Close()
	return addr
}

// Silent returns the address of a UDP port that reads queries and never answers, for
// resolver-timeout tests.
func Silent(t testing.TB) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		buf := make([]byte, 1500)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { pc.Close() })
	return pc.LocalAddr().String()
}
