package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/internal/freeport"
	"github.com/peage/appliance/internal/receipt"
	"github.com/peage/appliance/internal/testenv"
	"github.com/peage/appliance/settle"
	settleclient "github.com/peage/appliance/settle/client"
	"github.com/peage/appliance/settle/pay"
	"github.com/peage/appliance/settle/x402"
)

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

// devStack is `appliance dev` running in-process on free loopback addresses.
type devStack struct {
	api, admin, state string
}

// startDev runs `appliance dev` with only address and state flags plus extra, waits until it
// answers, and stops it (checking it stopped cleanly) when the test ends. A free port can be
// taken by another test process between freeAddr and the daemon's bind, so a start that
// fails on a taken address is retried on new ports.
func startDev(t *testing.T, extra ...string) devStack {
	t.Helper()
	t.Setenv("PEAGE_LOG_LEVEL", "warn")
	for attempt := 1; ; attempt++ {
		d, err := tryStartDev(t, extra)
		if err == nil {
			return d
		}
		if attempt == 3 || !strings.Contains(err.Error(), "address already in use") {
			t.Fatalf("appliance dev stopped: %v", err)
		}
		t.Logf("retrying on new ports: %v", err)
	}
}

func tryStartDev(t *testing.T, extra []string) (devStack, error) {
	t.Helper()
	testenv.Needs(t, testenv.Daemons)
	d := devStack{api: freeport.Addr(t), admin: freeport.Addr(t), state: t.TempDir()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	args := append([]string{"--api-addr", d.api, "--admin-addr", d.admin, "--proxy-addr", freeport.Addr(t), "--state-dir", d.state}, extra...)
	go func() { done <- runDev(ctx, args) }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if resp, err := http.Get("http://" + d.admin + "/healthz"); err == nil {
			resp.Body.Close()
			break
		}
		select {
		case err := <-done:
			cancel()
			if err == nil { // ended before it answered: never a usable stack
				err = fmt.Errorf("returned before answering on %s", d.admin)
			}
			return d, err
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatal("appliance dev did not come up")
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("dev returned %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("dev did not stop on cancel")
		}
	})
	return d, nil
}

