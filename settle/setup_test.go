package settle

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/peage/appliance/settle/x402"
)

// TestMissing: what first-boot setup lacks is named (the daemon then starts and answers 503);
// a value present but wrong is not "missing" but a configuration error (Validate).
func TestMissing(t *testing.T) {
	creds := t.TempDir()
	t.Setenv("CREDENTIALS_DIRECTORY", creds)
	const addr = "0x1111111111111111111111111111111111111111"
	withKey := func(c Config) Config {
		if err := os.WriteFile(filepath.Join(creds, c.HotKeyFile), []byte("00"), 0o600); err != nil {
			t.Fatal(err)
		}
		return c
	}
	base := DefaultConfig()
	base.HotKeyFile = "hot-" + t.Name()
	cases := []struct {
		name string
		cfg  func() Config
		want []string
	}{
		{"nothing set", func() Config { return base }, []string{"payment.pay_to", "settle.rpc_url", "hot key"}},
		{"zero payout", func() Config {
			c := withKey(base)
			c.Payment.PayTo, c.RPCURL = "0x0000000000000000000000000000000000000000", "http://rpc"
			return c
		}, []string{"payment.pay_to"}},
		{"wrong payout is not missing", func() Config {
			c := withKey(base)
			c.Payment.PayTo, c.RPCURL = "nope", "http://rpc"
			return c
		}, nil},
		{"all set", func() Config {
			c := withKey(base)
			c.Payment.PayTo, c.RPCURL = addr, "http://rpc"
			return c
		}, nil},
	}
	for _, c := range cases {
		got := c.cfg().Missing()
		if len(got) != len(c.want) {
			t.Errorf("%s: %q, want items naming %v", c.name, got, c.want)
			continue
		}
		for i, w := range c.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: %q does not name %s", c.name, got[i], w)
			}
		}
		_ = os.Remove(filepath.Join(creds, base.HotKeyFile))
	}
}

// TestSetupHandler: before setup, /supported offers no kind and every facilitator call is a
// 503 that names what is missing.
func TestSetupHandler(t *testing.T) {
	h := SetupHandler([]string{"the payout address (config key payment.pay_to)"})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/supported", nil))
	var sup x402.SupportedResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &sup); rec.Code != 200 || err != nil || sup.Kinds == nil || len(sup.Kinds) != 0 {
		t.Fatalf("/supported: %d %s (%v)", rec.Code, rec.Body, err)
	}
	for _, path := range []string{"/verify", "/settle", "/reserve", "/batch/reserve"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader("{}")))
		if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "payment.pay_to") {
			t.Errorf("%s: %d %s", path, rec.Code, rec.Body)
		}
	}
}
