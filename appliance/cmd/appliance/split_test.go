package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/peage/appliance/internal/credential"
	"github.com/peage/appliance/internal/freeport"
	"github.com/peage/appliance/internal/testenv"
	"github.com/peage/appliance/proxyd"
	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/client"
	"github.com/peage/appliance/settle/devchain"
	"github.com/peage/appliance/settle/pay"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// TestMain removes the binary applianceBinary built.
func TestMain(m *testing.M) {
	code := m.Run()
	if builtBin != "" {
		_ = os.RemoveAll(filepath.Dir(builtBin))
	}
	os.Exit(code)
}

// applianceBinary builds this command once per test run, as the units run it.
func applianceBinary(t *testing.T) string {
	t.Helper()
	testenv.Needs(t, testenv.Builds)
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "appliance-bin-")
		if err != nil {
			buildErr = err
			return
		}
		goTool, err := exec.LookPath("go")
		if err != nil {
			//lint:ignore SA1019 the test binary runs where it was built: its GOROOT is this machine's
			goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		builtBin = filepath.Join(dir, "appliance")
		out, err := exec.Command(goTool, "build", "-o", builtBin, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// daemon is one `appliance <name>` process started as its unit would start it: its own state
// directory and credentials, and NOTIFY_SOCKET/WATCHDOG_USEC as systemd sets them.
type daemon struct {
	name   string
	cmd    *exec.Cmd
	notify *net.UnixConn
	stderr *strings.Builder
	exited chan error

	mu   sync.Mutex
	seen []string // notifications received, in order
	got  chan string
}

// watchdogUSec makes the daemons check their liveness and ping every half second.
const watchdogUSec = "1000000"

func startDaemon(t *testing.T, bin, name, config, dir string, creds map[string]string) *daemon {
	t.Helper()
	notifyPath := filepath.Join(dir, "notify-"+name)
	nc, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: notifyPath, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	credDir := filepath.Join(dir, "creds-"+name)
	if err := os.MkdirAll(credDir, 0o700); err != nil {
		t.Fatal(err)
	}
	for k, v := range creds {
		if err := os.WriteFile(filepath.Join(credDir, k), []byte(v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d := &daemon{name: name, notify: nc, stderr: &strings.Builder{}, exited: make(chan error, 1), got: make(chan string, 256)}
	d.cmd = exec.Command(bin, name, "--config", config)
	d.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TZ=UTC", "LANG=C.UTF-8",
		"NOTIFY_SOCKET=" + notifyPath, "WATCHDOG_USEC=" + watchdogUSec, "CREDENTIALS_DIRECTORY=" + credDir,
		"PEAGE_STATE_DIR=" + filepath.Join(dir, "state-"+name)}
	d.cmd.Stderr = &lockedWriter{b: d.stderr}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.exited <- d.cmd.Wait() }()
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := nc.Read(b)
			if err != nil {
				close(d.got)
				return
			}
			msg := string(b[:n])
			d.mu.Lock()
			d.seen = append(d.seen, msg)
			d.mu.Unlock()
			d.got <- msg
		}
	}()
	t.Cleanup(func() {
		if d.cmd.ProcessState == nil {
			_ = d.cmd.Process.Kill()
			<-d.exited
		}
		nc.Close()
	})
	return d
}

type lockedWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (d *daemon) log() string {
	w := d.cmd.Stderr.(*lockedWriter)
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// await waits for a notification that starts with want (READY=1, WATCHDOG=1, STOPPING=1).
func (d *daemon) await(t *testing.T, want string, within time.Duration) {
	t.Helper()
	timeout := time.After(within)
	for {
		select {
		case msg, ok := <-d.got:
			if !ok {
				t.Fatalf("%s: notification socket closed before %s", d.name, want)
			}
			if strings.HasPrefix(msg, want) {
				return
			}
		case err := <-d.exited:
			d.exited <- err
			t.Fatalf("%s exited (%v) before sending %s:\n%s", d.name, err, want, d.log())
		case <-timeout:
			t.Fatalf("%s sent no %s within %v (got %q):\n%s", d.name, want, within, d.notifications(), d.log())
		}
	}
}

func (d *daemon) notifications() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.seen)
}