// TestDevNeedsNoConfig runs `appliance dev` in-process with only address and state flags, and
// checks the operator endpoints live on the admin listener only.
func TestDevNeedsNoConfig(t *testing.T) {
	d := startDev(t)
	api, admin := d.api, d.admin
	if code, body := get(t, "http://"+admin+"/healthz"); code != 200 || !strings.Contains(body, `"status":"ok"`) {
		t.Fatalf("healthz %d %s", code, body)
	}
	everyEntryBound(t, admin)
	// Dev runs the batch-settlement claimer, at the dev defaults (the configuration leaves
	// settle's claim policy at the production defaults).
	code, body := get(t, "http://"+admin+"/status.json")
	var status struct {
		Channels struct {
			Claimer struct {
				IntervalSeconds int    `json:"interval_seconds"`
				MinClaimable    uint64 `json:"min_claimable"`
			} `json:"claimer"`
		} `json:"channels"`
	}
	if err := json.Unmarshal([]byte(body), &status); code != 200 || err != nil ||
		status.Channels.Claimer.IntervalSeconds != int(settle.DevClaimInterval/time.Second) || status.Channels.Claimer.MinClaimable != 0 {
		t.Fatalf("status.json %d %+v %v", code, status.Channels.Claimer, err)
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
	// The A2A card names the endpoint the composed server serves (the 0.3.0 card named one
	// that nothing answered): a JSON-RPC call at each interface it lists (v1.0, v0.3) and at
	// v0.3's top-level url gets A2A's answer in that version.
	code, body = get(t, "http://"+api+"/.well-known/agent-card.json")
	var card struct {
		SupportedInterfaces []struct{ URL, ProtocolBinding, ProtocolVersion string } `json:"supportedInterfaces"`
		URL                 string                                                   `json:"url"`
	}
	if err := json.Unmarshal([]byte(body), &card); code != 200 || err != nil || len(card.SupportedInterfaces) != 2 {
		t.Fatalf("agent card %d %s", code, body)
	}
	getTask := map[string]string{"1.0": "GetTask", "0.3": "tasks/get"}
	calls := [][2]string{{card.URL, "tasks/get"}}
	for _, iface := range card.SupportedInterfaces {
		calls = append(calls, [2]string{iface.URL, getTask[iface.ProtocolVersion]})
	}
	for _, call := range calls {
		resp, err := http.Post(call[0], "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"`+call[1]+`","params":{"id":"none"}}`))
		if err != nil {
			t.Fatal(err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(answer), `"code":-32001`) {
			t.Fatalf("POST %s %s = %d %s", call[0], call[1], resp.StatusCode, answer)
		}
	}
	// The chain routes are ready on the embedded chain with no configuration. The catalog says
	// so without spending the free calls the payment check below needs.
	code, body = get(t, "http://"+api+"/")
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
	followPayment(t, "http://"+api, d.state)
}

// everyEntryBound checks that the composition of appliance dev binds every catalog entry: a
// family left out of api/routes/families.go, or an entry no family binds, is listed by
// /healthz and fails here.
func everyEntryBound(t *testing.T, admin string) {
	t.Helper()
	code, body := get(t, "http://"+admin+"/healthz")
	var health struct {
		Routes  int       `json:"routes"`
		Unbound *[]string `json:"routes_unbound"`
	}
	if err := json.Unmarshal([]byte(body), &health); code != 200 || err != nil || health.Routes == 0 {
		t.Fatalf("healthz %d %s (%v)", code, body, err)
	}
	if health.Unbound == nil || len(*health.Unbound) > 0 {
		t.Errorf("appliance dev leaves catalog entries unbound: %s", body)
	}
}

// TestDevBuyerPath follows a buyer in dev: the README's @x402/fetch snippet, in its dev form,
// buys a proxy package once its cap is raised (at the client's 1 USDC it refuses and pays
// nothing), and the package tunnels to the target named by --allow-egress while another port
// of the same host is refused by the port rule.
func TestDevBuyerPath(t *testing.T) {
	target := lineServer(t)
	other := lineServer(t)
	d := startDev(t, "--allow-egress", target)
	asset := devAsset(t, "http://"+d.api+"/v1/proxy/1gb")
	keyHex, err := os.ReadFile(filepath.Join(d.state, "dev-payer.key"))
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"PAYER_KEY=0x" + strings.TrimPrefix(strings.TrimSpace(string(keyHex)), "0x"), "ASSET=" + asset}
	devLine := readmeBlock(t, readmeDevLinePrefix)
	script := withCapLine(t, readmeBlock(t, readmeScriptFirstLine), devLine)
	if stdout, stderr, err := runNode(t, strings.Replace(script, `"52000000"`, `"1000000"`, 1), env, "http://"+d.api+"/v1/proxy/1gb"); err == nil || !strings.Contains(stderr, "maxAmountPerPayment") {
		t.Fatalf("a 1 USDC cap did not refuse the 3.50 USDC package: %v\nstdout %s\nstderr %s", err, stdout, stderr)
	}
	stdout, stderr, err := runNode(t, script, env, "http://"+d.api+"/v1/proxy/1gb")
	body, ok := strings.CutPrefix(stdout, "200 ")
	if err != nil || !ok {
		t.Fatalf("buying a package: %v\nstdout %s\nstderr %s", err, stdout, stderr)
	}
	var sale struct {
		Proxy string `json:"proxy"`
	}
	if err := json.Unmarshal([]byte(body), &sale); err != nil {
		t.Fatalf("sale %s: %v", body, err)
	}
	var receipt x402.SettlementResponse
	if err := json.Unmarshal([]byte(strings.TrimSpace(stderr)), &receipt); err != nil || !receipt.Success || receipt.Amount != "3500000" {
		t.Fatalf("receipt %s: %v", stderr, err)
	}
	pu, err := url.Parse(sale.Proxy)
	if err != nil || pu.User == nil {
		t.Fatalf("proxy URL %q: %v", sale.Proxy, err)
	}
	key, _ := pu.User.Password()
	checkSaleReceipt(t, "http://"+d.api, strings.TrimSuffix(stderr, "\n"), strings.TrimSuffix(body, "\n"), key)
	_, otherPort, _ := net.SplitHostPort(other)
	cases := []struct {
		target string
		code   int
		want   string // in the tunnel's first line, or in the refusal
	}{
		{target, http.StatusOK, "hello from " + target},
		{other, http.StatusForbidden, "port " + otherPort + " is not allowed"},
	}
	for _, c := range cases {
		t.Run(c.target, func(t *testing.T) {
			code, text := tunnel(t, pu.Host, key, c.target)
			if code != c.code || !strings.Contains(text, c.want) {
				t.Fatalf("CONNECT %s: %d %q, want %d with %q", c.target, code, text, c.code, c.want)
			}
		})
	}
}

// devAsset reads the USDC's address from a route's 402 challenge.
func devAsset(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	pr, err := x402.DecodeRequired(resp.Header.Get(x402.HeaderPaymentRequired))
	if err != nil || resp.StatusCode != http.StatusPaymentRequired || len(pr.Accepts) == 0 {
		t.Fatalf("unpaid %s: %d %v", u, resp.StatusCode, err)
	}
	return pr.Accepts[0].Asset
}

// lineServer listens on a loopback port and writes one line naming itself to each connection.
func lineServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = io.WriteString(c, "hello from "+ln.Addr().String()+"\n")
			_ = c.Close()
		}
	}()
	return ln.Addr().String()
}

