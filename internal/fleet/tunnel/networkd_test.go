package tunnel

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/goldenfile"
)

// TestNetworkdFiles: the .netdev/.network pair of an enrolment, byte for byte (RFC 7748's
// test keys stand for the box's and the gateway's).
func TestNetworkdFiles(t *testing.T) {
	w := &fleet.WireGuard{PrivateKey: "dwdtCnMYpX08FsFyUbJmRd9ML4frwJkqsXf7pR25LCo=", Address: "10.199.0.7",
		GatewayAddress: "10.199.0.1", GatewayKey: "3p7bfXt9wbTTW2HC7OQ1Nz+DQ8hbeGdNrfx+FG+IK08=",
		Endpoint: "gateway.example.net:51820", KeepaliveSeconds: 25}
	nd, err := RenderNetworkd("home-7", w, "/etc/systemd/network/peage-fleet.key")
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]string{"90-peage-fleet.netdev": nd.NetDev, "90-peage-fleet.network": nd.Network, "peage-fleet.key": nd.Key} {
		path := filepath.Join("testdata", name)
		if goldenfile.Update() {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("%s:\n%s\nwant:\n%s", name, got, want)
		}
	}
	w.Endpoint = "gateway.example.net"
	if _, err := RenderNetworkd("home-7", w, "/k"); err == nil {
		t.Fatal("an endpoint without a port was rendered")
	}
	if _, err := RenderNetworkd("home-7", nil, "/k"); err == nil {
		t.Fatal("an enrolment without a WireGuard peer was rendered")
	}
}
