// Package egress is the appliance's one outbound policy for targets that a buyer or an agent
// chooses: browser pages and their sub-resources, utility routes that fetch a URL, and proxy
// tunnels. A target is resolved once, every resolved address is checked, and the checked
// address is the one dialled, so a name cannot re-resolve to a forbidden address in between.
package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Blocked is returned when a target is refused. Reason is a short phrase for the caller.
type Blocked struct {
	Host   string
	Addr   netip.Addr
	Reason string
}

func (b *Blocked) Error() string {
	if b.Addr.IsValid() && b.Addr.String() != b.Host {
		return fmt.Sprintf("egress refused: %s (%s) is %s", b.Host, b.Addr, b.Reason)
	}
	return fmt.Sprintf("egress refused: %s is %s", b.Host, b.Reason)
}

// IsBlocked reports whether err is a policy refusal.
func IsBlocked(err error) bool {
	var b *Blocked
	return errors.As(err, &b)
}

// Config holds the policy knobs. Production allows nothing local.
type Config struct {
	// Allow lists HOST:PORT pairs that may be reached even though their address is local
	// (tests, `appliance dev --allow-egress`). HOST may be a name or an address.
	Allow []string
	// Self lists extra addresses or prefixes of the appliance itself (its public IP).
	Self []string
	// Resolver defaults to net.DefaultResolver.
	Resolver *net.Resolver
	// DialTimeout bounds one connection attempt (default 10 s).
	DialTimeout time.Duration
	// Learned holds the public addresses found at run time (the exit check). Policies of one
	// process share one set, so what proxyd's check learns the browser farm refuses too.
	// nil: the policy keeps its own.
	Learned *Learned
	// InterfaceRefresh is how long a reading of the box's interface addresses is trusted
	// before it is read again (default 30 s): a home line's IPv6 prefix and DHCP lease change
	// while the appliance runs.
	InterfaceRefresh time.Duration
	// Interfaces lists the box's interface addresses (default net.InterfaceAddrs).
	Interfaces func() ([]net.Addr, error)
	// Now is the clock of the interface refresh (default time.Now).
	Now func() time.Time
}

// Policy checks and dials targets. It is safe for concurrent use.
type Policy struct {
	allow    map[string]bool
	self     []netip.Prefix
	learned  *Learned
	resolver *net.Resolver
	dialer   net.Dialer

	// ifaceAddrs lists the box's interface addresses (net.InterfaceAddrs; tests replace it).
	ifaceAddrs func() ([]net.Addr, error)
	now        func() time.Time
	refresh    time.Duration
	// iface is the latest reading of the interfaces: the hot path only loads it; one caller
	// at a time re-reads a stale one while the others keep using it.
	iface   atomic.Pointer[ifaceReading]
	ifaceMu sync.Mutex
}

type ifaceReading struct {
	at       time.Time
	prefixes []netip.Prefix
}

// DefaultInterfaceRefresh is how long an interface reading is trusted by default.
const DefaultInterfaceRefresh = 30 * time.Second

// New builds a policy; an unparsable Self entry or Allow entry is an error naming it.
func New(cfg Config) (*Policy, error) {
	p := &Policy{allow: map[string]bool{}, resolver: cfg.Resolver, ifaceAddrs: cfg.Interfaces,
		learned: cfg.Learned, now: cfg.Now, refresh: cfg.InterfaceRefresh}
	if p.resolver == nil {
		p.resolver = net.DefaultResolver
	}
	if p.ifaceAddrs == nil {
		p.ifaceAddrs = net.InterfaceAddrs
	}
	if p.learned == nil {
		p.learned = &Learned{}
	}
	if p.now == nil {
		p.now = time.Now
	}
	if p.refresh <= 0 {
		p.refresh = DefaultInterfaceRefresh
	}
	p.dialer.Timeout = cfg.DialTimeout
	if p.dialer.Timeout == 0 {
		p.dialer.Timeout = 10 * time.Second
	}
	for _, a := range cfg.Allow {
		host, port, err := net.SplitHostPort(a)
		if err != nil || port == "" {
			return nil, fmt.Errorf("egress allow entry %q: want HOST:PORT", a)
		}
		p.allow[strings.ToLower(net.JoinHostPort(host, port))] = true
	}
	for _, s := range cfg.Self {
		pf, err := parsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("egress self entry %q: %w", s, err)
		}
		p.self = append(p.self, pf)
	}
	return p, nil
}

func parsePrefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		return netip.ParsePrefix(s)
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// allowed reports whether host:port is explicitly allowed (by name or by address).
func (p *Policy) allowed(host string, addr netip.Addr, port int) bool {
	if len(p.allow) == 0 {
		return false
	}
	ps := strconv.Itoa(port)
	if p.allow[strings.ToLower(net.JoinHostPort(host, ps))] {
		return true
	}
	return addr.IsValid() && p.allow[net.JoinHostPort(addr.String(), ps)]
}

// Resolve resolves host once and returns the address to dial, or a *Blocked error.
// Every address the name resolves to must pass; one forbidden answer refuses the target.
func (p *Policy) Resolve(ctx context.Context, host string, port int) (netip.Addr, error) {
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if host == "" {
		return netip.Addr{}, &Blocked{Host: host, Reason: "an empty host"}
	}
	if port <= 0 || port > 65535 {
		return netip.Addr{}, &Blocked{Host: host, Reason: "an invalid port"}
	}
	if m, ok := mappedLiteral(host); ok {
		return netip.Addr{}, &Blocked{Host: host, Addr: m, Reason: p.classify(m)}
	}
	if a, ok := ParseIPLoose(host); ok {
		if p.isSelf(a) {
			return netip.Addr{}, &Blocked{Host: host, Addr: a, Reason: reasonSelf}
		}
		if p.allowed(host, a, port) {
			return a, nil
		}
		if r := p.classify(a); r != "" {
			return netip.Addr{}, &Blocked{Host: host, Addr: a, Reason: r}
		}
		return a, nil
	}
	lower := strings.ToLower(host)
	if lower == "localhost" || strings.HasSuffix(lower, ".localhost") {
		if p.allowed(host, netip.Addr{}, port) {
			return netip.MustParseAddr("127.0.0.1"), nil
		}
		return netip.Addr{}, &Blocked{Host: host, Reason: "loopback"}
	}
	ips, err := p.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("resolve %s: %w", host, err)
	}
	if len(ips) == 0 {
		return netip.Addr{}, fmt.Errorf("resolve %s: no address", host)
	}
	if p.allowed(host, netip.Addr{}, port) {
		a := ips[0].Unmap()
		if p.isSelf(a) {
			return netip.Addr{}, &Blocked{Host: host, Addr: a, Reason: reasonSelf}
		}
		return a, nil
	}
	var pick netip.Addr
	for _, a := range ips {
		a = a.Unmap()
		if r := p.classify(a); r != "" {
			return netip.Addr{}, &Blocked{Host: host, Addr: a, Reason: r}
		}
		if !pick.IsValid() || (pick.Is6() && a.Is4()) {
			pick = a
		}
	}
	return pick, nil
}

// DialContext is a drop-in dialer (http.Transport.DialContext) that applies the policy.
func (p *Policy) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, &Blocked{Host: host, Reason: "an invalid port"}
	}
	addr, err := p.Resolve(ctx, host, port)
	if err != nil {
		return nil, err
	}
	switch network {
	case "tcp4", "tcp6":
		network = "tcp"
	}
	return p.dialer.DialContext(ctx, network, netip.AddrPortFrom(addr, uint16(port)).String())
}

// Check reports why addr is refused, or "" when it may be reached.
// An IPv4-mapped address is refused as such: the guard's callers dial what they checked, and
// a mapped literal is nobody's web server.
func (p *Policy) Check(addr netip.Addr) string { return p.classify(addr) }

