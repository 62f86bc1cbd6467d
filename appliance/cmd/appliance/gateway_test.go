package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/freeport"
	"github.com/peage/appliance/internal/testenv"
)

// TestGatewayAndJoin runs the two daemons from their configuration: `appliance gateway` (its
// hub's leaf listener in [fleet]) lists the French VAT route unavailable while no box serves
// it; `appliance join --enrol` fetches a box's credentials from the gateway's operator port
// (written 0600), and `appliance join` with them in fleet.credentials joins: the gateway then
// challenges the route (402) and lists the box with its exit.
func TestGatewayAndJoin(t *testing.T) {
	testenv.Needs(t, testenv.Daemons)
	t.Setenv("PEAGE_LOG_LEVEL", "warn")
	dir := t.TempDir()
	api, admin := freeport.Addr(t), freeport.Addr(t)
	gwConf := filepath.Join(dir, "gateway.toml")
	writeConf(t, gwConf, fmt.Sprintf(`state_dir = %q
[api]
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
`, filepath.Join(dir, "gw"), api, api, admin, filepath.Join(dir, "settle.sock"), freeport.Addr(t)))
	stopGateway := runInBackground(t, "gateway", "--config", gwConf)
	defer stopGateway()
	waitFor(t, "the gateway's operator port", func() bool {
		resp, err := http.Get("http://" + admin + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	tva := "http://" + api + "/v1/fr/tva?siren=542065479"
	if code, body := get(t, tva); code != http.StatusServiceUnavailable {
		t.Fatalf("no box yet: %d %s; want 503", code, body)
	}

	creds := filepath.Join(dir, "box", "fleet-credentials.json")
	if err := os.MkdirAll(filepath.Dir(creds), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := runJoin(context.Background(), []string{"--enrol", "http://" + admin, "--box", "line-1", "--out", creds}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(creds); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v %v", fi, err)
	}
	boxConf := filepath.Join(dir, "box.toml")
	writeConf(t, boxConf, fmt.Sprintf(`state_dir = %q
[fleet]
credentials = %q
country = "fr"
`, filepath.Join(dir, "box"), creds))
	stopBox := runInBackground(t, "join", "--config", boxConf)
	defer stopBox()
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
	if !regexp.MustCompile(`(?m)^line-1 +ok +0/8 +FR +[1-9][0-9]*$`).MatchString(status.String()) {
		t.Fatalf("appliance status does not list the box:\n%s", status.String())
	}
}

func writeConf(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
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
