package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
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
	go func() {
		done <- runDev(ctx, []string{"--api-addr", api, "--admin-addr", admin, "--proxy-addr", freeAddr(t), "--state-dir", t.TempDir()})
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