// tunnel sends CONNECT target to the proxy with key and returns the status and, on 200, what
// the target sent, or else the refusal's Proxy-Status and body.
func tunnel(t *testing.T, proxyAddr, key, target string) (int, string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", proxyAddr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	auth := base64.StdEncoding.EncodeToString([]byte("buyer:" + key))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: Basic %s\r\n\r\n", target, target, auth)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatalf("CONNECT %s: %v", target, err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Proxy-Status") + " " + string(b)
	}
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatalf("through the tunnel to %s: %q %v", target, line, err)
	}
	return resp.StatusCode, line
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
	var out strings.Builder
	lerr := ledgerTo(ctx, &out, []string{"-state-dir", stateDir})
	payer := res.Receipt.Payer
	if lerr != nil || !strings.Contains(out.String(), "fr.tva") || !strings.Contains(out.String(), payer) {
		t.Fatalf("appliance ledger: %v\n%s", lerr, out.String())
	}
	c, err := settleclient.New("unix:" + filepath.Join(stateDir, "settle.sock"))
	if err != nil {
		t.Fatal(err)
	}
	var nonce string
	for { // the optimistic queue settles shortly after the answer
		pays, err := c.Payments(ctx, 1)
		if err != nil || len(pays) != 1 {
			t.Fatalf("payments: %v %+v", err, pays)
		}
		if nonce = pays[0].Nonce; pays[0].Status == "settled" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	code, body := get(t, base+"/free/payment?payer="+payer+"&nonce="+nonce)
	var st struct{ Status, Transaction string }
	if code != 200 || json.Unmarshal([]byte(body), &st) != nil || st.Status != "settled" || st.Transaction == "" {
		t.Fatalf("/free/payment: %d %s", code, body)
	}
	if code, _ := get(t, base+"/free/payment?payer="+payer+"&nonce=0x"+strings.Repeat("ab", 32)); code != 404 {
		t.Fatalf("unknown payment: %d", code)
	}
}

// checkSaleReceipt verifies a proxy sale's receipt, as the buyer's script printed it, against
// the keys the dev box publishes: signed, bound to the body delivered, and naming the package
// by its key's hash and its terms.
func checkSaleReceipt(t *testing.T, base, settlementJSON, body, key string) {
	t.Helper()
	code, doc := get(t, base+"/.well-known/x402-receipt-keys.json")
	pub, err := receipt.ParsePublished([]byte(doc))
	if code != 200 || err != nil {
		t.Fatalf("published receipt keys: %d %s %v", code, doc, err)
	}
	if code, did := get(t, base+"/.well-known/did.json"); code != 200 || !strings.Contains(did, pub.Keys[0].KID) {
		t.Fatalf("did.json %d %s does not name %s", code, did, pub.Keys[0].KID)
	}
	v, err := pub.Verify(receipt.Evidence{PaymentResponse: base64.StdEncoding.EncodeToString([]byte(settlementJSON)), Body: []byte(body),
		ResourceURL: base + "/v1/proxy/1gb"}, time.Now())
	if err != nil {
		t.Fatalf("proxy sale receipt: %v", err)
	}
	s := v.Statement.Subject
	if v.Statement.Settlement != receipt.Settled || s == nil || s.Kind != "proxy-package" || s.KeySHA256 != receipt.SHA256Hex([]byte(key)) || !strings.Contains(s.Terms, "gb=1") {
		t.Fatalf("proxy sale statement: %+v subject %+v", v.Statement, s)
	}
}
