package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/internal/receipt"
	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/pay"
)

// TestReceiptVerifyCommand: a buyer keeps a paid answer of appliance dev as curl -i saves it;
// `appliance receipt verify` says it is valid, against the keys the box publishes or a saved
// copy, and names what fails in a forged one; `appliance receipt rotate` keeps the old key
// verifying for the overlap only.
func TestReceiptVerifyCommand(t *testing.T) {
	// The free route is called more often than the default burst of free calls allows.
	cfgPath := filepath.Join(t.TempDir(), "appliance.toml")
	if err := os.WriteFile(cfgPath, []byte("[api]\nfree_per_minute = 600\nfree_burst = 50\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDev(t, "--config", cfgPath)
	base := "http://" + d.api
	key, err := settle.LoadKey(filepath.Join(d.state, "dev-payer.key"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&pay.Client{Key: key}).Do(context.Background(), pay.Request{Method: "GET", URL: base + "/v1/fr/tva", Params: map[string]string{"siren": "542065479"}})
	if err != nil || res.Status != 200 {
		t.Fatalf("paid call: %v %+v", err, res)
	}
	dir := t.TempDir()
	save := func(name string, body []byte) string {
		var b bytes.Buffer
		b.WriteString("HTTP/1.1 200 OK\r\n")
		if err := res.Header.Write(&b); err != nil {
			t.Fatal(err)
		}
		b.WriteString("\r\n")
		b.Write(body)
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	kept := save("kept.http", res.Body)
	forged := append([]byte(nil), res.Body...)
	forged[len(forged)/2] ^= 1
	forgedFile := save("forged.http", forged)
	_, doc := get(t, base+"/.well-known/x402-receipt-keys.json")
	keysFile := filepath.Join(dir, "keys.json")
	if err := os.WriteFile(keysFile, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	// Rotation: the dev box's keys rotated, published within the overlap and after it.
	creds := t.TempDir()
	if orig, err := os.ReadFile(filepath.Join(d.state, receipt.CredentialName)); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(filepath.Join(creds, receipt.CredentialName), orig, 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := receiptTo(context.Background(), &out, []string{"rotate", "--credentials", creds, "--overlap", "1h"}); err != nil {
		t.Fatal(err)
	}
	rotated, _ := os.ReadFile(filepath.Join(creds, receipt.CredentialName))
	published := func(at time.Time) string {
		kr, err := receipt.ParseKeyring(string(rotated), base, at)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, at.Format("150405.000")+".json")
		b, _ := json.Marshal(kr.Published())
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name string
		args []string
		want string // in the output
		ok   bool
	}{
		{"kept answer, keys from the box", []string{"--response", kept, "--url", base + "/v1/fr/tva?siren=542065479"}, "VALID: eip712 receipt", true},
		{"kept answer, keys saved offline", []string{"--response", kept, "--keys", keysFile}, "VALID: eip712 receipt", true},
		{"header and body given apart", []string{"--payment-response", res.Header.Get("Payment-Response"), "--body", writeTemp(t, dir, res.Body)}, "VALID", true},
		{"rotated, within the overlap", []string{"--response", kept, "--keys", published(time.Now())}, "VALID", true},
		{"body changed by one byte", []string{"--response", forgedFile}, "body is not the one delivered", false},
		{"another resource", []string{"--response", kept, "--url", base + "/v1/chain/block"}, "receipt is for " + base + "/v1/fr/tva", false},
		{"rotated out", []string{"--response", kept, "--keys", published(time.Now().Add(2 * time.Hour))}, "is not a published key", false},
	}
	// appliance ledger lists the payment with its receipt kept (stored just after the answer).
	pub, err := receipt.ParsePublished([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	v, err := pub.Verify(receipt.Evidence{PaymentResponse: res.Header.Get("Payment-Response"), Body: res.Body}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for listed := ""; !strings.Contains(listed, v.Statement.Nonce+"  kept"); {
		var out bytes.Buffer
		if err := ledgerTo(context.Background(), &out, []string{"-state-dir", d.state}); err != nil {
			t.Fatal(err)
		}
		listed = out.String()
	}
	// The same checks through the free route.
	routeCases := []struct {
		name   string
		params map[string]string
		status int
		want   string
	}{
		{"valid", map[string]string{"payment_response": res.Header.Get("Payment-Response"), "body": string(res.Body), "url": base + "/v1/fr/tva?siren=542065479"}, 200, `"valid":true`},
		{"valid, body in base64", map[string]string{"payment_response": res.Header.Get("Payment-Response"), "body_base64": base64.StdEncoding.EncodeToString(res.Body)}, 200, `"valid":true`},
		{"body changed by one byte", map[string]string{"payment_response": res.Header.Get("Payment-Response"), "body": string(forged)}, 200, "body is not the one delivered"},
		{"another resource", map[string]string{"payment_response": res.Header.Get("Payment-Response"), "body": string(res.Body), "url": base + "/v1/chain/block"}, 200, "receipt is for"},
		{"not base64", map[string]string{"payment_response": "this is not a header!", "body": "x"}, 400, "payment_response"},
		{"body twice", map[string]string{"payment_response": res.Header.Get("Payment-Response"), "body": "x", "body_base64": "eA=="}, 400, "body_base64"},
	}
	for _, c := range routeCases {
		t.Run("route "+c.name, func(t *testing.T) {
			b, _ := json.Marshal(c.params)
			resp, err := http.Post(base+"/free/receipt/verify", "application/json", bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != c.status || !strings.Contains(string(got), c.want) {
				t.Fatalf("%d %s, want %d with %q", resp.StatusCode, got, c.status, c.want)
			}
		})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			err := receiptTo(context.Background(), &out, append([]string{"verify"}, c.args...))
			if c.ok != (err == nil) || (!c.ok && !errors.Is(err, ErrReceiptInvalid)) || !strings.Contains(out.String(), c.want) {
				t.Fatalf("verify: %v\n%s\nwant %q", err, out.String(), c.want)
			}
		})
	}
}

func writeTemp(t *testing.T, dir string, b []byte) string {
	t.Helper()
	f, err := os.CreateTemp(dir, "body")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}