// CheckURL applies CheckLiteral to an absolute URL's host and port, as an error that
// completes "url ..." (a parameter check).
func (p *Policy) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("must be an absolute http or https URL")
	}
	port := 443
	if u.Scheme == "http" {
		port = 80
	}
	if n, err := strconv.Atoi(u.Port()); err == nil {
		port = n
	}
	if why := p.CheckLiteral(u.Hostname(), port); why != "" {
		return fmt.Errorf("is refused by the egress policy (%s)", why)
	}
	return nil
}

// CheckLiteral is the part of the policy decidable without DNS, for checking a request's URL
// before it is paid for: why a host that is an address literal (in any spelling) or a
// localhost name is refused at port, "" when it is allowed or is a name to resolve later.
func (p *Policy) CheckLiteral(host string, port int) string {
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	lh := strings.ToLower(host)
	if lh == "localhost" || strings.HasSuffix(lh, ".localhost") {
		if p.allowed(host, netip.Addr{}, port) {
			return ""
		}
		return "loopback"
	}
	if m, ok := mappedLiteral(host); ok {
		return p.classify(m)
	}
	a, ok := ParseIPLoose(host)
	if !ok {
		return ""
	}
	if p.isSelf(a) {
		return reasonSelf
	}
	if p.allowed(host, a, port) {
		return ""
	}
	return p.Check(a)
}

