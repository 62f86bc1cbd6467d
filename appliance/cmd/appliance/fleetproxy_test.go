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
	"testing"

	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/freeport"
	"github.com/peage/appliance/internal/testenv"
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
	t.Setenv("PEAGE_LOG_LEVEL", "warn")
	dir := t.TempDir()
	api, admin, proxyPort := freeport.Addr(t), freeport.Addr(t), freeport.Addr(t)
	gwConf := writeGatewayConf(t, dir, api, admin, fmt.Sprintf("state_dir = %q\n", filepath.Join(dir, "gw")), fmt.Sprintf(`leaf_hosts = ["127.0.0.1"]
proxy_listen = %q
tunnel_port = 0
`, proxyPort))
	stopGateway := runInBackground(t, "gateway", "--config", gwConf)
	defer stopGateway()
	waitFor(t, "the gateway's operator port", func() bool {
		resp, err := http.Get("http://" + admin + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	m := joinCommand(t, gwConf)
	creds := filepath.Join(dir, "box", "fleet-credentials.json")

	echo := httptest.NewServer(proxyd.DevEchoHandler("FR", "AS0", "test line"))
	defer echo.Close()
	boxProxy := freeport.Addr(t)
	boxConf := filepath.Join(dir, "box.toml")
	writeConf(t, boxConf, fmt.Sprintf(`state_dir = %q
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
`, filepath.Join(dir, "box"), strings.TrimPrefix(echo.URL, "http://"), boxProxy, boxProxy[strings.LastIndex(boxProxy, ":")+1:],
		filepath.Join(dir, "proxyd.sock"), echo.URL, creds, m[1], m[2]))
	stopProxyd := runInBackground(t, "proxyd", "--config", boxConf)
	defer stopProxyd()
	stopBox := runInBackground(t, "join", "--config", boxConf)
	defer stopBox()
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

	nd := filepath.Join(dir, "networkd")
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
