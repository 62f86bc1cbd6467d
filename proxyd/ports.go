package proxyd

import (
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/peage/appliance/internal/egress"
)

// portRule decides which destination ports a tunnel may reach: the configured ports on any
// host, and each explicitly allowed HOST:PORT (allow_egress, `appliance dev --allow-egress`) on
// that host only. The exact targets pass here because the egress policy already lets them
// through although local; without this a developer could reach a local server from a page but
// not from a proxy package, while opening the whole port would open it on every host.
type portRule struct {
	ports []int
	exact map[string]bool // lower-case HOST:PORT, spelt as egress.Config.Allow matches it
}

func newPortRule(cfg Config) portRule {
	r := portRule{ports: cfg.Ports, exact: map[string]bool{}}
	for _, a := range cfg.AllowEgress {
		if h, p, err := net.SplitHostPort(a); err == nil {
			r.exact[strings.ToLower(net.JoinHostPort(h, p))] = true
		}
	}
	return r
}

// open reports whether a tunnel to host:port passes the port rule. Port 25 never does.
func (r portRule) open(host string, port int) bool {
	if slices.Contains(neverPorts, port) {
		return false
	}
	if slices.Contains(r.ports, port) {
		return true
	}
	if len(r.exact) == 0 {
		return false
	}
	// The same spellings the egress policy accepts for an allowed target: the host as written
	// (case and a trailing dot aside), or the address an IP literal in any notation denotes.
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	ps := strconv.Itoa(port)
	if r.exact[strings.ToLower(net.JoinHostPort(host, ps))] {
		return true
	}
	a, ok := egress.ParseIPLoose(host)
	return ok && r.exact[net.JoinHostPort(a.String(), ps)]
}
