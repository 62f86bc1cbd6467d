package proxyd

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peage/appliance/internal/connecthead"
	"github.com/peage/appliance/internal/testenv"
	"github.com/peage/appliance/proxyd/client"
)

// echoServer answers like ipinfo.io and counts the requests that reached it.
func echoServer(t *testing.T, body string) (*httptest.Server, *atomic.Int64) {
	var hits atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(ts.Close)
	return ts, &hits
}

func saleEnv(t *testing.T, echoURL string, mut func(*Config)) *env {
	host := strings.TrimPrefix(echoURL, "http://")
	_, p, _ := net.SplitHostPort(host)
	port, _ := strconv.Atoi(p)
	return newEnv(t, func(c *Config) {
		c.Ports = append(c.Ports, port)
		c.AllowEgress = append(c.AllowEgress, host)
		c.EchoURLs = []string{echoURL + "/json"}
		c.ExpectedCountry = "FR"
		c.ExpectedASNs = []string{"AS3215"}
		if mut != nil {
			mut(c)
		}
	})
}

const orangeEcho = `{"ip":"90.12.34.56","country":"FR","org":"AS3215 Orange S.A."}`

func TestSellChecksExitThroughTheProxy(t *testing.T) {
	ts, hits := echoServer(t, orangeEcho)
	e := saleEnv(t, ts.URL, nil)
	sale, err := e.s.Sell(context.Background(), 5)
	if err != nil {
		t.Fatal(err)
	}
	if hits.Load() != 1 {
		t.Fatalf("echo reached %d times", hits.Load())
	}
	if sale.GB != 5 || sale.Bytes != 5<<30 || sale.ValidDays != 30 || len(sale.Key) < 34 {
		t.Fatalf("sale %+v", sale)
	}
	if sale.Exit.ASN != "AS3215" || sale.Exit.Country != "FR" || sale.Exit.Carrier != "Orange S.A." || sale.Exit.IP != "90.12.34.56" {
		t.Fatalf("exit %+v", sale.Exit)
	}
	if sale.ExpiresAt.Sub(sale.CreatedAt) != 30*24*3600e9 {
		t.Fatalf("validity %v", sale.ExpiresAt.Sub(sale.CreatedAt))
	}
	u, err := e.s.Usage(context.Background(), sale.Key)
	if err != nil || u.Bytes != 5<<30 || u.Used != 0 {
		t.Fatalf("usage %+v %v", u, err)
	}
	// The probe's own trip is not metered to anyone and leaves no package behind.
	if st := e.s.Stats(); st.Packages != 1 {
		t.Fatalf("packages %d", st.Packages)
	}
}

func TestSellRefusedWhenExitIsWrongOrDown(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		down bool
	}{
		{"hosting ASN", `{"ip":"3.3.3.3","country":"FR","org":"AS16509 Amazon.com"}`, false},
		{"wrong country", `{"ip":"90.12.34.56","country":"DE","org":"AS3215 Orange S.A."}`, false},
		{"not json", `<html>`, false},
		{"echo unreachable", orangeEcho, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, _ := echoServer(t, tc.body)
			e := saleEnv(t, ts.URL, nil)
			if tc.down {
				ts.Close()
			}
			sale, err := e.s.Sell(context.Background(), 1)
			if !client.IsCode(err, client.CodeExitDown) || sale != nil {
				t.Fatalf("sale %+v, err %v; want exit_down", sale, err)
			}
			if st := e.s.Stats(); st.Packages != 0 {
				t.Fatalf("a package was issued: %d", st.Packages)
			}
		})
	}
}

func TestSellRespectsEgressPolicy(t *testing.T) {
	// The echo endpoint is local and NOT allowed: the check must fail the way a buyer's
	// tunnel would, proving it goes through the proxy's policy.
	ts, hits := echoServer(t, orangeEcho)
	e := newEnv(t, func(c *Config) { c.EchoURLs = []string{ts.URL} })
	if _, err := e.s.Sell(context.Background(), 1); !client.IsCode(err, client.CodeExitDown) {
		t.Fatalf("err %v", err)
	}
	if hits.Load() != 0 {
		t.Fatal("the exit check bypassed the proxy's egress policy")
	}
}

