package server_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
)

// TestCORSOnlyForBrowsers: a browser script's request (it names its Origin) gets the CORS
// headers that let it read the answer and its payment headers; an agent's plain request gets
// none of those bytes. Caches are told the answer varies by Origin wherever they may store it.
func TestCORSOnlyForBrowsers(t *testing.T) {
	bind := func() *catalog.Catalog {
		cat, _ := catalog.Default(catalog.DefaultNames())
		_ = cat.Bind("fr.tva", func(context.Context, *catalog.Request) (any, error) { return map[string]any{}, nil }, nil)
		return cat
	}
	challenging := apitest.Start(t, bind(), apitest.Options{})
	serving := apitest.Start(t, bind(), apitest.Options{Gate: &apitest.RecordingGate{}})
	const origin = "https://agent.example"
	cases := []struct {
		name   string
		h      *apitest.Harness
		path   string
		origin string
		status int
		vary   bool
	}{
		{"402, plain client", challenging, "/v1/fr/tva?siren=542065479", "", 402, false},
		{"402, browser", challenging, "/v1/fr/tva?siren=542065479", origin, 402, false},
		{"400, plain client", challenging, "/v1/fr/tva?siren=123456789", "", 400, false},
		{"400, browser", challenging, "/v1/fr/tva?siren=123456789", origin, 400, false},
		{"200, plain client", serving, "/v1/fr/tva?siren=542065479", "", 200, true},
		{"200, browser", serving, "/v1/fr/tva?siren=542065479", origin, 200, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", c.h.BaseURL+c.path, nil)
			if c.origin != "" {
				req.Header.Set("Origin", c.origin)
			}
			resp, err := c.h.Client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, c.status)
			}
			allow, expose := resp.Header.Get("Access-Control-Allow-Origin"), resp.Header.Get("Access-Control-Expose-Headers")
			if c.origin == "" && (allow != "" || expose != "") {
				t.Fatalf("a request without Origin got CORS headers: %q, %q", allow, expose)
			}
			if c.origin != "" {
				if allow != "*" {
					t.Fatalf("Access-Control-Allow-Origin %q, want *", allow)
				}
				for _, name := range []string{"PAYMENT-REQUIRED", "PAYMENT-RESPONSE", "X-PAYMENT-RESPONSE", "X-Request-Id"} {
					if !strings.Contains(expose, name) {
						t.Fatalf("Access-Control-Expose-Headers %q does not list %s", expose, name)
					}
				}
			}
			if vary := strings.Contains(resp.Header.Get("Vary"), "Origin"); vary != c.vary {
				t.Fatalf("Vary %q, want Origin in it: %v", resp.Header.Get("Vary"), c.vary)
			}
		})
	}
}

// TestBrowserPreflight: a browser asks before sending a payment or naming the offers' format.
func TestBrowserPreflight(t *testing.T) {
	cat, _ := catalog.Default(catalog.DefaultNames())
	h := apitest.Start(t, cat, apitest.Options{})
	resp := h.Preflight(t, "GET", "/v1/fr/tva", "payment-signature,x-offer-receipt-format")
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("preflight %d, Access-Control-Allow-Origin %q", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
	}
	allowed := strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers"))
	for _, name := range []string{"payment-signature", "x-offer-receipt-format"} {
		if !strings.Contains(allowed, name) {
			t.Errorf("preflight allows %q, not %s", allowed, name)
		}
	}
}
