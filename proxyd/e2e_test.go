package proxyd

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	proxyroutes "github.com/peage/appliance/api/routes/proxy"
)

// TestSaleThroughTheAPI runs the real API server with the proxy routes bound to this proxyd:
// a sale answers the spec's fields and its proxy URL works; with the exit down the sale is a
// 503, the gate charges nothing, and no package exists.
func TestSaleThroughTheAPI(t *testing.T) {
	ts, _ := echoServer(t, orangeEcho)
	e := saleEnv(t, ts.URL, nil)
	_, p, _ := net.SplitHostPort(e.addr)
	e.s.cfg.PublicPort, _ = strconv.Atoi(p)
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	routes := proxyroutes.With(e.s, nil)
	if err := routes.Bind(cat); err != nil {
		t.Fatal(err)
	}
	if err := routes.CheckExit(context.Background()); err != nil { // nothing is sold before it
		t.Fatal(err)
	}
	gate := &apitest.RecordingGate{}
	h := apitest.Start(t, cat, apitest.Options{Gate: gate})

	get := func(path string, hdr http.Header) (int, map[string]any) {
		req, _ := http.NewRequest(http.MethodGet, h.BaseURL+path, nil)
		for k, v := range hdr {
			req.Header[k] = v
		}
		resp, err := h.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		return resp.StatusCode, m
	}

	code, sale := get("/v1/proxy/1gb", nil)
	if code != 200 {
		t.Fatalf("sale: %d %v", code, sale)
	}
	for _, f := range []string{"key", "gb", "valid_days", "tier", "proxy", "usage", "exit"} {
		if _, ok := sale[f]; !ok {
			t.Errorf("sale lacks %s: %v", f, sale)
		}
	}
	pu, err := url.Parse(sale["proxy"].(string))
	if err != nil {
		t.Fatal(err)
	}
	key, _ := pu.User.Password()
	code2, _, c := e.connect(key, e.src.addr)
	if code2 != 200 {
		t.Fatalf("the sold key does not open a tunnel: %d", code2)
	}
	if _, got := down(t, c, 4096); got != 4096 {
		t.Fatalf("got %d", got)
	}
	waitTunnels(t, e, key, 0)
	code, u := get("/free/proxy/usage", http.Header{"X-Proxy-Key": {key}})
	if code != 200 || u["used"].(float64) != 4096+float64(len("down 4096\n")) {
		t.Fatalf("usage: %d %v", code, u)
	}
	code, st := get("/free/proxy/status", nil)
	if r, present := st["reachable"]; code != 200 || !present || r != nil || st["carrier"] != "Orange S.A." { // no outside probe: unknown, null
		t.Fatalf("status: %d %v", code, st)
	}

	ts.Close() // the exit check now fails
	code, body := get("/v1/proxy/5gb", nil)
	if code != http.StatusServiceUnavailable {
		t.Fatalf("sale with the exit down: %d %v", code, body)
	}
	// Whether readiness or the sale itself noticed the dead exit, only the first sale was charged.
	if charged, _ := gate.Counts(); charged != 1 {
		t.Fatalf("charged %d calls, want 1", charged)
	}
	if n := e.s.Stats().Packages; n != 1 {
		t.Fatalf("%d packages after a failed sale, want 1", n)
	}
}