func TestParseEcho(t *testing.T) {
	for _, tc := range []struct {
		body string
		want client.Exit
	}{
		{orangeEcho, client.Exit{IP: "90.12.34.56", Country: "FR", ASN: "AS3215", Carrier: "Orange S.A."}},
		{`{"query":"1.2.3.4","countryCode":"FR","country":"France","as":"AS12322 Free SAS","isp":"Free SAS","mobile":false}`,
			client.Exit{IP: "1.2.3.4", Country: "FR", ASN: "AS12322", Carrier: "Free SAS"}},
		{`{"ip":"5.6.7.8","asn":{"asn":51207,"org":"Free Mobile SAS"},"location":{},"country_code":"FR","mobile":true}`,
			client.Exit{IP: "5.6.7.8", Country: "FR", ASN: "AS51207", Carrier: "Free Mobile SAS", Mobile: true}},
	} {
		got, err := parseEcho([]byte(tc.body))
		if err != nil || got != tc.want {
			t.Errorf("%s:\n got %+v %v\nwant %+v", tc.body, got, err, tc.want)
		}
	}
	if _, err := parseEcho([]byte(`{"country":"FR"}`)); err == nil {
		t.Error("an answer without ip was accepted")
	}
}

func TestStatusReachability(t *testing.T) {
	ts, _ := echoServer(t, orangeEcho)
	probe := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]bool{"reachable": r.URL.Query().Get("target") == "127.0.0.1:8118"})
	}))
	defer probe.Close()
	for _, tc := range []struct {
		name  string
		probe string
		want  client.Reachability
	}{
		{"no probe configured", "", client.Unknown},
		{"probe says yes", probe.URL + "/?target={host}:{port}", client.Reachable},
		{"probe says no", probe.URL + "/?target={host}:1", client.Unreachable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := saleEnv(t, ts.URL, func(c *Config) { c.ReachabilityURL = tc.probe })
			st, err := e.s.Status(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !st.Live || st.Exit == nil || st.Exit.ASN != "AS3215" || st.Reachable != tc.want || st.ReachableNote == "" {
				t.Fatalf("status %+v", st)
			}
		})
	}
}

