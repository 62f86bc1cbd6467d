package browserfarm_test

import (
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/peage/appliance/browserfarm"
	"github.com/peage/appliance/browserfarm/farmerr"
)

// otherPort is the port of a live loopback server the policy does not allow: if any case
// leaked, that server would count a hit.
func otherPort(t *testing.T) string {
	u, err := url.Parse(env.Other.URL)
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(u.Host)
	return port
}

// TestSSRFMainURL: a forbidden target answers 400 naming the reason before any browser work.
func TestSSRFMainURL(t *testing.T) {
	port := otherPort(t)
	cases := []struct{ name, url, reason string }{
		{"loopback_by_name", "http://localhost:" + port + "/", "loopback"},
		{"loopback_subdomain_name", "http://api.localhost:" + port + "/", "loopback"},
		{"loopback_by_number", "http://127.0.0.1:" + port + "/", "loopback"},
		{"loopback_other_127", "http://127.8.9.10:" + port + "/", "loopback"},
		{"ipv6_loopback", "http://[::1]:" + port + "/", "loopback"},
		{"private_10", "http://10.1.2.3/", "private"},
		{"private_172_16", "http://172.20.0.1/", "private"},
		{"private_192_168", "http://192.168.0.1/", "private"},
		{"metadata", "http://169.254.169.254/latest/meta-data/", "metadata"},
		{"link_local", "http://169.254.1.1/", "link-local"},
		{"cgnat_100_64", "http://100.64.0.1/", "carrier-grade NAT"},
		{"decimal_ipv4", "http://2130706433:" + port + "/", "loopback"},
		{"octal_ipv4", "http://0177.0.0.1:" + port + "/", "loopback"},
		{"hex_ipv4", "http://0x7f000001:" + port + "/", "loopback"},
		{"short_ipv4", "http://127.1:" + port + "/", "loopback"},
		{"ipv4_mapped_ipv6_loopback", "http://[::ffff:127.0.0.1]:" + port + "/", "loopback"},
		{"ipv4_mapped_ipv6_private", "http://[::ffff:10.0.0.1]/", "private"},
		{"unspecified", "http://0.0.0.0:" + port + "/", "unspecified"},
		{"ula_ipv6", "http://[fd00::1]/", "unique-local"},
		{"non_http_scheme", "file:///etc/passwd", "http or https"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := env.Farm.Stats().JobsDone
			_, err := do(t, browserfarm.Task{URL: c.url})
			var e *farmerr.Error
			if !errorsAs(err, &e) || e.Kind != farmerr.Refused {
				t.Fatalf("want 400 bad_param url, got %v", err)
			}
			if !strings.Contains(e.Message, c.reason) {
				t.Errorf("message %q does not name %q", e.Message, c.reason)
			}
			if env.Farm.Stats().JobsDone != before {
				t.Error("a refused URL used a browser")
			}
			if n := env.OtherHits.Load(); n != 0 {
				t.Fatalf("the forbidden server was reached %d times", n)
			}
		})
	}
}

// TestSSRFThroughBrowser: the target itself sends the browser to a forbidden address; the
// filtering proxy refuses the hop and the call answers 400 naming the reason.
func TestSSRFThroughBrowser(t *testing.T) {
	port := otherPort(t)
	cases := []struct{ name, to, reason string }{
		{"redirect_to_private_10", "http://10.0.0.1/admin", "private"},
		{"redirect_to_loopback", "http://127.0.0.1:" + port + "/", "loopback"},
		{"redirect_to_localhost_name", "http://localhost:" + port + "/", "loopback"},
		{"redirect_to_metadata", "http://169.254.169.254/latest/meta-data/", "metadata"},
		{"redirect_to_decimal_ip", "http://2130706433:" + port + "/", "loopback"},
		{"redirect_https_to_private", "https://192.168.1.1/", "private"},
		{"redirect_to_ipv6_loopback", "http://[::1]:" + port + "/", "loopback"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := do(t, browserfarm.Task{URL: env.URL("/redirect-to?u=" + url.QueryEscape(c.to))})
			var e *farmerr.Error
			if !errorsAs(err, &e) || e.Kind != farmerr.Refused {
				t.Fatalf("want 400 bad_param url, got %v", err)
			}
			if !strings.Contains(e.Message, c.reason) {
				t.Errorf("message %q does not name %q", e.Message, c.reason)
			}
			if n := env.OtherHits.Load(); n != 0 {
				t.Fatalf("the forbidden server was reached %d times", n)
			}
		})
	}
}

// TestSSRFAfterLoad: the target's page loads, then its own script or a meta refresh sends the
// tab to a forbidden address; the proxy's refusal page is not read as the target's page, the
// call answers 400 naming url, as a redirect to the same address does.
func TestSSRFAfterLoad(t *testing.T) {
	port := otherPort(t)
	cases := []struct{ name, path, to, reason string }{
		{"script_to_loopback", "/script-to", "http://127.0.0.1:" + port + "/", "loopback"},
		{"script_to_metadata", "/script-to", "http://169.254.169.254/latest/meta-data/", "metadata"},
		{"script_https_to_private", "/script-to", "https://10.0.0.1/", "private"},
		{"refresh_to_loopback", "/refresh-to", "http://127.0.0.1:" + port + "/", "loopback"},
		{"refresh_to_private", "/refresh-to", "http://192.168.1.1/", "private"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := do(t, browserfarm.Task{URL: env.URL(c.path + "?u=" + url.QueryEscape(c.to))})
			var e *farmerr.Error
			if !errorsAs(err, &e) || e.Kind != farmerr.Refused {
				landed := ""
				if res != nil {
					landed = res.Landed() + " " + res.Text
				}
				t.Fatalf("want 400 bad_param url, got %v %s", err, landed)
			}
			if !strings.Contains(e.Message, c.reason) {
				t.Errorf("message %q does not name %q", e.Message, c.reason)
			}
			if n := env.OtherHits.Load(); n != 0 {
				t.Fatalf("the forbidden server was reached %d times", n)
			}
		})
	}
}

// TestSSRFSubresources: an allowed page that embeds an iframe, images and fetch() calls to
// private addresses loads, and each refused request is reported with its reason.
func TestSSRFSubresources(t *testing.T) {
	res, err := do(t, browserfarm.Task{URL: env.URL("/ssrf-subresources")})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"iframe_private_10":   "10.0.0.1",
		"image_private_192":   "192.168.1.1",
		"image_metadata":      "169.254.169.254",
		"fetch_private_172":   "172.16.0.1",
		"fetch_https_cgnat64": "100.64.0.1",
		"websocket_private":   "10.9.8.7",
	}
	for name, host := range want {
		t.Run(name, func(t *testing.T) {
			for _, b := range res.Blocked {
				if strings.Contains(b.URL, host) {
					if b.Reason == "" {
						t.Errorf("%s blocked without a reason", b.URL)
					}
					return
				}
			}
			t.Errorf("no refused request to %s in %+v", host, res.Blocked)
		})
	}
	if !strings.Contains(res.Text, "An innocent page.") {
		t.Errorf("the allowed page itself did not load: %q", res.Text)
	}
}