// stop sends SIGTERM as systemd does and checks STOPPING=1 then a clean exit.
func (d *daemon) stop(t *testing.T) {
	t.Helper()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	d.await(t, "STOPPING=1", 30*time.Second)
	select {
	case err := <-d.exited:
		if err != nil {
			t.Errorf("%s exited with %v after SIGTERM:\n%s", d.name, err, d.log())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not exit after SIGTERM", d.name)
	}
}

// tcpListeners lists the TCP addresses a process listens on, from /proc: every socket in state
// LISTEN whose inode is one of the process's descriptors.
func tcpListeners(t *testing.T, pid int) []string {
	t.Helper()
	inodes := map[string]bool{}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return nil // the process is gone (a Chromium helper that ended)
	}
	for _, fd := range fds {
		l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if s, ok := strings.CutPrefix(l, "socket:["); err == nil && ok {
			inodes[strings.TrimSuffix(s, "]")] = true
		}
	}
	var out []string
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "0A" || !inodes[fields[9]] { // 0A: LISTEN
				continue
			}
			out = append(out, procAddr(t, fields[1]))
		}
		f.Close()
	}
	slices.Sort(out)
	return out
}

// descendants lists the processes below pid (Chromium and its helpers under the API).
func descendants(t *testing.T, pid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after its last ')'.
		rest := string(b[strings.LastIndexByte(string(b), ')')+1:])
		if f := strings.Fields(rest); len(f) > 1 {
			ppid, _ := strconv.Atoi(f[1])
			children[ppid] = append(children[ppid], p)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// procAddr decodes /proc/net/tcp's "0100007F:1F90" (address in host byte order words).
func procAddr(t *testing.T, s string) string {
	t.Helper()
	h, p, _ := strings.Cut(s, ":")
	port, _ := strconv.ParseUint(p, 16, 16)
	raw, err := hex.DecodeString(h)
	if err != nil {
		t.Fatal(err)
	}
	ip := make(net.IP, len(raw))
	for i := 0; i < len(raw); i += 4 { // each 32-bit word is little-endian
		ip[i], ip[i+1], ip[i+2], ip[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	if v4 := ip.To4(); v4 != nil {
		ip = v4
	}
	return net.JoinHostPort(ip.String(), strconv.FormatUint(port, 10))
}

// TestSplitDaemons runs api, settle and proxyd as three processes of the built binary, as
// their units do (settle and proxyd first, the API once both said READY), with the chain in
// this test process reached over JSON-RPC. A paid call and a proxy sale cross the Unix
// sockets and end in settle's ledger; each daemon says READY, pings the watchdog, listens
// on nothing but its own addresses, and says STOPPING on SIGTERM.
func TestSplitDaemons(t *testing.T) {
	testenv.Needs(t, testenv.Daemons)
	bin := applianceBinary(t)
	ctx := context.Background()
	ch, err := devchain.Start(ctx, devchain.Options{HTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	echo := httptest.NewServer(proxyd.DevEchoHandler("FR", "AS0", "test loopback exit"))
	defer echo.Close()
	target := lineServer(t)
	dir := t.TempDir()
	apiAddr, adminAddr, proxyAddr := freeport.Addr(t), freeport.Addr(t), freeport.Addr(t)
	_, proxyPort, _ := net.SplitHostPort(proxyAddr)
	_, payTo, err := settle.NewHotKey() // a fresh address whose key nobody keeps
	if err != nil {
		t.Fatal(err)
	}
	settleSock, proxydSock := filepath.Join(dir, "run", "settle.sock"), filepath.Join(dir, "run", "proxyd.sock")
	config := filepath.Join(dir, "appliance.toml")
	toml := fmt.Sprintf(`[log]
level = "warn"
format = "json"
[api]
addr = %q
base_url = "http://%s"
[admin]
addr = %q
[payment]
network = %q
asset = %q
pay_to = %q
[egress]
allow = [%q, %q]
[settle]
rpc_url = %q
socket = %q
[proxyd]
listen = %q
admin_socket = %q
public_host = "127.0.0.1"
public_port = %s
echo_urls = ["%s/json"]
expected_country = "FR"
[browserfarm]
size = 1
`, apiAddr, apiAddr, adminAddr, devchain.Network, ch.USDC.Hex(), payTo, strings.TrimPrefix(echo.URL, "http://"), target,
		ch.RPCURL, settleSock, proxyAddr, proxydSock, proxyPort, echo.URL)
	if err := os.WriteFile(config, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}

	//lint:ignore SA1019 a secp256k1 key, which PrivateKey.Bytes does not encode; this package may not import go-ethereum's
	hot := fmt.Sprintf("%064x", ch.Hot.D) // the chain's funded gas key, as firstboot writes one
	settleD := startDaemon(t, bin, "settle", config, dir, map[string]string{credential.SettleHotKey: hot})
	proxydD := startDaemon(t, bin, "proxyd", config, dir, nil)
	settleD.await(t, "READY=1", time.Minute)
	proxydD.await(t, "READY=1", time.Minute)
	apiD := startDaemon(t, bin, "api", config, dir, nil)
	apiD.await(t, "READY=1", 2*time.Minute)
	for _, d := range []*daemon{settleD, proxydD, apiD} {
		d.await(t, "WATCHDOG=1", 30*time.Second) // the liveness check passed
	}

	// Nothing listens but the API, the proxy and the operator port (on loopback here as by
	// default); settle has no TCP listener at all, only its Unix socket. The browser pool's
	// filtering proxy and Chromium's DevTools port are on loopback, whatever api.addr is.
	for _, c := range []struct {
		d    *daemon
		want []string
	}{{apiD, []string{apiAddr, adminAddr}}, {proxydD, []string{proxyAddr}}, {settleD, nil}} {
		want := slices.Clone(c.want)
		slices.Sort(want)
		got := tcpListeners(t, c.d.cmd.Process.Pid)
		var own, local []string
		for _, a := range got {
			if slices.Contains(want, a) {
				own = append(own, a)
			} else {
				local = append(local, a)
			}
		}
		if !slices.Equal(own, want) {
			t.Errorf("%s listens on %v, want %v", c.d.name, got, want)
		}
		if c.d != apiD && len(local) > 0 {
			t.Errorf("%s also listens on %v", c.d.name, local)
		}
		for _, pid := range append(descendants(t, c.d.cmd.Process.Pid), c.d.cmd.Process.Pid) {
			for _, a := range tcpListeners(t, pid) {
				if host, _, _ := net.SplitHostPort(a); !slices.Contains(want, a) && !net.ParseIP(host).IsLoopback() {
					t.Errorf("%s (pid %d) listens beyond loopback on %s", c.d.name, pid, a)
				}
			}
		}
	}
	if code, body := get(t, "http://"+adminAddr+"/healthz"); code != 200 || !strings.Contains(body, `"browserfarm":"ok"`) {
		t.Errorf("/healthz with the browser pool: %d %s", code, body)
	}
	if n := len(descendants(t, apiD.cmd.Process.Pid)); n == 0 {
		t.Error("the API started no Chromium process")
	}

	base := "http://" + apiAddr
	payer := &pay.Client{Key: ch.Payer}
	res, err := payer.Do(ctx, pay.Request{URL: base + "/v1/fr/tva", Params: map[string]string{"siren": "542065479"}})
	if err != nil || res.Status != 200 || res.Receipt == nil || !res.Receipt.Success {
		t.Fatalf("paid call across the settle socket: %v %+v\n%s", err, res, apiD.log())
	}

	// The packages go on sale once the API has seen proxyd's exit check pass.
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := http.Get(base + "/v1/proxy/1gb")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusPaymentRequired {
			break
		}
		if resp.StatusCode != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("/v1/proxy/1gb unpaid: %d, want 503 until the exit is checked, then 402", resp.StatusCode)
		}
		time.Sleep(100 * time.Millisecond)
	}
	res, err = payer.Do(ctx, pay.Request{URL: base + "/v1/proxy/1gb"})
	var sale struct {
		Proxy string `json:"proxy"`
	}
	if err != nil || res.Status != 200 || json.Unmarshal(res.Body, &sale) != nil {
		t.Fatalf("proxy sale across the proxyd socket: %v %+v\n%s", err, res, apiD.log())
	}
	pu, err := url.Parse(sale.Proxy)
	if err != nil || pu.User == nil {
		t.Fatalf("proxy URL %q: %v", sale.Proxy, err)
	}
	key, _ := pu.User.Password()
	if code, line := tunnel(t, pu.Host, key, target); code != 200 || !strings.Contains(line, "hello from "+target) {
		t.Fatalf("through the sold package: %d %q", code, line)
	}

	// settle's ledger, read over its socket, holds both payments, settled on the chain.
	sc, err := client.New("unix:" + settleSock)
	if err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(time.Minute)
	for {
		pays, err := sc.Payments(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, p := range pays {
			got[fmt.Sprintf("%s %d", p.Route, p.Amount)] = string(p.Status)
		}
		if len(pays) == 2 && got["fr.tva 5000"] == "settled" && got["proxy.1gb 3500000"] == "settled" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ledger: %v, want fr.tva and proxy.1gb settled", got)
		}
		time.Sleep(50 * time.Millisecond)
	}

	apiD.stop(t)
	proxydD.stop(t)
	settleD.stop(t)
}

// TestBoxNotSetUp starts settle and the API from a configuration without a payout address or
// RPC endpoint, as a box comes up on its first boot: both start and say READY, the paid
// routes answer 503 naming what is missing (no 402), free routes serve, /healthz says what
// setup lacks, and settle's facilitator answers 503 naming it too.
func TestBoxNotSetUp(t *testing.T) {
	bin := applianceBinary(t)
	dir := t.TempDir()
	apiAddr, adminAddr := freeport.Addr(t), freeport.Addr(t)
	settleSock := filepath.Join(dir, "run", "settle.sock")
	config := filepath.Join(dir, "appliance.toml")
	toml := fmt.Sprintf(`[log]
level = "warn"
[api]
addr = %q
base_url = "http://%s"
[admin]
addr = %q
[settle]
socket = %q
[proxyd]
admin_socket = %q
[browserfarm]
chromium = "/nonexistent/chromium"
`, apiAddr, apiAddr, adminAddr, settleSock, filepath.Join(dir, "run", "proxyd.sock"))
	if err := os.WriteFile(config, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	settleD := startDaemon(t, bin, "settle", config, dir, nil) // no hot key either
	settleD.await(t, "READY=1", time.Minute)
	apiD := startDaemon(t, bin, "api", config, dir, nil)
	apiD.await(t, "READY=1", 2*time.Minute)
	apiD.await(t, "WATCHDOG=1", 30*time.Second)
	settleD.await(t, "WATCHDOG=1", 30*time.Second)

	base := "http://" + apiAddr
	cases := []struct {
		path string
		code int
		want []string
	}{
		{"/v1/fr/tva?siren=542065479", 503, []string{"first-boot setup incomplete", "payment.pay_to", "settle.rpc_url"}},
		{"/v1/proxy/1gb", 503, []string{"payment.pay_to"}},
		{"/llms.txt", 200, []string{"# péage"}},
	}
	for _, c := range cases {
		code, body := get(t, base+c.path)
		if code != c.code {
			t.Errorf("%s: %d, want %d: %s", c.path, code, c.code, body)
		}
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: body lacks %q: %s", c.path, w, body)
			}
		}
	}
	code, body := get(t, "http://"+adminAddr+"/healthz")
	var health struct {
		Status       string   `json:"status"`
		SetupMissing []string `json:"setup_missing"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &health) != nil || health.Status != "ok" || len(health.SetupMissing) != 2 {
		t.Errorf("/healthz: %d %s, want ok with the two missing items", code, body)
	}
	sc, err := client.New("unix:" + settleSock)
	if err != nil {
		t.Fatal(err)
	}
	_, err = sc.Payments(context.Background(), 1)
	for _, w := range []string{"payment.pay_to", "settle.rpc_url", "settle-hot-key"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("settle before setup: %v, want a refusal naming %s", err, w)
		}
	}
	apiD.stop(t)
	settleD.stop(t)
}
