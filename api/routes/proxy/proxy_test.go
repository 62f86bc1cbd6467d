package proxyroutes

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/proxyd/client"
)

// fakeProxyd records what the routes asked of proxyd.
type fakeProxyd struct {
	mu      sync.Mutex
	exitErr error
	issued  []string
	revoked []string
	usage   map[string]*client.Usage
	status  *client.Status
}

func (f *fakeProxyd) Sell(_ context.Context, gb int) (*client.Sale, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.exitErr != nil {
		return nil, f.exitErr
	}
	key := "pk" + strings.Repeat("a", 39) + string(rune('0'+len(f.issued)))
	f.issued = append(f.issued, key)
	return &client.Sale{Key: key, GB: gb, Bytes: int64(gb) << 30, ValidDays: 30, ProxyHost: "203.0.113.9", ProxyPort: 8118,
		ExpiresAt: time.Date(2026, 12, 22, 0, 0, 0, 0, time.UTC),
		Exit:      client.Exit{IP: "90.1.2.3", Country: "FR", ASN: "AS3215", Carrier: "Orange"}}, nil
}

func (f *fakeProxyd) Revoke(_ context.Context, key string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.revoked = append(f.revoked, key)
	return nil
}

func (f *fakeProxyd) Usage(_ context.Context, key string) (*client.Usage, error) {
	if u, ok := f.usage[key]; ok {
		return u, nil
	}
	return nil, &client.Error{Code: client.CodeUnknownKey, Message: "no"}
}

func (f *fakeProxyd) Status(context.Context) (*client.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.status == nil {
		return nil, &client.Error{Code: client.CodeUnavailable, Message: "down"}
	}
	return f.status, nil
}

func bound(t *testing.T, f *fakeProxyd) *catalog.Catalog {
	t.Helper()
	c, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	if err := With(f, nil).Bind(c); err != nil {
		t.Fatal(err)
	}
	return c
}

func call(t *testing.T, c *catalog.Catalog, id string, h http.Header) (any, error) {
	t.Helper()
	e := c.Entry(id)
	if e == nil || e.Handler == nil {
		t.Fatalf("%s not bound", id)
	}
	out, err := e.Handler(context.Background(), &catalog.Request{Route: e, Header: h, BaseURL: "https://api.example"})
	if err == nil {
		// What the harness's client checks of an answer served over HTTP.
		b, merr := json.Marshal(out)
		if raw, ok := out.(*catalog.Raw); ok {
			b, merr = raw.Body, nil
		}
		var doc any
		if merr != nil || json.Unmarshal(b, &doc) != nil {
			t.Fatalf("%s: the answer is not JSON: %v", id, merr)
		}
		if lack := e.MissingFields(doc); len(lack) > 0 {
			t.Errorf("%s: the answer lacks fields the spec names for it, or gives them another type: %s", e.Path, strings.Join(lack, ", "))
		}
	}
	return out, err
}

