package resolver_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/resolver"
	"github.com/peage/appliance/api/upstream/resolver/resolvertest"
)

func zones(t *testing.T) *resolvertest.Server {
	t.Helper()
	b, err := os.ReadFile("testdata/zones.db")
	if err != nil {
		t.Fatal(err)
	}
	return resolvertest.Start(t, string(b))
}

func client(t *testing.T, servers ...string) *resolver.Client {
	t.Helper()
	c, err := resolver.New(resolver.Config{Resolver: servers[0], Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRecords(t *testing.T) {
	srv := zones(t)
	c := client(t, srv.Addr)
	tests := []struct {
		name  string
		check func(*resolver.Records) string
	}{
		{"corp.test", func(r *resolver.Records) string {
			switch {
			case !r.Exists || len(r.A) != 1 || r.A[0].IP != "192.0.2.10" || r.A[0].TTL != 300:
				return "A"
			case len(r.AAAA) != 1 || r.AAAA[0].IP != "2001:db8::10":
				return "AAAA"
			case len(r.MX) != 5 || r.MX[0].Exchange != "mx1.corp.test" || r.MX[4].Preference != 40:
				return "MX"
			case len(r.NS) != 2 || len(r.CAA) != 3 || r.CAA[1].Value != "pki.goog; cansignhttpexchanges=yes":
				return "NS/CAA"
			case r.SOA == nil || r.SOA.Serial != 2026112201 || r.SOA.RName != "hostmaster.corp.test" || r.SOA.Minimum != 300:
				return "SOA"
			case len(r.TXT) != 16: // larger than the UDP buffer: only the TCP retry brings all of them
				return "TXT"
			case r.NullMX() || r.AD:
				return "flags"
			}
			return ""
		}},
		{"www.chain.test", func(r *resolver.Records) string {
			if len(r.CNAME) != 2 || r.CNAME[0].Target != "www.chain.test.cdn.test" || r.CNAME[1].Name != "www.chain.test.cdn.test" ||
				r.CNAME[1].Target != "edge.cdn.test" || len(r.A) != 2 || len(r.AAAA) != 1 || len(r.MX) != 0 {
				return "chain"
			}
			return ""
		}},
		{"nomail.test", func(r *resolver.Records) string {
			if !r.NullMX() || len(r.A) != 1 {
				return "null MX"
			}
			return ""
		}},
		{"parked.test", func(r *resolver.Records) string {
			if !r.Exists || len(r.A) != 1 || len(r.MX)+len(r.TXT)+len(r.NS) != 0 || r.SOA != nil {
				return "A only"
			}
			return ""
		}},
		{"nowhere.test", func(r *resolver.Records) string {
			if r.Exists || len(r.A) != 0 {
				return "NXDOMAIN"
			}
			return ""
		}},
		{"old.chain.test", func(r *resolver.Records) string {
			if !r.Exists || len(r.CNAME) != 1 || r.CNAME[0].Target != "gone.cdn-retired.test" || len(r.A) != 0 {
				return "dangling CNAME"
			}
			return ""
		}},
		{"corp.test.", func(r *resolver.Records) string { // an empty non-terminal exists with no data
			if !r.Exists {
				return "trailing dot"
			}
			return ""
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := c.Records(context.Background(), tt.name, resolver.AllTypes...)
			if err != nil {
				t.Fatal(err)
			}
			if what := tt.check(r); what != "" {
				t.Errorf("%s: %s wrong: %+v", tt.name, what, r)
			}
		})
	}
	if srv.TCPQueries.Load() == 0 {
		t.Error("no query was retried over TCP after a truncated answer")
	}
}

func TestADBit(t *testing.T) {
	srv := zones(t)
	srv.AD.Store(true)
	r, err := client(t, srv.Addr).Records(context.Background(), "corp.test", dns.TypeA, dns.TypeMX)
	if err != nil || !r.AD {
		t.Fatalf("AD not reported: %+v %v", r, err)
	}
}

func TestResolverFailures(t *testing.T) {
	servFail := func(t testing.TB) string {
		s := zones(t.(*testing.T))
		s.ServFail.Store(true)
		return s.Addr
	}
	// Each address is taken inside its subtest, so that a port released by Unreachable is
	// not handed to a listener of another case.
	tests := []struct {
		name     string
		resolver func(testing.TB) string
		timeout  bool
		servfail bool
	}{
		{"unreachable", resolvertest.Unreachable, false, false},
		{"silent", resolvertest.Silent, true, false},
		{"servfail", servFail, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := resolver.New(resolver.Config{Resolver: tt.resolver(t), Timeout: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Query(context.Background(), "corp.test", dns.TypeA)
			var ue *upstream.Error
			if !errors.As(err, &ue) || ue.Upstream != resolver.Name {
				t.Fatalf("want an upstream error, got %v", err)
			}
			if ue.Timeout() != tt.timeout {
				t.Fatalf("timeout %v, want %v: %v", ue.Timeout(), tt.timeout, err)
			}
			if tt.servfail {
				var re *resolver.RcodeError
				if !errors.As(err, &re) || re.Rcode != dns.RcodeServerFailure {
					t.Fatalf("want SERVFAIL, got %v", err)
				}
			}
		})
	}
}

func TestServers(t *testing.T) {
	tests := []struct {
		in   string
		want string
		bad  bool
	}{
		{in: "9.9.9.9", want: "9.9.9.9:53"},
		{in: "127.0.0.1:5353", want: "127.0.0.1:5353"},
		{in: "2001:db8::1", want: "[2001:db8::1]:53"},
		{in: "[2001:db8::1]:853", want: "[2001:db8::1]:853"},
		{in: "resolver.lan", want: "resolver.lan:53"},
		{in: "https://dns.example/", bad: true},
		{in: "9.9.9.9,", bad: true},
	}
	for _, tt := range tests {
		got, err := resolver.Config{Resolver: tt.in}.Servers()
		if tt.bad {
			if err == nil {
				t.Errorf("%q accepted: %v", tt.in, got)
			}
			continue
		}
		if err != nil || len(got) != 1 || got[0] != tt.want {
			t.Errorf("%q → %v %v, want %s", tt.in, got, err, tt.want)
		}
	}
}

func TestFailover(t *testing.T) {
	srv := zones(t)
	down := resolvertest.Unreachable(t)
	c, err := resolver.New(resolver.Config{Resolver: down + ", " + srv.Addr, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Servers(); len(got) != 2 || got[0] != down {
		t.Fatalf("servers %v", got)
	}
	a, err := c.Query(context.Background(), "corp.test", dns.TypeMX)
	if err != nil || a.Server != srv.Addr || len(a.RRs) != 5 {
		t.Fatalf("no failover to the second resolver: %+v %v", a, err)
	}
}
