package nftables

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/internal/firewall"
	"github.com/peage/appliance/internal/testenv"
)

// The users of the test box, added to a private copy of /etc/passwd that only the box's
// mount namespace sees (nft resolves the ruleset's user names through it).
const (
	uidProxyd = 64001 // peage-proxyd: confined
	uidAPI    = 64002 // peage-api: confined, loopback allowed
	uidOther  = 64003 // any other user of the box: not confined
)

func TestMain(m *testing.M) {
	switch os.Getenv("NFT_TEST_HELPER") {
	case "listen":
		os.Exit(helperListen(os.Args[1:]))
	case "dial":
		os.Exit(helperDial(os.Args[1], os.Args[2]))
	case "sync":
		v4, v6, err := firewall.Sync(context.Background(), "nft")
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println(v4, v6)
		os.Exit(0)
	}
	flag.Parse()
	testenv.MainNeeds(testenv.Netns)
	os.Exit(m.Run())
}

// helperListen accepts and closes connections on every address, after printing "ready".
func helperListen(addrs []string) int {
	for _, a := range addrs {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			fmt.Println("listen:", err)
			return 1
		}
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
	}
	fmt.Println("ready")
	select {}
}

// helperDial prints ok, timeout or the error of one connection attempt from src (or any).
func helperDial(src, addr string) int {
	d := net.Dialer{Timeout: 1500 * time.Millisecond}
	if src != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(src)}
	}
	c, err := d.Dial("tcp", addr)
	var ne net.Error
	switch {
	case err == nil:
		c.Close()
		fmt.Println("ok")
	case errors.As(err, &ne) && ne.Timeout():
		fmt.Println("timeout")
	default:
		fmt.Println("refused:", err)
	}
	return 0
}

// lab is two network namespaces joined by a veth pair: "box", which loads the ruleset, and
// "world", which plays the home router, other LAN hosts and the internet.
type lab struct {
	t                    *testing.T
	box, world           string
	probe, passwd, group string
}

func run(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// inBox runs a command in the box's namespaces with the test users visible.
func (l *lab) inBox(args ...string) *exec.Cmd {
	sh := `mount --bind "$1" /etc/passwd && mount --bind "$2" /etc/group && shift 2 && exec "$@"`
	return exec.Command("ip", append([]string{"netns", "exec", l.box, "unshare", "--mount", "--", "sh", "-c", sh, "sh", l.passwd, l.group}, args...)...)
}

func (l *lab) inWorld(args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", l.world}, args...)...)
}

// listen starts the probe listening in a namespace until the test ends.
func (l *lab) listen(cmd *exec.Cmd) {
	l.t.Helper()
	cmd.Env = append(os.Environ(), "NFT_TEST_HELPER=listen")
	out, err := cmd.StdoutPipe()
	if err != nil {
		l.t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		l.t.Fatal(err)
	}
	l.t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		l.t.Fatalf("listener: %q", line)
	}
	go io.Copy(io.Discard, out)
}