func TestSaleFields(t *testing.T) {
	for _, tc := range []struct {
		id string
		gb int
	}{{"proxy.1gb", 1}, {"proxy.5gb", 5}, {"proxy.20gb", 20}} {
		t.Run(tc.id, func(t *testing.T) {
			f := &fakeProxyd{}
			out, err := call(t, bound(t, f), tc.id, nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(out)
			var m map[string]any
			_ = json.Unmarshal(b, &m)
			key := f.issued[0]
			want := map[string]any{
				"key": key, "gb": float64(tc.gb), "valid_days": float64(30), "tier": "residential",
				"proxy": "http://buyer:" + key + "@203.0.113.9:8118",
			}
			for k, v := range want {
				if m[k] != v {
					t.Errorf("%s = %v, want %v", k, m[k], v)
				}
			}
			if u, _ := m["usage"].(string); !strings.Contains(u, "curl --proxy 'http://buyer:"+key+"@203.0.113.9:8118'") {
				t.Errorf("usage %q", u)
			}
			ex, _ := m["exit"].(map[string]any)
			if ex["carrier"] != "Orange" || ex["asn"] != "AS3215" || ex["mobile"] != false || ex["country"] != "FR" {
				t.Errorf("exit %v", ex)
			}
			if _, ok := m["speed"]; !ok {
				t.Error("no speed figure")
			}
			if u, _ := m["usage_check"].(string); !strings.Contains(u, "X-Proxy-Key: "+key) || strings.Contains(u, "?") {
				t.Errorf("usage_check %q", u)
			}
			// The gate revokes through the result when settlement fails.
			rv, ok := out.(interface{ Revoke(context.Context) error })
			if !ok {
				t.Fatal("sale result has no Revoke")
			}
			if err := rv.Revoke(context.Background()); err != nil || len(f.revoked) != 1 || f.revoked[0] != key {
				t.Fatalf("revoke: %v %v", err, f.revoked)
			}
		})
	}
}

func TestSaleExitDownIsUnavailableAndIssuesNothing(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"exit down", &client.Error{Code: client.CodeExitDown, Message: "exit not live: echo timeout"}},
		{"proxyd unreachable", &client.Error{Code: client.CodeUnavailable, Message: "dial unix"}},
		{"untyped", errors.New("boom")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeProxyd{exitErr: tc.err}
			out, err := call(t, bound(t, f), "proxy.1gb", nil)
			if out != nil || apierr.From(err).Status() != http.StatusServiceUnavailable {
				t.Fatalf("out %v err %v; want 503", out, err)
			}
			if len(f.issued) != 0 {
				t.Fatalf("issued %v", f.issued)
			}
		})
	}
}

func TestUsage(t *testing.T) {
	f := &fakeProxyd{usage: map[string]*client.Usage{"k1": {Bytes: 100, Used: 40, Remaining: 60, State: "valid"}}}
	c := bound(t, f)
	for _, tc := range []struct {
		name   string
		header http.Header
		status int
	}{
		{"missing header", nil, 400},
		{"unknown key", http.Header{"X-Proxy-Key": {"nope"}}, 404},
		{"known key", http.Header{"X-Proxy-Key": {"k1"}}, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := call(t, c, "free.proxy.usage", tc.header)
			if tc.status != 200 {
				if apierr.From(err).Status() != tc.status {
					t.Fatalf("err %v, want %d", err, tc.status)
				}
				return
			}
			u, ok := out.(*UsageResult)
			if err != nil || !ok || u.Used != 40 || u.Remaining != 60 || u.State != "valid" {
				t.Fatalf("%+v %v", out, err)
			}
		})
	}
}

func TestStatus(t *testing.T) {
	f := &fakeProxyd{}
	c := bound(t, f)
	if _, err := call(t, c, "free.proxy.status", nil); apierr.From(err).Status() != 503 {
		t.Fatalf("proxyd down: %v", err)
	}
	f.mu.Lock() // Bind started the first exit check in the background
	f.status = &client.Status{Live: true, Reachable: client.Unknown, ReachableNote: "no outside probe is configured",
		ProxyHost: "203.0.113.9", ProxyPort: 8118, Exit: &client.Exit{Carrier: "Orange", ASN: "AS3215", Country: "FR"}}
	f.mu.Unlock()
	out, err := call(t, c, "free.proxy.status", nil)
	st, ok := out.(*StatusResult)
	if err != nil || !ok || st.Carrier == nil || *st.Carrier != "Orange" || st.Reachable != nil || st.Exit.ASN != "AS3215" || st.Proxy != "http://203.0.113.9:8118" {
		t.Fatalf("%+v %v", out, err)
	}
}

