package paywall_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/settle/x402"
)

// TestPaidAnswerCORS: a browser script that pays reads the receipt and the request ID of its
// answer (the server's whole Access-Control-Expose-Headers list, which the receipt's header
// once replaced by a shorter one); an agent's plain paid call carries no CORS header.
func TestPaidAnswerCORS(t *testing.T) {
	w := startPaid(t, paywall.Policy{})
	for _, c := range []struct {
		name   string
		origin string
	}{{"browser", "https://agent.example"}, {"plain client", ""}} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", w.h.BaseURL+"/v1/test/echo?q=x", nil)
			req.Header.Set(x402.HeaderPaymentSignature, enc(t, w.signed(t, "/v1/test/echo", 2)))
			if c.origin != "" {
				req.Header.Set("Origin", c.origin)
			}
			resp, err := w.h.Client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || resp.Header.Get(x402.HeaderPaymentResponse) == "" {
				t.Fatalf("paid call: %d, receipt %q", resp.StatusCode, resp.Header.Get(x402.HeaderPaymentResponse))
			}
			expose := resp.Header.Get("Access-Control-Expose-Headers")
			if c.origin == "" {
				if expose != "" || resp.Header.Get("Access-Control-Allow-Origin") != "" {
					t.Fatalf("a request without Origin got CORS headers: expose %q", expose)
				}
				return
			}
			for _, name := range []string{x402.HeaderPaymentResponse, "X-Request-Id"} {
				if !strings.Contains(expose, name) {
					t.Fatalf("Access-Control-Expose-Headers %q does not list %s", expose, name)
				}
			}
		})
	}
}
