package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/freeport"
	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/internal/testenv"
)

// TestGatewayAndJoin runs the two daemons as their units do (the built binary, NOTIFY_SOCKET,
// the watchdog): `appliance gateway` says READY=1 and lists the French VAT route unavailable
// while no box serves it; `appliance gateway token` makes a one-time token on its operator
// port; `appliance join`, given the token, the gateway's enrolment URL and its name in its
// configuration, redeems it over TLS, writes its credentials (0600, its own seed) and says
// READY=1 once joined: the gateway then challenges the route (402) and lists the box with its
// exit. The same token in another box's configuration enrols nothing, but the same box asking
// again with its key (its answer lost) is answered. `appliance gateway ca
// stage` has the box keep the next CA in its credentials, `switch` finds it ready, and the box
// restarted joins from its credentials alone (the hub's certificate now from the new CA),
// until `appliance gateway revoke` cuts it. Both stop on SIGTERM with STOPPING=1.
func TestGatewayAndJoin(t *testing.T) {
	bin := applianceBinary(t)
	testenv.Needs(t, testenv.Daemons)
	t.Setenv("PEAGE_LOG_LEVEL", "warn")
	dir := t.TempDir()
	api, admin := freeport.Addr(t), freeport.Addr(t)
	gwConf := writeGatewayConf(t, dir, api, admin, "", "")
	gateway := startDaemon(t, bin, "gateway", gwConf, dir, nil)
	gateway.await(t, "READY=1", 2*time.Minute)
	tva := "http://" + api + "/v1/fr/tva?siren=542065479"
	if code, body := get(t, tva); code != http.StatusServiceUnavailable {
		t.Fatalf("no box yet: %d %s; want 503", code, body)
	}

	// The operator routes name what is wrong in a bad request.
	for _, c := range []struct{ route, want string }{
		{"/fleet/token?box=Line.1", "box:"},
		{"/fleet/token?box=line-1&ttl=forever", "ttl:"},
		{"/fleet/token?box=line-1&ttl=9000h", "ttl:"},
		{"/fleet/revoke?box=", "box:"},
		{"/fleet/revoke?box=nobody", "box:"},
		{"/fleet/ca?step=rotate", "step:"},
	} {
		resp, err := http.Post("http://"+admin+c.route, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 4 || !strings.HasPrefix(string(body), c.want) {
			t.Errorf("POST %s: %d %q, want a 4xx naming %s", c.route, resp.StatusCode, body, c.want)
		}
	}

	m := joinCommand(t, gwConf)
	boxAdmin := freeport.Addr(t) // the box's operator listener, the same across its restart
	boxConf := func(name, token string) string {
		p := filepath.Join(dir, name+".toml")
		writeConf(t, p, fmt.Sprintf(`[admin]
addr = %q
[fleet]
box = "line-1"
gateway = %q
token = %q
country = "fr"
`, boxAdmin, m[1], token))
		return p
	}
	box := startDaemon(t, bin, "join", boxConf("box", m[2]), dir, nil)
	box.await(t, "READY=1", 2*time.Minute)
	creds := filepath.Join(dir, "state-join", "fleet-credentials.json")
	if fi, err := os.Stat(creds); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v %v", fi, err)
	}
	waitFor(t, "the route available through the box", func() bool {
		code, _ := get(t, tva)
		return code == http.StatusPaymentRequired
	})
	code, body := get(t, "http://"+admin+"/fleet/boxes")
	var list struct{ Boxes []fleet.Record }
	if code != http.StatusOK || json.Unmarshal([]byte(body), &list) != nil || len(list.Boxes) != 1 ||
		list.Boxes[0].Box != "line-1" || list.Boxes[0].Exit.Country != "FR" || !list.Boxes[0].Serves("fr_tva") {
		t.Fatalf("/fleet/boxes: %d %s", code, body)
	}
	var status strings.Builder
	err := statusTo(context.Background(), &status, []string{"-addr", admin})
	if _, unhealthy := err.(exitCode); err != nil && !unhealthy { // no settle daemon runs here
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^line-1 +ok +0/8 +FR +[0-9]+s ago +[1-9][0-9]* +0 +0\.000000 `).MatchString(status.String()) {
		t.Fatalf("appliance status does not list the box:\n%s", status.String())
	}

	// The spent token enrols no other box, and is refused before the box composes anything.
	t.Setenv("PEAGE_STATE_DIR", filepath.Join(dir, "copy"))
	err = runJoin(context.Background(), []string{"--config", boxConf("copy", m[2])})
	if err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("a second box with the spent token: %v, want the gateway's 403", err)
	}

	// The same box, had it lost the gateway's answer (its credentials file holding only the
	// seed it wrote before asking), asks again with the same key and token and is answered.
	raw, err := os.ReadFile(creds)
	var enrolled fleet.Credentials
	if err != nil || json.Unmarshal(raw, &enrolled) != nil {
		t.Fatalf("credentials: %v", err)
	}
	pending := filepath.Join(dir, "retry", "fleet-credentials.json")
	if err := writeCredentials(pending, fleet.Credentials{Box: "line-1", Seed: enrolled.Seed}); err != nil {
		t.Fatal(err)
	}
	again, err := boxCredentials(context.Background(), fleet.Config{Credentials: pending, Box: "line-1", Gateway: m[1], Token: m[2]}, obs.Discard())
	if err != nil || again != enrolled {
		t.Fatalf("asking again with the same key: %+v, %v; want %+v", again, err, enrolled)
	}

	// A CA rotation: staged, the box comes to trust both CAs and keeps them in its credentials;
	// the switch finds every box ready.
	ca := func(step string) string {
		var out strings.Builder
		if err := gatewayCA(context.Background(), &out, []string{"--config", gwConf, step}); err != nil {
			t.Fatalf("appliance gateway ca %s: %v", step, err)
		}
		return out.String()
	}
	ca("stage")
	waitFor(t, "the box's credentials holding both CAs", func() bool {
		raw, err := os.ReadFile(creds)
		var kept fleet.Credentials
		if err != nil || json.Unmarshal(raw, &kept) != nil {
			return false
		}
		cas, err := fleet.CABundle([]byte(kept.CAPEM))
		return err == nil && len(cas) == 2
	})
	waitFor(t, "the box reporting both CAs", func() bool {
		return regexp.MustCompile(`(?m)^line-1 +\S+ \S+$`).MatchString(ca("status"))
	})
	if status := ca("switch"); !strings.Contains(status, "next CA    -") {
		t.Fatalf("after the switch:\n%s", status)
	}

	// Restarted, the box joins from its credentials (the hub's certificate now from the new
	// CA, which it kept); the token in its configuration is not used again.
	box.stop(t)
	if err := os.Remove(filepath.Join(dir, "notify-join")); err != nil { // the next one's socket
		t.Fatal(err)
	}
	box = startDaemon(t, bin, "join", boxConf("box", m[2]), dir, nil)
	box.await(t, "READY=1", 2*time.Minute)

	// Revoked, the box (and any copy of its credentials) is cut and refused: the route has no
	// box again.
	var revoked strings.Builder
	if err := gatewayRevoke(context.Background(), &revoked, []string{"--config", gwConf, "--box", "line-1"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the route unavailable once the box is revoked", func() bool {
		code, _ := get(t, tva)
		return code == http.StatusServiceUnavailable
	})
	box.stop(t)
	gateway.stop(t)
}

// writeGatewayConf writes dir/gateway.toml, a gateway's configuration with its API on api and
// its operator port on admin, paying a dead address with no chain to settle on (these tests
// go as far as the 402), and the fleet on fresh ports; top is written above the [api] table,
// fleetLines at the end of the [fleet] one.
func writeGatewayConf(t *testing.T, dir, api, admin, top, fleetLines string) string {
	t.Helper()
	path := filepath.Join(dir, "gateway.toml")
	writeConf(t, path, top+fmt.Sprintf(`[api]
addr = %q
base_url = "http://%s"
[admin]
addr = %q
[payment]
pay_to = "0x000000000000000000000000000000000000dEaD"
[settle]
rpc_url = "http://127.0.0.1:1"
socket = %q
[fleet]
leaf_addr = %q
enrol_addr = %q
`, api, api, admin, filepath.Join(dir, "settle.sock"), freeport.Addr(t), freeport.Addr(t))+fleetLines)
	return path
}

// joinCommand has the gateway configured in gwConf issue a token for box line-1, and returns
// the join command it printed: the whole match, the gateway's enrolment URL and the token.
func joinCommand(t *testing.T, gwConf string) []string {
	t.Helper()
	var printed strings.Builder
	if err := gatewayToken(context.Background(), &printed, []string{"--config", gwConf, "--box", "line-1", "--ttl", "10m"}); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`appliance join --box line-1 --gateway (https://\S+) --token (\S+)`).FindStringSubmatch(printed.String())
	if m == nil {
		t.Fatalf("appliance gateway token printed no join command:\n%s", printed.String())
	}
	return m
}

func writeConf(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds, failing the test after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
