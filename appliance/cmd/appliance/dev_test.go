package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/settle"
	settleclient "github.com/peage/appliance/settle/client"
	"github.com/peage/appliance/settle/pay"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestDevNeedsNoConfig runs `appliance dev` in-process with only address and state flags, and
// checks the operator endpoints live on the admin listener only.
func TestDevNeedsNoConfig(t *testing.T) {
	api, admin := freeAddr(t), freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	t.Setenv("PEAGE_LOG_LEVEL", "warn")
	stateDir := t.TempDir()
	go func() {
		done <- runDev(ctx, []string{"--api-addr", api, "--admin-addr", admin, "--proxy-addr", freeAddr(t), "--state-dir", stateDir})
	}()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if resp, err := http.Get("http://" + admin + "/healthz"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("appliance dev did not come up")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code, body := get(t, "http://"+admin+"/healthz"); code != 200 || !strings.Contains(body, `"status":"ok"`) {
		t.Fatalf("healthz %d %s", code, body)
	}
	if code, _ := get(t, "http://"+api+"/healthz"); code != 404 {
		t.Fatalf("public /healthz answered %d, want 404", code)
	}
	if code, _ := get(t, "http://"+api+"/metrics"); code != 404 {
		t.Fatalf("public /metrics answered %d, want 404", code)
	}
	if code, body := get(t, "http://"+api+"/llms.txt"); code != 200 || !strings.HasPrefix(body, "# péage") {
		t.Fatalf("llms.txt %d", code)
	}
	if code, body := get(t, "http://"+admin+"/metrics"); code != 200 || !strings.Contains(body, `peage_http_requests_total{route="llms.txt",status="200"} 1`) {
		t.Fatalf("metrics %d %s", code, body)
	}
	// The chain routes are ready on the embedded chain with no configuration. The catalog says
	// so without spending the free calls the payment check below needs.
	code, body := get(t, "http://"+api+"/")
	var index struct {
		Routes []struct {
			Path      string `json:"path"`
			Available bool   `json:"available"`
		} `json:"routes"`
	}
	if err := json.Unmarshal([]byte(body), &index); code != 200 || err != nil {
		t.Fatalf("catalog %d %v", code, err)
	}
	chainRoutes := map[string]bool{}
	for _, r := range index.Routes {
		if strings.HasPrefix(r.Path, "/v1/chain/") {
			chainRoutes[r.Path] = r.Available
		}
	}
	for _, p := range []string{"block", "gas", "balance", "allowance", "tx", "token"} {
		if !chainRoutes["/v1/chain/"+p] {
			t.Errorf("/v1/chain/%s is not available in dev (%v)", p, chainRoutes)
		}
	}
	followPayment(t, "http://"+api, stateDir)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("dev returned %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("dev did not stop on cancel")
	}
}

// followPayment pays a call with the demo payer, then follows the payment the way a user
// does: `appliance ledger -state-dir` lists it, and /free/payment tells its status.
func followPayment(t *testing.T, base, stateDir string) {
	t.Helper()
	ctx := context.Background()
	key, err := settle.LoadKey(filepath.Join(stateDir, "dev-payer.key"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&pay.Client{Key: key}).Do(ctx, pay.Request{URL: base + "/v1/fr/tva", Params: map[string]string{"siren": "542065479"}})
	if err != nil || res.Status != 200 || res.Receipt == nil || !res.Receipt.Success {
		t.Fatalf("paid call in dev: %v %+v", err, res)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	lerr := runLedger(ctx, []string{"-state-dir", stateDir})
	os.Stdout = stdout
	w.Close()
	out, _ := io.ReadAll(r)
	payer := res.Receipt.Payer
	if lerr != nil || !strings.Contains(string(out), "fr.tva") || !strings.Contains(string(out), payer) {
		t.Fatalf("appliance ledger: %v\n%s", lerr, out)
	}
	c, err := settleclient.New("unix:" + filepath.Join(stateDir, "settle.sock"))
	if err != nil {
		t.Fatal(err)
	}
	pays, err := c.Payments(ctx, 1)
	if err != nil || len(pays) != 1 {
		t.Fatalf("payments: %v %+v", err, pays)
	}
	for {
		code, body := get(t, base+"/free/payment?payer="+payer+"&nonce="+pays[0].Nonce)
		var st struct{ Status, Transaction string }
		if code != 200 || json.Unmarshal([]byte(body), &st) != nil {
			t.Fatalf("/free/payment: %d %s", code, body)
		}
		if st.Status == "settled" && st.Transaction != "" {
			break
		}
		if st.Status != "queued" && st.Status != "broadcast" {
			t.Fatalf("/free/payment: %s", body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code, _ := get(t, base+"/free/payment?payer="+payer+"&nonce=0x"+strings.Repeat("ab", 32)); code != 404 {
		t.Fatalf("unknown payment: %d", code)
	}
}
