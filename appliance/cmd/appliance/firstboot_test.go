package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/peage/appliance/appliance/config"
	"github.com/peage/appliance/internal/credential"
	"github.com/peage/appliance/internal/receipt"
	"github.com/peage/appliance/settle"
)

// TestFirstbootMakesSecretsOnce: the secrets are made on the box at the first run, private to
// root, and never replaced by a later run; the payout address is recorded for the units.
func TestFirstbootMakesSecretsOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "credentials")
	env := filepath.Join(t.TempDir(), "setup.env")
	if err := os.WriteFile(env, []byte("PEAGE_LOG_LEVEL=warn\nPEAGE_PAYMENT_PAY_TO=0x1111111111111111111111111111111111111111\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := firstbootTo(&out, []string{"--credentials", dir, "--setup-env", env}); err != nil {
		t.Fatal(err)
	}
	first := map[string]string{}
	for _, name := range []string{credential.OperatorToken, credential.SettleHotKey, receipt.CredentialName} {
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v, want mode 0600", name, err, fi)
		}
		b, _ := os.ReadFile(p)
		first[name] = string(b)
		if !strings.Contains(out.String(), "created: "+p) || strings.Contains(out.String(), strings.TrimSpace(string(b))) {
			t.Fatalf("first run said %q: want it to name %s and never print the secret", out.String(), p)
		}
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Fatalf("credentials directory mode %v, want 0700", fi.Mode().Perm())
	}
	if tok := strings.TrimSpace(first[credential.OperatorToken]); len(tok) != 64 {
		t.Fatalf("operator token %q, want 32 random bytes in hex", tok)
	}
	addr, err := settle.KeyAddress(filepath.Join(dir, credential.SettleHotKey))
	if err != nil || !strings.Contains(out.String(), "gas from "+addr) {
		t.Fatalf("hot key address %s %v not said in %q", addr, err, out.String())
	}

	out.Reset()
	payTo := "0xAbCdEf0123456789aBcDeF0123456789AbCdEf01"
	if err := firstbootTo(&out, []string{"--credentials", dir, "--setup-env", env, "--pay-to", payTo}); err != nil {
		t.Fatal(err)
	}
	for name, was := range first {
		if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != was {
			t.Fatalf("a second run replaced %s", name)
		}
	}
	b, _ := os.ReadFile(env)
	if want := "PEAGE_LOG_LEVEL=warn\nPEAGE_PAYMENT_PAY_TO=" + payTo + "\n"; string(b) != want {
		t.Fatalf("setup.env:\n%s\nwant:\n%s", b, want)
	}

	for _, bad := range []string{"nope", "0x0000000000000000000000000000000000000000", "0x123"} {
		if err := firstbootTo(&out, []string{"--credentials", dir, "--setup-env", env, "--pay-to", bad}); err == nil || !strings.Contains(err.Error(), "--pay-to") {
			t.Errorf("--pay-to %s: %v, want an error naming --pay-to", bad, err)
		}
	}
}

// TestOperatorPortCredential: on loopback the operator port is open to local clients; bound
// beyond loopback it needs the first-boot credential, and refuses to start without one.
func TestOperatorPortCredential(t *testing.T) {
	creds := t.TempDir()
	t.Setenv("CREDENTIALS_DIRECTORY", creds)
	for _, addr := range []string{"127.0.0.1:8403", "[::1]:8403", "localhost:8403"} {
		if tok, err := operatorToken(config.Admin{Addr: addr, TokenFile: credential.OperatorToken}); tok != "" || err != nil {
			t.Errorf("%s: %q %v, want no credential needed", addr, tok, err)
		}
	}
	for _, addr := range []string{"0.0.0.0:8403", "192.168.1.20:8403", ":8403", "[::]:8403"} {
		if _, err := operatorToken(config.Admin{Addr: addr, TokenFile: credential.OperatorToken}); err == nil || !strings.Contains(err.Error(), "admin.token_file") {
			t.Errorf("%s without a credential: %v, want an error naming admin.token_file", addr, err)
		}
	}
	if _, err := credential.Create(creds, credential.OperatorToken, func() (string, error) { return "s3cret-token", nil }); err != nil {
		t.Fatal(err)
	}
	tok, err := operatorToken(config.Admin{Addr: "0.0.0.0:8403", TokenFile: credential.OperatorToken})
	if err != nil || tok != "s3cret-token" {
		t.Fatalf("token %q %v", tok, err)
	}
	h := requireToken(tok, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	cases := []struct {
		name string
		set  func(*http.Request)
		want int
	}{
		{"none", func(*http.Request) {}, http.StatusUnauthorized},
		{"bearer", func(r *http.Request) { r.Header.Set("Authorization", "Bearer s3cret-token") }, http.StatusOK},
		{"basic password", func(r *http.Request) { r.SetBasicAuth("anyone", "s3cret-token") }, http.StatusOK},
		{"wrong bearer", func(r *http.Request) { r.Header.Set("Authorization", "Bearer s3cret-tokeN") }, http.StatusUnauthorized},
		{"token as basic user", func(r *http.Request) { r.SetBasicAuth("s3cret-token", "") }, http.StatusUnauthorized},
		{"empty bearer", func(r *http.Request) { r.Header.Set("Authorization", "Bearer ") }, http.StatusUnauthorized},
	}
	for _, c := range cases {
		r := httptest.NewRequest(http.MethodGet, "/healthz", nil)
		c.set(r)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("%s: %d, want %d", c.name, w.Code, c.want)
		}
		if w.Code == http.StatusUnauthorized && !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Basic ") {
			t.Errorf("%s: 401 without a Basic challenge", c.name)
		}
	}
}
