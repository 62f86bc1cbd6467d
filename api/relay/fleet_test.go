package relay_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/relay"
	"github.com/peage/appliance/api/routes/web"
	"github.com/peage/appliance/browserfarm/farmtest"
	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/fleet/box"
	"github.com/peage/appliance/internal/fleet/fleettest"
	"github.com/peage/appliance/internal/fleet/registry"
	"github.com/peage/appliance/internal/testenv"
)

// withWeb is a box catalog with the web family bound on env's real browser farm: a box
// whose line has a browser.
func withWeb(t *testing.T, env *farmtest.Env) *catalog.Catalog {
	t.Helper()
	cat := boxCatalog(t)
	if err := web.With(env.Farm, env.Policy).Bind(cat); err != nil {
		t.Fatal(err)
	}
	return cat
}

// post posts params as JSON to the gateway's path.
func (g *gateway) post(path string, params map[string]any) (int, http.Header, []byte) {
	g.t.Helper()
	body, err := json.Marshal(params)
	if err != nil {
		g.t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, g.api.BaseURL+path, bytes.NewReader(body))
	if err != nil {
		g.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return send(g.t, g.api, req)
}

// TestGatewayAndThreeBoxes: a gateway's API server and three boxes, a and b with a browser
// (a real Chromium farm), c without: the French VAT route spreads over the three, the web
// route over a and b only; c never announces it, so it never gets one of its calls.
func TestGatewayAndThreeBoxes(t *testing.T) {
	testenv.NeedsBrowser(t)
	env := startFarm(t, 2)
	g := startGateway(t)
	g.startBox("a", withWeb(t, env))
	g.startBox("b", withWeb(t, env))
	g.startBox("c", boxCatalog(t))
	meta := relay.RouteName("meta")
	g.waitServing(relay.RouteName("fr.tva"), 3)
	g.waitServing(meta, 2)
	for _, r := range g.view.Boxes() {
		if r.Box == "c" && r.Serves(meta) {
			t.Fatal("box c, without a browser, announces the web route")
		}
	}

	tva := map[string]int{}
	for range 6 {
		status, hdr, body := g.get(tvaPath, url.Values{"siren": {"542065479"}})
		if status != http.StatusOK {
			t.Fatalf("fr.tva: %d %s", status, body)
		}
		tva[hdr.Get(relay.HeaderBox)]++
	}
	if len(tva) != 3 || tva["a"] == 0 || tva["b"] == 0 || tva["c"] == 0 {
		t.Errorf("fr.tva served by %v; want a, b and c", tva)
	}
	pages := map[string]int{}
	for range 4 {
		status, hdr, body := g.post("/v1/meta", map[string]any{"url": env.URL("/article")})
		if status != http.StatusOK || !bytes.Contains(body, []byte(`"title"`)) {
			t.Fatalf("/v1/meta: %d %s", status, body)
		}
		pages[hdr.Get(relay.HeaderBox)]++
	}
	if len(pages) != 2 || pages["a"] == 0 || pages["b"] == 0 {
		t.Errorf("/v1/meta served by %v; want a and b, never c", pages)
	}
	if charged, waived := g.gate.Counts(); charged != 10 || waived != 0 {
		t.Errorf("charged %d, waived %d; want the 10 calls charged", charged, waived)
	}
}

// TestBoxLineDownForAMinute cuts box a's line to the hub for a minute, past the registry's
// TTL and the leaf's reconnect interval (production's 1 s): a leaves the rotation, every call
// during the cut is served by b and none fails, and once the line is back a rejoins by itself
// (no new enrolment, no restart) and gets calls again.
func TestBoxLineDownForAMinute(t *testing.T) {
	testenv.Needs(t, testenv.Outages)
	g := startGateway(t)
	line := fleettest.NewLine(t, g.leaf)
	creds, err := g.hub.Enrol("a")
	if err != nil {
		t.Fatal(err)
	}
	creds.LeafURL = "tls://" + line.Addr() // a's line reaches the hub through line
	a, err := box.Start(t.Context(), box.Config{Credentials: creds, Routes: relay.BoxRoutes(boxCatalog(t)),
		Heartbeat: 100 * time.Millisecond, ProgressEvery: 100 * time.Millisecond}) // reconnecting every second
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	g.startBox("b", boxCatalog(t))
	route := relay.RouteName("fr.tva")
	g.waitServing(route, 2)
	q := url.Values{"siren": {"542065479"}}

	line.Cut()
	cutAt := time.Now()
	served := map[string]int{}
	for time.Since(cutAt) < time.Minute {
		status, hdr, body := g.get(tvaPath, q)
		if status != http.StatusOK {
			t.Fatalf("%s into the cut: %d %s", time.Since(cutAt).Round(time.Second), status, body)
		}
		served[hdr.Get(relay.HeaderBox)]++
		time.Sleep(time.Second)
	}
	if served["a"] != 0 || served["b"] == 0 {
		t.Fatalf("during the cut the calls were served by %v; want b only", served)
	}
	if serving(g.view, "a", route) {
		t.Fatal("a is in the rotation with its line down")
	}

	line.Restore()
	g.waitServing(route, 2)
	back := map[string]int{}
	for range 4 {
		status, hdr, body := g.get(tvaPath, q)
		if status != http.StatusOK {
			t.Fatalf("after the line came back: %d %s", status, body)
		}
		back[hdr.Get(relay.HeaderBox)]++
	}
	if back["a"] == 0 || back["b"] == 0 {
		t.Fatalf("after the line came back the calls were served by %v; want a and b", back)
	}
	if charged, waived := g.gate.Counts(); waived != 0 || charged != served["b"]+4 {
		t.Errorf("charged %d, waived %d; want every call charged once", charged, waived)
	}
}

func serving(view *registry.View, name, route string) bool {
	for _, r := range view.Boxes() {
		if r.Box == name && r.Health == fleet.HealthOK && r.Serves(route) {
			return true
		}
	}
	return false
}

// TestGatewayRestartKeepsTheFleet stops the whole gateway (hub, registry, dispatcher, API
// server) and starts it again on the same state, JetStream store and leaf address: the
// registry's stream is the same one (kept on disk, not made anew), the boxes dial back with
// the credentials they had (the enrolments and the CA kept), and the new API server relays
// calls to both.
func TestGatewayRestartKeepsTheFleet(t *testing.T) {
	g := startGateway(t)
	g.startBox("a", boxCatalog(t))
	g.startBox("b", boxCatalog(t))
	route := relay.RouteName("fr.tva")
	g.waitServing(route, 2)
	before := g.stream()

	g.close()
	g.start()
	if after := g.stream(); !after.Created.Equal(before.Created) || after.State.LastSeq < before.State.LastSeq {
		t.Fatalf("the registry's stream was made anew: created %v, last sequence %d; before %v, %d",
			after.Created, after.State.LastSeq, before.Created, before.State.LastSeq)
	}
	// Back when a heartbeat newer than every one before the restart is stored.
	for _, name := range []string{"a", "b"} {
		deadline := time.Now().Add(20 * time.Second)
		for {
			e, err := g.kv.Get(t.Context(), name)
			if err == nil && e.Revision() > before.State.LastSeq {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no heartbeat of %s after the restart: %v", name, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	g.waitServing(route, 2)
	served := map[string]int{}
	for range 4 {
		status, hdr, body := g.get(tvaPath, url.Values{"siren": {"542065479"}})
		if status != http.StatusOK {
			t.Fatalf("after the restart: %d %s", status, body)
		}
		served[hdr.Get(relay.HeaderBox)]++
	}
	if served["a"] == 0 || served["b"] == 0 {
		t.Fatalf("after the restart the calls were served by %v; want a and b", served)
	}
}

// stream is the registry's stream info.
func (g *gateway) stream() *jetstream.StreamInfo {
	g.t.Helper()
	js, err := jetstream.New(g.hub.Conn())
	if err != nil {
		g.t.Fatal(err)
	}
	s, err := js.Stream(g.t.Context(), "KV_"+registry.Bucket)
	if err != nil {
		g.t.Fatal(err)
	}
	info, err := s.Info(g.t.Context())
	if err != nil {
		g.t.Fatal(err)
	}
	return info
}