func TestAdminOverUnixSocket(t *testing.T) {
	ts, _ := echoServer(t, orangeEcho)
	e := saleEnv(t, ts.URL, nil)
	sock := filepath.Join(t.TempDir(), "a.sock")
	ln, err := ListenAdmin(sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = e.s.ServeAdmin(ctx, ln); close(done) }()
	defer func() { cancel(); <-done }()
	c := client.New(sock)
	defer c.Close()
	var svc client.Service = c
	sale, err := svc.Sell(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	u, err := svc.Usage(ctx, sale.Key)
	if err != nil || u.State != "valid" || u.Bytes != 1<<30 {
		t.Fatalf("usage %+v %v", u, err)
	}
	if _, err := svc.Usage(ctx, "nope"); !client.IsCode(err, client.CodeUnknownKey) {
		t.Fatalf("unknown key: %v", err)
	}
	if err := svc.Revoke(ctx, sale.Key); err != nil {
		t.Fatal(err)
	}
	if u, _ := svc.Usage(ctx, sale.Key); u.State != "revoked" {
		t.Fatalf("after revoke: %+v", u)
	}
	// The operator's dashboard reads the counters over the same socket. The exit check's
	// tunnel ends on its own after the sale answered: compare once it has.
	for i := 0; i < 1000 && e.s.Stats().TunnelsOpen > 0; i++ {
		time.Sleep(2 * time.Millisecond)
	}
	if st, err := c.Stats(ctx); err != nil || st.Packages != 1 || st.PackagesActive != 0 || *st != e.s.Stats() {
		t.Fatalf("stats over the socket %+v %v, in process %+v", st, err, e.s.Stats())
	}
	if _, err := svc.Sell(ctx, 0); !client.IsCode(err, client.CodeBadRequest) {
		t.Fatalf("gb 0: %v", err)
	}
}

func TestStartServesProxyAndAdmin(t *testing.T) {
	echo := httptest.NewServer(DevEchoHandler("FR", "AS3215", "Orange"))
	defer echo.Close()
	host := strings.TrimPrefix(echo.URL, "http://")
	_, p, _ := net.SplitHostPort(host)
	port, _ := strconv.Atoi(p)
	cfg := testConfig()
	cfg.AdminSocket = filepath.Join(t.TempDir(), "admin.sock")
	cfg.EchoURLs = []string{echo.URL}
	cfg.ExpectedCountry, cfg.ExpectedASNs = "FR", []string{"AS3215"}
	cfg.Ports = []int{port}
	cfg.AllowEgress = []string{host}
	s, err := New(context.Background(), cfg, Options{Store: NewMemStore()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addr, wait, err := s.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(cfg.AdminSocket)
	defer c.Close()
	sale, err := c.Sell(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if sale.Exit.Carrier != "Orange" || sale.Exit.IP != "127.0.0.1" {
		t.Fatalf("exit %+v", sale.Exit)
	}
	e := &env{t: t, addr: addr}
	if code, _, conn := e.connect(sale.Key, host); code != 200 {
		t.Fatalf("CONNECT with the sold key: %d", code)
	} else {
		_ = conn.Close()
	}
	cancel()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
}

func TestSellMeasuresSpeedThroughTheExit(t *testing.T) {
	ts, _ := echoServer(t, orangeEcho)
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(make([]byte, 1<<20))
	}))
	defer big.Close()
	bhost := strings.TrimPrefix(big.URL, "http://")
	_, p, _ := net.SplitHostPort(bhost)
	port, _ := strconv.Atoi(p)
	e := saleEnv(t, ts.URL, func(c *Config) {
		c.SpeedURL, c.SpeedBytes = big.URL, 512<<10
		c.Ports = append(c.Ports, port)
		c.AllowEgress = append(c.AllowEgress, bhost)
	})
	sale, err := e.s.Sell(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if sale.Speed.ProbeBytes != 512<<10 || sale.Speed.DownBitsPerSec <= 0 || !strings.HasPrefix(sale.Speed.Method, "download") {
		t.Fatalf("speed %+v", sale.Speed)
	}
}

func TestStatusIsCached(t *testing.T) {
	ts, hits := echoServer(t, orangeEcho)
	e := saleEnv(t, ts.URL, nil)
	for i := 0; i < 3; i++ {
		if st, err := e.s.Status(context.Background()); err != nil || !st.Live {
			t.Fatalf("status %+v %v", st, err)
		}
	}
	if hits.Load() != 1 {
		t.Fatalf("3 status calls within the TTL reached the echo %d times", hits.Load())
	}
	e.advance(2 * time.Minute)
	if _, err := e.s.Status(context.Background()); err != nil || hits.Load() != 2 {
		t.Fatalf("after the TTL: %v, %d echo hits", err, hits.Load())
	}
}

func TestStartDevSellsOffline(t *testing.T) {
	testenv.NeedsChain(t)
	leakCheck(t)
	dir := t.TempDir()
	src := newByteServer(t)
	cfg := DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.PublicPort = 8118
	s, stop, err := StartDev(context.Background(), cfg, dir, []string{src.addr}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	sale, err := s.Sell(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if sale.Exit.Country != "FR" || sale.Exit.ASN != "AS0" || sale.ProxyHost != "127.0.0.1" {
		t.Fatalf("dev sale %+v", sale)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	// The package is durable: a fresh store in the same directory has it.
	st, err := OpenStateStore(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	pkgs, _ := st.All(context.Background())
	if len(pkgs) != 1 || pkgs[0].ID != connecthead.KeyHash(sale.Key) {
		t.Fatalf("packages after restart: %+v", pkgs)
	}
}
