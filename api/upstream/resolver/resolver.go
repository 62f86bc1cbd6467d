// Package resolver is the connector to the recursive DNS resolver the DNS and mail routes ask
// (upstream name "dns"). It speaks DNS with github.com/miekg/dns rather than net.Resolver
// because the routes need what the standard library hides: TTLs, SOA, CAA, raw TXT strings,
// the AD bit and the response code. It is not an HTTP upstream, so it has no row in
// upstream.Specs; its failures are the same *upstream.Error every connector returns.
package resolver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/peage/appliance/api/upstream"
)

// Name is the upstream name the catalog entries carry.
const Name = "dns"

// Config is the [dns] section of the appliance config.
type Config struct {
	Resolver string        `toml:"resolver" doc:"HOST[:PORT] of the recursive resolver the DNS and mail routes ask (several: comma-separated, tried in order); empty: the nameservers of /etc/resolv.conf"`
	Timeout  time.Duration `toml:"timeout" doc:"how long one query may wait for one resolver's answer"`
}

// DefaultConfig asks the system's resolvers.
func DefaultConfig() Config { return Config{Timeout: 3 * time.Second} }

// resolvConf is where the system's resolvers are listed.
const resolvConf = "/etc/resolv.conf"

// Servers returns the resolver addresses cfg designates, in the order they are tried.
func (cfg Config) Servers() ([]string, error) {
	if cfg.Resolver != "" {
		var out []string
		for _, s := range strings.Split(cfg.Resolver, ",") {
			addr, err := hostPort(strings.TrimSpace(s))
			if err != nil {
				return nil, fmt.Errorf("dns.resolver %q: %w", s, err)
			}
			out = append(out, addr)
		}
		return out, nil
	}
	cc, err := dns.ClientConfigFromFile(resolvConf)
	if err != nil {
		return nil, fmt.Errorf("no dns.resolver configured and %s is unreadable: %w", resolvConf, err)
	}
	var out []string
	for _, s := range cc.Servers {
		out = append(out, net.JoinHostPort(s, cc.Port))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no dns.resolver configured and %s lists no nameserver", resolvConf)
	}
	return out, nil
}

func hostPort(s string) (string, error) {
	if host, port, err := net.SplitHostPort(s); err == nil {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || host == "" || strings.ContainsAny(host, "/ ") {
			return "", errors.New("want HOST or HOST:PORT")
		}
		return s, nil
	}
	if s == "" || (net.ParseIP(strings.Trim(s, "[]")) == nil && strings.ContainsAny(s, ":/ ")) {
		return "", errors.New("want HOST or HOST:PORT")
	}
	return net.JoinHostPort(strings.Trim(s, "[]"), "53"), nil
}

// Client asks the configured resolvers; it is safe for concurrent use.
type Client struct {
	servers  []string
	timeout  time.Duration
	udp, tcp *dns.Client
}

// New builds a client; an unusable configuration is an error naming the key.
func New(cfg Config) (*Client, error) {
	servers, err := cfg.Servers()
	if err != nil {
		return nil, err
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultConfig().Timeout
	}
	return &Client{servers: servers, timeout: cfg.Timeout,
		udp: &dns.Client{Net: "udp", UDPSize: ednsSize}, tcp: &dns.Client{Net: "tcp"}}, nil
}

// ednsSize is the DNS Flag Day 2020 buffer size: large enough for most answers, small enough
// to avoid IP fragmentation; a truncated answer is asked again over TCP.
const ednsSize = 1232

// Servers lists the resolvers asked, for error messages and answers.
func (c *Client) Servers() []string { return c.servers }

// Answer is one response: its code, whether the resolver vouched for it with DNSSEC (AD), and
// the answer section.
type Answer struct {
	Rcode  int
	AD     bool
	RRs    []dns.RR
	Server string
}

// NXDomain reports whether the name does not exist.
func (a *Answer) NXDomain() bool { return a.Rcode == dns.RcodeNameError }

// Query asks for name's records of qtype. NXDOMAIN is an answer, not an error; a resolver
// that cannot be reached, times out, or answers SERVFAIL or REFUSED is an *upstream.Error
// naming it. The next configured resolver is tried before giving up.
func (c *Client) Query(ctx context.Context, name string, qtype uint16) (*Answer, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	m.RecursionDesired = true
	m.AuthenticatedData = true // RFC 6840 §5.7: ask a validating resolver to say so
	m.SetEdns0(ednsSize, false)
	op := dns.TypeToString[qtype] + " " + name
	var last error
	for _, server := range c.servers {
		r, err := c.exchange(ctx, m, server)
		if err != nil {
			last = &upstream.Error{Upstream: Name, Op: op + " @" + server, Retryable: true, Err: err}
			if ctx.Err() != nil {
				break
			}
			continue
		}
		switch r.Rcode {
		case dns.RcodeSuccess, dns.RcodeNameError:
			return &Answer{Rcode: r.Rcode, AD: r.AuthenticatedData, RRs: r.Answer, Server: server}, nil
		}
		last = &upstream.Error{Upstream: Name, Op: op + " @" + server, Err: &RcodeError{Rcode: r.Rcode},
			Reason: dns.RcodeToString[r.Rcode]}
	}
	if ue, ok := last.(*upstream.Error); ok {
		ue.Display = c.display()
	}
	return nil, last
}

// display names the resolvers in a failure's message: each was tried in turn.
func (c *Client) display() string {
	if len(c.servers) > 1 {
		return "the DNS resolvers " + strings.Join(c.servers, ", ")
	}
	return "the DNS resolver " + strings.Join(c.servers, "")
}

// RcodeError is a resolver's refusal to answer.
type RcodeError struct{ Rcode int }

func (e *RcodeError) Error() string { return "answered " + dns.RcodeToString[e.Rcode] }

func (c *Client) exchange(ctx context.Context, m *dns.Msg, server string) (*dns.Msg, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	r, _, err := c.udp.ExchangeContext(ctx, m, server)
	if err == nil && r.Truncated {
		r, _, err = c.tcp.ExchangeContext(ctx, m, server)
	}
	if err != nil {
		return nil, deadline(ctx, err) // miekg/dns also refuses an answer whose id does not match
	}
	return r, nil
}

// deadline makes a network timeout recognisable as a deadline, so the edge answers 504.
func deadline(ctx context.Context, err error) error {
	var ne net.Error
	if ctx.Err() != nil || errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Errorf("%w: %v", context.DeadlineExceeded, err)
	}
	return err
}
