package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/freeport"
	"github.com/peage/appliance/internal/testenv"
	"github.com/peage/appliance/internal/update"
	"github.com/peage/appliance/internal/version"
	"github.com/peage/appliance/proxyd"
)

// TestGatewaySellsProxyPackagesOfItsBoxes runs the daemons from their configuration: a
// gateway with fleet.proxy_listen, a box's proxyd on loopback and `appliance join`, enrolled
// with a one-time token of `appliance gateway token`. Once the box is in, the gateway offers
// proxy packages (402: the box announced its proxy routes and the exit check ran through it
// over NATS), the box's credentials carry its WireGuard peer with the private key it made
// itself, the gateway's proxy port refuses a key no box sold, and `join --networkd` writes the
// image's networkd pair.
func TestGatewaySellsProxyPackagesOfItsBoxes(t *testing.T) {
	testenv.Needs(t, testenv.Daemons)
	f := startProxyFleet(t)
	defer f.stop()
	api, proxyPort, creds, boxConf := f.api, f.proxyPort, f.creds, f.boxConf
	sale := "http://" + api + "/v1/proxy/1gb?country=FR"
	waitFor(t, "proxy packages offered through the box", func() bool {
		code, _ := get(t, sale)
		return code == http.StatusPaymentRequired
	})
	var c fleet.Credentials
	raw, err := os.ReadFile(creds)
	if err != nil || json.Unmarshal(raw, &c) != nil || c.WireGuard == nil || c.WireGuard.PrivateKey == "" ||
		!strings.HasPrefix(c.WireGuard.Endpoint, "127.0.0.1:") || c.WireGuard.KeepaliveSeconds != 25 {
		t.Fatalf("the box's credentials carry no usable WireGuard peer: %s", raw)
	}
	if code, body := get(t, "http://"+api+"/v1/proxy/1gb?country=F"); code != http.StatusBadRequest {
		t.Fatalf("a malformed country: %d %s", code, body)
	}

	conn, err := net.Dial("tcp", proxyPort)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nProxy-Authorization: Basic %s\r\n\r\n", "YnV5ZXI6cGswMDA=")
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: http.MethodConnect})
	if err != nil || resp.StatusCode != http.StatusProxyAuthRequired {
		t.Fatalf("a key no box sold at the gateway's proxy port: %v %v; want 407", resp, err)
	}

	nd := filepath.Join(t.TempDir(), "networkd")
	if err := os.MkdirAll(nd, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := runJoin(context.Background(), []string{"--config", boxConf, "--networkd", nd}); err != nil {
		t.Fatal(err)
	}
	netdev, err := os.ReadFile(filepath.Join(nd, "90-peage-fleet.netdev"))
	if err != nil || !strings.Contains(string(netdev), "Endpoint="+c.WireGuard.Endpoint) ||
		!strings.Contains(string(netdev), "PublicKey="+c.WireGuard.GatewayKey) {
		t.Fatalf("networkd .netdev: %v\n%s", err, netdev)
	}
	if fi, err := os.Stat(filepath.Join(nd, "peage-fleet.key")); err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("key file: %v %v", fi, err)
	}
}

// TestBoxHealthTellsItsLinkAndTunnel: a box's operator listener answers /healthz in the
// single appliance's shape, which the update gate reads (its version, "ok"), with the box's
// own components (the link to the gateway, heard by its registry; the proxy tunnel's session;
// proxyd) and where each stands; /metrics has the link's figures. The gateway gone, the box
// reports degraded, naming the link.
func TestBoxHealthTellsItsLinkAndTunnel(t *testing.T) {
	testenv.Needs(t, testenv.Daemons)
	f := startProxyFleet(t)
	defer f.stop()
	gate := update.HTTPHealth{URL: "http://" + f.boxAdmin + "/healthz"}
	type report struct {
		Status          string            `json:"status"`
		Version         string            `json:"version"`
		Components      map[string]string `json:"components"`
		Routes          int               `json:"routes"`
		RoutesAvailable int               `json:"routes_available"`
		RoutesUnbound   []string          `json:"routes_unbound"`
		Fleet           struct {
			Box              string    `json:"box"`
			Hub              string    `json:"hub"`
			Connected        bool      `json:"connected"`
			RoutesServed     int       `json:"routes_served"`
			LastHeartbeatAck time.Time `json:"last_heartbeat_ack"`
			Tunnel           struct {
				Endpoint      string    `json:"endpoint"`
				LastHandshake time.Time `json:"last_handshake"`
			} `json:"tunnel"`
		} `json:"fleet"`
	}
	read := func() (int, report) {
		code, body := get(t, gate.URL)
		var r report
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatalf("/healthz: %d %s", code, body)
		}
		return code, r
	}
	waitFor(t, "the box healthy", func() bool {
		r, err := gate.Check(t.Context())
		return err == nil && r.Status == "ok"
	})
	code, r := read()
	if r, _ := gate.Check(t.Context()); code != http.StatusOK || !r.Runs(version.String()) {
		t.Fatalf("/healthz %d, version %q; want 200 from %s", code, r.Version, version.String())
	}
	for _, c := range []string{"fleet", "tunnel", "proxyd", "state"} {
		if r.Components[c] != "ok" {
			t.Errorf("component %s: %q, want ok (%v)", c, r.Components[c], r.Components)
		}
	}
	if r.Fleet.Box != "line-1" || !strings.HasPrefix(r.Fleet.Hub, "tls://127.0.0.1:") || !r.Fleet.Connected || r.Fleet.RoutesServed == 0 ||
		r.Fleet.LastHeartbeatAck.IsZero() || !strings.HasPrefix(r.Fleet.Tunnel.Endpoint, "127.0.0.1:") || r.Fleet.Tunnel.LastHandshake.IsZero() ||
		r.Routes == 0 || r.RoutesUnbound == nil {
		t.Fatalf("/healthz: %+v", r)
	}
	if code, body := get(t, "http://"+f.boxAdmin+"/metrics"); code != http.StatusOK || !strings.Contains(body, `peage_fleet_box{figure="linked"} 1`) {
		t.Fatalf("/metrics: %d, no linked box in:\n%s", code, body)
	}
	if code, body := get(t, "http://"+f.boxAdmin+"/status.json"); code != http.StatusOK || !strings.Contains(body, `"fleet"`) {
		t.Fatalf("/status.json: %d %s", code, body)
	}

	f.stopGateway()
	waitFor(t, "the box degraded without its gateway", func() bool {
		code, r := read()
		return code == http.StatusServiceUnavailable && r.Status == "degraded" && strings.HasPrefix(r.Components["fleet"], "no link to the gateway's hub") &&
			!r.Fleet.Connected
	})
}