// forbidden is every range of IANA's special-purpose address registries
// (https://www.iana.org/assignments/iana-ipv4-special-registry and iana-ipv6-special-registry,
// checked 2026-11-28 against the recorded tables of CPython's ipaddress module) whose
// addresses are not globally reachable, plus the deprecated and identifier-only ranges that no
// web server answers on. The globally reachable anycast services listed there
// (192.31.196.0/24 and 192.175.48.0/24 AS112, 192.52.193.0/24 AMT, 2001:1::1-3, 2001:3::/32,
// 2001:4:112::/48) stay reachable. IPv6 outside 2000::/3, the one block IANA allocates as
// global unicast, is refused after this list (classify).
// ops/nftables/peage.nft holds the kernel's copy: change both together.
var forbidden = []struct {
	prefix netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "an unspecified address"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("10.0.0.0/8"), "a private address"},
	{netip.MustParsePrefix("172.16.0.0/12"), "a private address"},
	{netip.MustParsePrefix("192.168.0.0/16"), "a private address"},
	{netip.MustParsePrefix("169.254.169.254/32"), "the cloud metadata address"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT (shared) space"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol space"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation space"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking space"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation space"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation space"},
	{netip.MustParsePrefix("192.88.99.0/24"), "6to4 relay anycast"}, // deprecated, RFC 7526
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved space"},
	{netip.MustParsePrefix("::/128"), "an unspecified address"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("::ffff:0:0/96"), reasonMapped},
	{netip.MustParsePrefix("::/96"), "an IPv4-compatible IPv6 address"},           // deprecated, RFC 4291
	{netip.MustParsePrefix("::ffff:0:0:0/96"), "an IPv4-translated IPv6 address"}, // RFC 2765
	{netip.MustParsePrefix("100::/64"), "discard-only space"},                     // RFC 6666
	{netip.MustParsePrefix("100:0:0:1::/64"), "the dummy IPv6 prefix"},            // RFC 9780
	{netip.MustParsePrefix("2001:2::/48"), "benchmarking space"},                  // RFC 5180
	{netip.MustParsePrefix("2001:10::/28"), "ORCHID identifiers"},                 // deprecated, RFC 4843
	{netip.MustParsePrefix("2001:20::/28"), "ORCHIDv2 identifiers"},               // RFC 7343
	{netip.MustParsePrefix("2001:30::/28"), "DRIP entity tags"},                   // RFC 9374
	{netip.MustParsePrefix("3fff::/20"), "documentation space"},                   // RFC 9637
	{netip.MustParsePrefix("5f00::/16"), "SRv6 segment identifiers"},              // RFC 9602
	{netip.MustParsePrefix("64:ff9b::/96"), "a NAT64 address"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a NAT64 address"},
	{netip.MustParsePrefix("2002::/16"), "a 6to4 address"},
	{netip.MustParsePrefix("2001::/32"), "a Teredo address"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation space"},
	{netip.MustParsePrefix("fd00:ec2::254/128"), "the cloud metadata address"},
	{netip.MustParsePrefix("fc00::/7"), "a unique-local (ULA) address"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

func (p *Policy) classify(a netip.Addr) string {
	if !a.IsValid() {
		return "not an address"
	}
	if a.Zone() != "" {
		return "a zoned (link-local) address"
	}
	if a.Is4In6() {
		// Named for its IPv4 address when that is refused (a mapped loopback is loopback).
		if r := p.classify(a.Unmap()); r != "" {
			return r
		}
		return reasonMapped
	}
	for _, f := range forbidden {
		if f.prefix.Contains(a) {
			return f.reason
		}
	}
	if a.Is6() && !globalUnicast6.Contains(a) {
		return "reserved IPv6 space"
	}
	if p.isSelf(a) {
		return reasonSelf
	}
	for _, s := range p.interfaceAddrs() {
		if s.Contains(a) {
			return reasonSelf
		}
	}
	return ""
}

const reasonSelf = "the appliance itself"

const reasonMapped = "an IPv4-mapped IPv6 address"

// mappedLiteral returns an IPv4-mapped IPv6 literal (::ffff:a.b.c.d), which ParseIPLoose
// unmaps. Resolver answers are unmapped without this check: Go hands A records over in that
// form.
func mappedLiteral(host string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(host)
	return a, err == nil && a.Is4In6()
}

// globalUnicast6 is the IPv6 global unicast block (RFC 4291 §2.4, IANA's IPv6 address space
// registry): everything outside it is reserved by the IETF, multicast or local.
var globalUnicast6 = netip.MustParsePrefix("2000::/3")

// isSelf reports the appliance's public addresses: configured (egress.self) and learned at
// exit checks. They are refused even when an allow entry names them: a connection to the
// box's own public address hairpins into the home router and its port-forwarded LAN hosts,
// which no test fixture needs.
func (p *Policy) isSelf(a netip.Addr) bool {
	for _, s := range p.self {
		if s.Contains(a) {
			return true
		}
	}
	return p.learned.Contains(a)
}

// LearnSelf adds a public address of the appliance found at run time (the exit check's echo
// answer) to every policy sharing this one's learned set. Loopback and unspecified addresses
// are ignored: only a dev exit on loopback reports one, loopback is refused anyway, and
// learning it would cancel the allow entries dev and the tests rely on.
func (p *Policy) LearnSelf(a netip.Addr) bool { return p.learned.Add(a) }

// Learned is a set of the appliance's own public addresses learned at run time, shared by
// the policies of one process. The newest MaxLearned are kept: a home line's address
// changes, and an old one is soon someone else's. It is safe for concurrent use; reading is
// one atomic load.
type Learned struct {
	mu    sync.Mutex
	addrs atomic.Pointer[[]netip.Addr] // newest last; replaced, never modified
}

// MaxLearned bounds a Learned set.
const MaxLearned = 16

// Add records a; it reports whether a was new.
func (l *Learned) Add(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsUnspecified() {
		return false
	}
	a = a.WithZone("")
	if l.Contains(a) {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var cur []netip.Addr
	if p := l.addrs.Load(); p != nil {
		cur = *p
	}
	next := append(append(make([]netip.Addr, 0, len(cur)+1), cur...), a)
	if len(next) > MaxLearned {
		next = next[len(next)-MaxLearned:]
	}
	l.addrs.Store(&next)
	return true
}

// Contains reports whether a was learned.
func (l *Learned) Contains(a netip.Addr) bool {
	p := l.addrs.Load()
	if p == nil {
		return false
	}
	a = a.Unmap().WithZone("")
	for _, x := range *p {
		if x == a {
			return true
		}
	}
	return false
}

// Addrs lists the learned addresses, oldest first.
func (l *Learned) Addrs() []netip.Addr {
	if p := l.addrs.Load(); p != nil {
		return append([]netip.Addr(nil), (*p)...)
	}
	return nil
}

// interfaceAddrs are the box's own addresses and the networks it sits on (the home LAN); a
// public address on an interface also counts as the appliance itself. The on-link network
// matters most for IPv6: a home's devices have global addresses in the same prefix as the box,
// which no private-range rule catches. Addresses and delegated prefixes change while the
// appliance runs (DHCP, prefix delegation), so a reading older than the refresh period is
// taken again; a failed reading keeps the previous one.
func (p *Policy) interfaceAddrs() []netip.Prefix {
	r := p.iface.Load()
	if r != nil && p.now().Sub(r.at) < p.refresh {
		return r.prefixes
	}
	if r != nil {
		// Stale: one caller re-reads, the others go on with the previous reading.
		if !p.ifaceMu.TryLock() {
			return r.prefixes
		}
	} else {
		p.ifaceMu.Lock()
	}
	defer p.ifaceMu.Unlock()
	if cur := p.iface.Load(); cur != r {
		return cur.prefixes
	}
	next := &ifaceReading{at: p.now()}
	addrs, err := p.ifaceAddrs()
	switch {
	case err != nil && r != nil:
		next.prefixes = r.prefixes
	case err == nil:
		next.prefixes = interfacePrefixes(addrs)
	}
	p.iface.Store(next)
	return next.prefixes
}

func interfacePrefixes(addrs []net.Addr) []netip.Prefix {
	var out []netip.Prefix
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, ok := netip.AddrFromSlice(n.IP)
		if !ok {
			continue
		}
		ip = ip.Unmap()
		out = append(out, netip.PrefixFrom(ip, ip.BitLen()))
		ones, bits := n.Mask.Size()
		if bits == 0 || ip.IsLoopback() {
			continue
		}
		if ip.Is4() && bits == 128 {
			ones -= 96
		}
		// A point-to-point or host route (/32, /128) names no LAN; a very short prefix would
		// refuse half the internet, so only plausible LAN sizes are taken.
		if ones >= 8 && ones < ip.BitLen() && !(ip.Is6() && ones < 48) {
			if pf, err := ip.Prefix(ones); err == nil {
				out = append(out, pf)
			}
		}
	}
	return out
}

// ParseIPLoose parses an IP literal including the legacy IPv4 spellings that resolvers and
// browsers accept (decimal 2130706433, hex 0x7f000001, octal 0177.0.0.1, short 127.1), so a
// disguised local address is recognised as an address rather than looked up as a name.
func ParseIPLoose(host string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap(), true
	}
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, s := range parts {
		if s == "" {
			return netip.Addr{}, false
		}
		base := 10
		switch {
		case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
			base, s = 16, s[2:]
			if s == "" {
				s = "0"
			}
		case len(s) > 1 && s[0] == '0':
			base, s = 8, s[1:]
		}
		v, err := strconv.ParseUint(s, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	var n uint64
	last := len(vals) - 1
	for i, v := range vals[:last] {
		if v > 255 {
			return netip.Addr{}, false
		}
		n |= v << (8 * (3 - i))
	}
	if vals[last] >= 1<<(8*(4-last)) {
		return netip.Addr{}, false
	}
	n |= vals[last]
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

// Transport is an HTTP transport whose every connection (including each redirect hop and
// every re-dial) goes through the policy. Environment proxy variables are ignored on purpose.
func (p *Policy) Transport() *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           p.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          64,
		IdleConnTimeout:       60 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
	}
}
