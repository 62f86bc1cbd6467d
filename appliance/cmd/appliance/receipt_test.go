package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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
	d := startDev(t)
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