// TestStatusReachableIsABoolean: /free/proxy/status says whether the port is reachable as the
// spec asks it, a boolean, null when no outside probe could tell, through the real server;
// without a live exit the carrier is there, null.
func TestStatusReachableIsABoolean(t *testing.T) {
	exit := &client.Exit{Carrier: "Orange", ASN: "AS3215", Country: "FR"}
	for _, tc := range []struct {
		name    string
		status  client.Status
		want    string
		carrier any
	}{
		{"reachable", client.Status{Live: true, Exit: exit, Reachable: client.Reachable}, "true", "Orange"},
		{"unreachable", client.Status{Live: true, Exit: exit, Reachable: client.Unreachable, ReachableNote: "probe saw a timeout"}, "false", "Orange"},
		{"unknown", client.Status{Live: true, Exit: exit, Reachable: client.Unknown, ReachableNote: "no outside probe is configured"}, "null", "Orange"},
		{"no exit", client.Status{Live: false, Problem: "no exit", Reachable: client.Unknown}, "null", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := apitest.Start(t, bound(t, &fakeProxyd{status: &tc.status}), apitest.Options{CheckShapes: true})
			status, m := h.GetObject(t, "/free/proxy/status", nil)
			got, present := m["reachable"]
			if b, _ := json.Marshal(got); status != 200 || !present || string(b) != tc.want {
				t.Fatalf("%d reachable %s (present %v), want %s: %v", status, b, present, tc.want, m)
			}
			if c, present := m["carrier"]; !present || c != tc.carrier {
				t.Errorf("carrier %v (present %v), want %v", c, present, tc.carrier)
			}
		})
	}
}

// TestNotSoldBeforeTheExitIsChecked: on a box just started, the packages are unavailable until
// the exit has been checked once, and stay so while the check fails: the daemon does not
// answer, the exit is not live, or the port is unreachable from the internet. Unknown
// reachability (no outside probe configured) does not block a sale.
func TestNotSoldBeforeTheExitIsChecked(t *testing.T) {
	live := client.Exit{IP: "90.1.2.3", Country: "FR", ASN: "AS3215"}
	cases := []struct {
		name   string
		status *client.Status
		want   string // in the readiness error; "" for ready
	}{
		{"daemon down", nil, "does not answer"},
		{"exit not live", &client.Status{Live: false, Problem: "country DE, want FR"}, "country DE, want FR"},
		{"port unreachable", &client.Status{Live: true, Exit: &live, Reachable: client.Unreachable, ReachableNote: "probe saw a timeout"}, "probe saw a timeout"},
		{"reachability unknown", &client.Status{Live: true, Exit: &live, Reachable: client.Unknown}, ""},
		{"reachable", &client.Status{Live: true, Exit: &live, Reachable: client.Reachable}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := With(&fakeProxyd{status: tc.status}, nil)
			if err := r.ready(); err != errExitUnchecked {
				t.Fatalf("before any check: %v, want %v", err, errExitUnchecked)
			}
			deadline := time.Now().Add(10 * time.Second)
			err := r.ready()
			for err == errExitUnchecked && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
				err = r.ready()
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("ready: %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("ready: %v, want an error naming %q", err, tc.want)
			}
		})
	}
}

// TestOneExitSellsOnlyWhereAsked: a single proxyd has one exit; a buyer asking another country
// or ASN gets a 503 and no key is issued, one asking its own gets the package.
func TestOneExitSellsOnlyWhereAsked(t *testing.T) {
	for _, tc := range []struct {
		country string
		asn     int64
		sold    bool
	}{
		{"DE", 0, false},
		{"fr", 0, true},
		{"FR", 3215, true},
		{"FR", 12322, false},
		{"", 0, true},
	} {
		f := &fakeProxyd{status: &client.Status{Live: true, Reachable: client.Reachable,
			Exit: &client.Exit{Country: "FR", ASN: "AS3215"}}}
		c := bound(t, f)
		e := c.Entry("proxy.1gb")
		args := catalog.Args{}
		if tc.country != "" {
			args["country"] = tc.country
		}
		if tc.asn != 0 {
			args["asn"] = tc.asn
		}
		_, err := e.Handler(context.Background(), &catalog.Request{Route: e, Args: args, BaseURL: "https://api.example"})
		if tc.sold != (err == nil) || tc.sold != (len(f.issued) == 1) {
			t.Fatalf("%s AS%d on an exit in FR AS3215: err %v, issued %d", tc.country, tc.asn, err, len(f.issued))
		}
		var ae *apierr.Error
		if !tc.sold && (!errors.As(err, &ae) || ae.Code != apierr.CodeUnavailable) {
			t.Fatalf("%s AS%d: %v, want unavailable (nothing charged)", tc.country, tc.asn, err)
		}
	}
}
