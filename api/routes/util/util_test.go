package util_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/routes/util"
	"github.com/peage/appliance/internal/egress"
)

// harness serves the real catalog with the utility family bound, allowed to reach the given
// local servers only.
func harness(t *testing.T, allow ...*httptest.Server) (*apitest.Harness, *apitest.RecordingGate) {
	t.Helper()
	var hosts []string
	for _, s := range allow {
		hosts = append(hosts, strings.TrimPrefix(s.URL, "http://"))
	}
	pol, err := egress.New(egress.Config{Allow: hosts})
	if err != nil {
		t.Fatal(err)
	}
	gate := &apitest.RecordingGate{}
	return apitest.StartFamily(t, catalog.DefaultNames(), util.With(pol), apitest.Options{Gate: gate}), gate
}

func getJSON(t *testing.T, h *apitest.Harness, path string, q url.Values) (int, map[string]any) {
	t.Helper()
	resp, err := h.Client.Get(h.BaseURL + path + "?" + q.Encode()) // the harness's client checks the answer's shape
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: %s", path, b)
	}
	return resp.StatusCode, out
}

func TestUnwrap(t *testing.T) {
	var base string
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a":
			http.Redirect(w, r, "/b", http.StatusMovedPermanently)
		case "/b":
			http.Redirect(w, r, base+"/c", http.StatusFound)
		case "/c":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<html><head><meta http-equiv="refresh" content="0; url=/d"></head></html>`)
		case "/d":
			fmt.Fprint(w, "end")
		case "/loop1":
			http.Redirect(w, r, "/loop2", http.StatusFound)
		case "/loop2":
			http.Redirect(w, r, "/loop1", http.StatusFound)
		case "/private":
			http.Redirect(w, r, "http://10.0.0.1/admin", http.StatusFound)
		}
	}))
	defer target.Close()
	base = target.URL
	h, gate := harness(t, target)

	code, out := getJSON(t, h, "/v1/url/unwrap", url.Values{"url": {base + "/a"}})
	if code != 200 || out["final_url"] != base+"/d" || out["hops"] != 3.0 || out["loop"] != false {
		t.Fatalf("%d %v", code, out)
	}
	chain := out["chain"].([]any)
	if chain[2].(map[string]any)["via"] != "meta-refresh" || chain[0].(map[string]any)["status"] != 301.0 {
		t.Fatalf("chain %v", chain)
	}
	// The last hop redirects nowhere: its location is there, null, as the spec names it.
	if last := chain[3].(map[string]any); last["status"] != 200.0 {
		t.Fatalf("last hop %v", last)
	} else if loc, present := last["location"]; !present || loc != nil {
		t.Errorf("last hop's location %v (present %v), want null", loc, present)
	}

	_, out = getJSON(t, h, "/v1/url/unwrap", url.Values{"url": {base + "/loop1"}})
	if out["loop"] != true {
		t.Fatalf("loop not detected: %v", out)
	}

	_, out = getJSON(t, h, "/v1/url/unwrap", url.Values{"url": {base + "/private"}})
	if s, _ := out["stopped"].(string); !strings.Contains(s, "private") {
		t.Fatalf("redirect to a private address not stopped: %v", out)
	}

	code, out = getJSON(t, h, "/v1/url/unwrap", url.Values{"url": {"http://169.254.169.254/latest/meta-data"}})
	if code != 400 || out["error"].(map[string]any)["param"] != "url" {
		t.Fatalf("metadata address: %d %v", code, out)
	}
	charged, waived := gate.Counts()
	if charged != 3 || waived != 1 {
		t.Fatalf("charged %d waived %d", charged, waived)
	}
}

func TestUnwrapUnreachableTargetIsNotCharged(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close() // its port now refuses connections
	h, gate := harness(t, dead)
	code, out := getJSON(t, h, "/v1/url/unwrap", url.Values{"url": {dead.URL + "/x"}})
	if code != 502 || out["error"].(map[string]any)["upstream"] != "target" {
		t.Fatalf("%d %v", code, out)
	}
	if charged, _ := gate.Counts(); charged != 0 {
		t.Fatal("a failed call was charged")
	}
}

// TestInspectOurOwnChallenge points the inspector at the appliance's own 402: it must find a
// compliant x402 v2 challenge (plain HTTP being the only, advisory, remark).
func TestInspectOurOwnChallenge(t *testing.T) {
	cat, _ := catalog.Default(catalog.DefaultNames())
	_ = cat.Bind("fr.tva", func(context.Context, *catalog.Request) (any, error) { return map[string]any{}, nil }, nil)
	self := apitest.Start(t, cat, apitest.Options{})
	pol, _ := egress.New(egress.Config{Allow: []string{strings.TrimPrefix(self.BaseURL, "http://")}})
	icat, _ := catalog.Default(catalog.DefaultNames())
	_ = util.With(pol).Bind(icat)
	h := apitest.Start(t, icat, apitest.Options{CheckShapes: true, Gate: &apitest.RecordingGate{}})

	code, out := getJSON(t, h, "/v1/x402/inspect", url.Values{"url": {self.BaseURL + "/v1/fr/tva?siren=542065479"}})
	if code != 200 || out["x402_compliant"] != true || out["x402_version"] != 2.0 || out["amount_atomic"] != "5000" || out["amount_usdc"] != "0.005" {
		t.Fatalf("%d %v", code, out)
	}
	if probs := out["problems"].([]any); len(probs) != 1 || !strings.Contains(probs[0].(string), "plain HTTP") {
		t.Fatalf("problems %v", probs)
	}
}

func TestInspectFindsConcreteProblems(t *testing.T) {
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1only":
			w.WriteHeader(402)
			fmt.Fprint(w, `{"x402Version":1,"error":"pay","accepts":[{"scheme":"exact","network":"base","maxAmountRequired":"0.01","resource":"x","description":"d","mimeType":"application/json","payTo":"","maxTimeoutSeconds":60,"asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}]}`)
		case "/free":
			fmt.Fprint(w, "{}")
		}
	}))
	defer bad.Close()
	h, _ := harness(t, bad)
	_, out := getJSON(t, h, "/v1/x402/inspect", url.Values{"url": {bad.URL + "/v1only"}})
	probs := fmt.Sprint(out["problems"])
	for _, want := range []string{"v1 body", "positive integer in atomic units", "payTo", "EIP-712"} {
		if !strings.Contains(probs, want) {
			t.Errorf("problems lack %q: %s", want, probs)
		}
	}
	if out["x402_compliant"] != false || out["x402_version"] != 1.0 {
		t.Fatalf("%v", out)
	}
	_, out = getJSON(t, h, "/v1/x402/inspect", url.Values{"url": {bad.URL + "/free"}})
	if out["x402_compliant"] != false || !strings.Contains(fmt.Sprint(out["problems"]), "not 402") {
		t.Fatalf("%v", out)
	}
	// No challenge, so no network, recipient or amount: the spec's fields are there, null.
	for _, k := range []string{"network", "pay_to", "amount_atomic", "amount_usdc"} {
		if v, present := out[k]; !present || v != nil {
			t.Errorf("%s = %v (present %v), want null", k, v, present)
		}
	}
}