// dial reports what a connection from uid (as that user) in the box, or from src in the
// world, to addr gets: "ok", "timeout" or "refused: ...".
func (l *lab) dial(cmd *exec.Cmd) string {
	l.t.Helper()
	cmd.Env = append(os.Environ(), "NFT_TEST_HELPER=dial")
	out, err := cmd.CombinedOutput()
	if err != nil {
		l.t.Fatalf("%v: %v\n%s", cmd.Args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func (l *lab) dialFromBox(uid int, addr string) string {
	if uid == 0 {
		return l.dial(l.inBox(l.probe, "", addr))
	}
	id := strconv.Itoa(uid)
	return l.dial(l.inBox("setpriv", "--reuid", id, "--regid", id, "--clear-groups", l.probe, "", addr))
}

// specialRanges6 is a host in each IPv6 range of IANA's special-purpose registry that is
// not globally reachable and that a packet can be routed to (the egress guard's list), and in
// the space outside 2000::/3, each given to the world's side of the link.
var specialRanges6 = []struct{ name, addr string }{
	{"IPv4-compatible", "::203.0.113.11"},
	{"IPv4-translated", "::ffff:0:203.0.113.12"},
	{"discard-only", "100::1"},
	{"the dummy prefix", "100:0:0:1::1"},
	{"benchmarking v6", "2001:2::1"},
	{"ORCHID", "2001:10::1"},
	{"ORCHIDv2", "2001:20::1"},
	{"DRIP entity tags", "2001:30::1"},
	{"documentation 3fff::/20", "3fff::1"},
	{"SRv6 segment identifiers", "5f00::1"},
	{"reserved 4000::/2", "4000::1"},
	{"Teredo", "2001::1"},
	{"6to4", "2002:cb00:710b::1"},
}

func newLab(t *testing.T) *lab {
	if os.Geteuid() != 0 {
		t.Skip("needs root: network namespaces, mounts and nft (the CI and build machines run as root)")
	}
	if _, err := exec.LookPath("nft"); err != nil {
		if _, err := os.Stat("/usr/sbin/nft"); err != nil {
			t.Fatal("nft is missing: run ops/setup.sh (ops/setup.d/nftables.sh)")
		}
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	l := &lab{t: t, box: fmt.Sprintf("peagefw-box-%d", os.Getpid()), world: fmt.Sprintf("peagefw-world-%d", os.Getpid()),
		probe: filepath.Join(dir, "probe"), passwd: filepath.Join(dir, "passwd"), group: filepath.Join(dir, "group")}
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.probe, self, 0o755); err != nil {
		t.Fatal(err)
	}
	passwd, _ := os.ReadFile("/etc/passwd")
	group, _ := os.ReadFile("/etc/group")
	for name, id := range map[string]int{"peage-proxyd": uidProxyd, "peage-api": uidAPI, "someone-else": uidOther} {
		passwd = fmt.Appendf(passwd, "%s:x:%d:%d::/:/usr/sbin/nologin\n", name, id, id)
		group = fmt.Appendf(group, "%s:x:%d:\n", name, id)
	}
	os.WriteFile(l.passwd, passwd, 0o644)
	os.WriteFile(l.group, group, 0o644)

	for _, ns := range []string{l.box, l.world} {
		run(t, "ip", "netns", "add", ns)
		t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	}
	run(t, "ip", "link", "add", "veth-b", "netns", l.box, "type", "veth", "peer", "name", "veth-w", "netns", l.world)
	for _, c := range [][]string{
		{l.box, "ip", "link", "set", "lo", "up"},
		{l.box, "ip", "link", "set", "veth-b", "up"},
		{l.box, "ip", "addr", "add", "192.168.1.50/24", "dev", "veth-b"},
		{l.box, "ip", "addr", "add", "fd00:1::50/64", "dev", "veth-b", "nodad"},
		{l.box, "ip", "addr", "add", "203.0.113.50/32", "dev", "lo"}, // its public address
		{l.box, "ip", "route", "add", "default", "via", "192.168.1.1"},
		{l.box, "ip", "-6", "route", "add", "default", "via", "fd00:1::1"},
		{l.world, "ip", "link", "set", "lo", "up"},
		{l.world, "ip", "link", "set", "veth-w", "up"},
		{l.world, "ip", "addr", "add", "192.168.1.1/24", "dev", "veth-w"},  // the router
		{l.world, "ip", "addr", "add", "192.168.1.20/24", "dev", "veth-w"}, // a LAN host
		{l.world, "ip", "addr", "add", "10.1.2.3/32", "dev", "veth-w"},
		{l.world, "ip", "addr", "add", "172.16.5.5/32", "dev", "veth-w"},
		{l.world, "ip", "addr", "add", "100.64.0.1/32", "dev", "veth-w"},   // the ISP's CGNAT side
		{l.world, "ip", "addr", "add", "169.254.9.9/32", "dev", "veth-w"},  // link-local
		{l.world, "ip", "addr", "add", "203.0.113.10/32", "dev", "veth-w"}, // the internet
		{l.world, "ip", "addr", "add", "fd00:1::1/64", "dev", "veth-w", "nodad"},
		{l.world, "ip", "addr", "add", "fd00:1::20/64", "dev", "veth-w", "nodad"},
		{l.world, "ip", "addr", "add", "2001:db8:ff::10/128", "dev", "veth-w", "nodad"}, // the IPv6 internet
		{l.world, "ip", "addr", "add", "192.88.99.1/32", "dev", "veth-w"},               // 6to4 relay anycast
		{l.world, "ip", "-6", "route", "add", "default", "via", "fd00:1::50"},
	} {
		run(t, append([]string{"ip", "netns", "exec"}, c...)...)
	}
	// One host in each special-purpose IPv6 range the ruleset refuses (specialRanges6).
	for _, r := range specialRanges6 {
		c := []string{l.world, "ip", "addr", "add", r.addr + "/128", "dev", "veth-w", "nodad"}
		run(t, append([]string{"ip", "netns", "exec"}, c...)...)
	}
	return l
}

// TestRulesetParses is `nft -c` of the shipped file with its users present.
func TestRulesetParses(t *testing.T) {
	l := newLab(t)
	if out, err := l.inBox("nft", "-c", "-f", "peage.nft").CombinedOutput(); err != nil {
		t.Fatalf("nft -c: %v\n%s", err, out)
	}
}

// TestConfinedUsersReachOnlyTheInternet loads the ruleset into the box and connects from
// each user to the router, LAN hosts, every private range, the box itself and the internet.
// A destination refused to a confined user is reached by an unconfined one, so the refusal
// is the firewall's.
func TestConfinedUsersReachOnlyTheInternet(t *testing.T) {
	l := newLab(t)
	l.listen(l.inWorld(l.probe, "[::]:8080"))
	l.listen(l.inBox(l.probe, "[::]:9090", "[::]:53", "[::]:8118"))
	if out, err := l.inBox("nft", "-f", "peage.nft").CombinedOutput(); err != nil {
		t.Fatalf("nft -f: %v\n%s", err, out)
	}
	const ok, refused = "ok", "refused"
	cases := []struct {
		target, addr     string
		proxyd, api, any string // what peage-proxyd, peage-api and an unconfined user get
	}{
		{"the router", "192.168.1.1:8080", refused, refused, ok},
		{"a LAN host", "192.168.1.20:8080", refused, refused, ok},
		{"10/8", "10.1.2.3:8080", refused, refused, ok},
		{"172.16/12", "172.16.5.5:8080", refused, refused, ok},
		{"CGNAT", "100.64.0.1:8080", refused, refused, ok},
		{"link-local", "169.254.9.9:8080", refused, refused, ok},
		{"the router over ULA", "[fd00:1::1]:8080", refused, refused, ok},
		{"a LAN host over ULA", "[fd00:1::20]:8080", refused, refused, ok},
		{"the box's public address", "203.0.113.50:9090", refused, ok, ok},
		{"the box's LAN address", "192.168.1.50:9090", refused, ok, ok},
		{"the box's ULA address", "[fd00:1::50]:9090", refused, ok, ok},
		{"loopback", "127.0.0.1:9090", refused, ok, ok},
		{"the proxy's own port on loopback", "127.0.0.1:8118", ok, ok, ok},
		{"the proxy's own port on the LAN address", "192.168.1.50:8118", refused, ok, ok},
		{"the resolver stub", "127.0.0.53:53", ok, ok, ok},
		{"6to4 relay anycast", "192.88.99.1:8080", refused, refused, ok},
		{"the internet", "203.0.113.10:8080", ok, ok, ok},
		{"the IPv6 internet", "[2001:db8:ff::10]:8080", ok, ok, ok},
	}
	for _, r := range specialRanges6 {
		cases = append(cases, struct {
			target, addr     string
			proxyd, api, any string
		}{r.name, "[" + r.addr + "]:8080", refused, refused, ok})
	}
	for _, tc := range cases {
		t.Run(tc.target, func(t *testing.T) {
			for _, u := range []struct {
				name string
				uid  int
				want string
			}{{"peage-proxyd", uidProxyd, tc.proxyd}, {"peage-api", uidAPI, tc.api}, {"someone-else", uidOther, tc.any}, {"root", 0, tc.any}} {
				got := l.dialFromBox(u.uid, tc.addr)
				if testing.Verbose() && u.uid == uidProxyd {
					t.Logf("%s: %s", tc.addr, got)
				}
				if !strings.HasPrefix(got, u.want) {
					t.Errorf("%s → %s (%s): %s, want %s", u.name, tc.target, tc.addr, got, u.want)
				}
			}
		})
	}
}

// TestInputPolicy connects to the box from the LAN and from the internet: the API and proxy
// ports are open to both, the operator port to the LAN only, anything else to neither.
func TestInputPolicy(t *testing.T) {
	l := newLab(t)
	l.listen(l.inBox(l.probe, "[::]:8402", "[::]:8118", "[::]:8403", "[::]:9090", "[::]:7422", "[::]:7423"))
	if out, err := l.inBox("nft", "-f", "peage.nft").CombinedOutput(); err != nil {
		t.Fatalf("nft -f: %v\n%s", err, out)
	}
	cases := []struct {
		name, src, addr, want string
	}{
		{"API from the internet", "203.0.113.10", "192.168.1.50:8402", "ok"},
		{"proxy from the internet", "203.0.113.10", "192.168.1.50:8118", "ok"},
		{"operator port from the internet", "203.0.113.10", "192.168.1.50:8403", "timeout"},
		{"operator port from the LAN", "192.168.1.20", "192.168.1.50:8403", "ok"},
		{"another port from the LAN", "192.168.1.20", "192.168.1.50:9090", "timeout"},
		{"operator port from the LAN over ULA", "fd00:1::20", "[fd00:1::50]:8403", "ok"},
		{"operator port from the IPv6 internet", "2001:db8:ff::10", "[fd00:1::50]:8403", "timeout"},
		{"proxy from the IPv6 internet", "2001:db8:ff::10", "[fd00:1::50]:8118", "ok"},
		{"another port from the IPv6 internet", "2001:db8:ff::10", "[fd00:1::50]:9090", "timeout"},
		// A fleet gateway's leaf and enrolment listeners: boxes dial them from anywhere.
		{"fleet leaf port from the internet", "203.0.113.10", "192.168.1.50:7422", "ok"},
		{"fleet enrolment port from the IPv6 internet", "2001:db8:ff::10", "[fd00:1::50]:7423", "ok"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := l.dial(l.inWorld(l.probe, tc.src, tc.addr)); !strings.HasPrefix(got, tc.want) {
				t.Errorf("%s → %s: %s, want %s", tc.src, tc.addr, got, tc.want)
			}
		})
	}
}

// TestLANPrefixFollowed: the home LAN's global IPv6 prefix is no fixed range, so before
// `appliance firewall sync` a confined user reaches a LAN host by its global address; after
// it, not (and the internet still), and the operator port opens to that prefix.
func TestLANPrefixFollowed(t *testing.T) {
	l := newLab(t)
	run(t, "ip", "netns", "exec", l.box, "ip", "addr", "add", "2001:db8:1::50/64", "dev", "veth-b", "nodad")
	run(t, "ip", "netns", "exec", l.world, "ip", "addr", "add", "2001:db8:1::20/64", "dev", "veth-w", "nodad")
	l.listen(l.inWorld(l.probe, "[::]:8080"))
	l.listen(l.inBox(l.probe, "[::]:8403"))
	if out, err := l.inBox("nft", "-f", "peage.nft").CombinedOutput(); err != nil {
		t.Fatalf("nft -f: %v\n%s", err, out)
	}
	const lanHost, internet = "[2001:db8:1::20]:8080", "[2001:db8:ff::10]:8080"
	if got := l.dialFromBox(uidProxyd, lanHost); got != "ok" {
		t.Fatalf("before the sync peage-proxyd → LAN host by its global address: %s (the gap the sync closes)", got)
	}
	for i := range 2 { // twice: the sync replaces the sets, it never fails on what is there
		sync := l.inBox(l.probe)
		sync.Env = append(os.Environ(), "NFT_TEST_HELPER=sync")
		out, err := sync.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "2001:db8:1::/64") {
			t.Fatalf("sync %d: %v: %s", i+1, err, out)
		}
	}
	for _, c := range []struct {
		who  string
		uid  int
		addr string
		want string
	}{
		{"peage-proxyd", uidProxyd, lanHost, "refused"},
		{"peage-api", uidAPI, lanHost, "refused"},
		{"someone-else", uidOther, lanHost, "ok"},
		{"peage-proxyd", uidProxyd, internet, "ok"},
	} {
		if got := l.dialFromBox(c.uid, c.addr); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s → %s: %s, want %s", c.who, c.addr, got, c.want)
		}
	}
	if got := l.dial(l.inWorld(l.probe, "2001:db8:1::20", "[2001:db8:1::50]:8403")); got != "ok" {
		t.Errorf("operator port from the LAN's global prefix: %s", got)
	}
	if got := l.dial(l.inWorld(l.probe, "2001:db8:ff::10", "[2001:db8:1::50]:8403")); got != "timeout" {
		t.Errorf("operator port from the internet: %s", got)
	}
}