// proxyFleet is a gateway with fleet.proxy_listen, a box's proxyd on loopback and `appliance
// join` enrolled with a one-time token of `appliance gateway token`, each run in-process from
// its configuration.
type proxyFleet struct {
	api, admin, proxyPort string // the gateway's
	boxAdmin              string // the box's operator listener
	creds, boxConf        string
	stopGateway           func()
	stop                  func() // the box, its proxyd and the gateway (unless stopped already)
}

func startProxyFleet(t *testing.T) *proxyFleet {
	t.Helper()
	t.Setenv("PEAGE_LOG_LEVEL", "warn")
	dir := t.TempDir()
	f := &proxyFleet{api: freeport.Addr(t), admin: freeport.Addr(t), proxyPort: freeport.Addr(t), boxAdmin: freeport.Addr(t)}
	gwConf := writeGatewayConf(t, dir, f.api, f.admin, fmt.Sprintf("state_dir = %q\n", filepath.Join(dir, "gw")), fmt.Sprintf(`leaf_hosts = ["127.0.0.1"]
proxy_listen = %q
tunnel_port = 0
`, f.proxyPort))
	var gatewayOnce sync.Once
	stopGateway := runInBackground(t, "gateway", "--config", gwConf)
	f.stopGateway = func() { gatewayOnce.Do(stopGateway) }
	waitFor(t, "the gateway's operator port", func() bool {
		resp, err := http.Get("http://" + f.admin + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	m := joinCommand(t, gwConf)
	f.creds = filepath.Join(dir, "box", "fleet-credentials.json")

	echo := httptest.NewServer(proxyd.DevEchoHandler("FR", "AS0", "test line"))
	boxProxy := freeport.Addr(t)
	f.boxConf = filepath.Join(dir, "box.toml")
	writeConf(t, f.boxConf, fmt.Sprintf(`state_dir = %q
[admin]
addr = %q
[egress]
allow = [%q]
[proxyd]
listen = %q
public_host = "127.0.0.1"
public_port = %s
admin_socket = %q
echo_urls = ["%s/json"]
expected_country = "FR"
[fleet]
credentials = %q
box = "line-1"
gateway = %q
token = %q
country = "fr"
`, filepath.Join(dir, "box"), f.boxAdmin, strings.TrimPrefix(echo.URL, "http://"), boxProxy, boxProxy[strings.LastIndex(boxProxy, ":")+1:],
		filepath.Join(dir, "proxyd.sock"), echo.URL, f.creds, m[1], m[2]))
	stopProxyd := runInBackground(t, "proxyd", "--config", f.boxConf)
	stopBox := runInBackground(t, "join", "--config", f.boxConf)
	f.stop = func() {
		stopBox()
		stopProxyd()
		echo.Close()
		f.stopGateway()
	}
	return f
}

// runInBackground runs a sub-command until the returned stop, which checks it ended cleanly.
func runInBackground(t *testing.T, name string, args ...string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	run := map[string]func(context.Context, []string) error{"gateway": runGateway, "join": runJoin, "proxyd": runProxyd}[name]
	go func() { done <- run(ctx, args) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("appliance %s: %v", name, err)
		}
	}
}
