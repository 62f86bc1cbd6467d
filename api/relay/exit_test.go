package relay_test

import (
	"bytes"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/relay"
	"github.com/peage/appliance/api/routes/annonces"
	"github.com/peage/appliance/browserfarm/farmtest"
	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/fleet/box"
	"github.com/peage/appliance/internal/testenv"
)

// withBrowserRoutes is a box catalog with the web family and the French listings bound on
// env's real browser farm.
func withBrowserRoutes(t *testing.T, env *farmtest.Env) *catalog.Catalog {
	t.Helper()
	cat := withWeb(t, env)
	listings, err := annonces.With(annonces.Parts{Farm: env.Farm, Names: catalog.DefaultNames()})
	if err != nil {
		t.Fatal(err)
	}
	if err := listings.Bind(cat); err != nil {
		t.Fatal(err)
	}
	return cat
}

// startBoxAt starts a box offering what cat serves from an exit in exit (the routes whose
// answer depends on the exit only where it fits), and announcing exit.
func (g *gateway) startBoxAt(name string, cat *catalog.Catalog, exit fleet.Exit) *box.Box {
	g.t.Helper()
	offer := relay.BoxOffer(cat, exit)
	return g.startBoxOffering(name, offer, exit)
}

func (g *gateway) startBoxOffering(name string, offer relay.Offer, exit fleet.Exit) *box.Box {
	g.t.Helper()
	creds, err := g.hub.Enrol(name)
	if err != nil {
		g.t.Fatal(err)
	}
	b, err := box.Start(g.t.Context(), box.Config{Credentials: creds, Routes: offer.Routes, Withheld: offer.Withheld, Exit: exit,
		Heartbeat: 100 * time.Millisecond, ProgressEvery: 100 * time.Millisecond, Reconnect: 50 * time.Millisecond})
	if err != nil {
		g.t.Fatal(err)
	}
	g.t.Cleanup(b.Close)
	return b
}

// startFarm is a real browser farm of size browsers for the test's length.
func startFarm(t *testing.T, size int) *farmtest.Env {
	t.Helper()
	env, err := farmtest.Start(size, 16)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Close)
	return env
}

// unblockFromFrance makes n unblock calls for env's article with country=fr, each of which
// must be served, and counts them by the box that served them.
func (g *gateway) unblockFromFrance(env *farmtest.Env, n int) map[string]int {
	g.t.Helper()
	served := map[string]int{}
	for range n {
		status, hdr, body := g.get("/v1/unblock", url.Values{"url": {env.URL("/article")}, "country": {"fr"}})
		if status != http.StatusOK {
			g.t.Fatalf("/v1/unblock with country=fr: %d %s", status, body)
		}
		served[hdr.Get(relay.HeaderBox)]++
	}
	return served
}

// TestExitDependentCallGoesToABoxThatFits: /v1/unblock's country names the exit the page must
// be read from, and the French listings need a French exit (both from the catalog). Of a
// German box, a French one and one whose exit is not known, all with a browser: the unknown
// one withholds every exit-dependent route and says so, the German one announces unblock but
// not the French listings, and every unblock call with country=fr goes to the French box,
// never reaching the German one. A web route that does not depend on the exit is served by
// all three.
func TestExitDependentCallGoesToABoxThatFits(t *testing.T) {
	testenv.NeedsBrowser(t)
	env := startFarm(t, 2)
	g := startGateway(t)
	de := g.startBoxAt("de", withBrowserRoutes(t, env), fleet.Exit{Country: "DE", ASN: 3320})
	g.startBoxAt("fr", withBrowserRoutes(t, env), fleet.Exit{Country: "FR", ASN: 3215})
	unknown := g.startBoxAt("nowhere", withBrowserRoutes(t, env), fleet.Exit{})
	unblock, classifieds, meta := relay.RouteName("unblock"), relay.RouteName("fr."+catalog.DefaultNames().ClassifiedsA), relay.RouteName("meta")
	g.waitServing(meta, 3)
	g.waitServing(unblock, 2)
	g.waitServing(classifieds, 1)

	rec := unknown.Record(fleet.HealthOK)
	if rec.Serves(unblock) || rec.Serves(classifieds) || !slices.Contains(rec.Withheld, unblock) || !slices.Contains(rec.Withheld, classifieds) {
		t.Fatalf("the box whose exit is not known announces %v, withholds %v; want unblock and the listings withheld", rec.Routes, rec.Withheld)
	}
	for _, r := range g.view.Boxes() {
		if r.Serves(classifieds) != (r.Box == "fr") {
			t.Errorf("box %s (exit %q) serves the French listings: %v", r.Box, r.Exit.Country, r.Serves(classifieds))
		}
	}

	served := g.unblockFromFrance(env, 4)
	if served["fr"] != 4 {
		t.Errorf("unblock with country=fr served by %v; want the French box only", served)
	}
	// Not even tried there: the German box would refuse the call, and the gateway retry it.
	if n := de.Calls(unblock); n != 0 {
		t.Errorf("the German box received %d unblock calls", n)
	}
	if charged, waived := g.gate.Counts(); charged != 4 || waived != 0 {
		t.Errorf("charged %d, waived %d; want the 4 calls charged", charged, waived)
	}
}

// TestNoBoxExitsInTheCountryAsked: with German boxes only, an unblock call with country=fr is
// a 503 saying no box exits in France, before any 402 and with nothing charged; the French
// listings are the same.
func TestNoBoxExitsInTheCountryAsked(t *testing.T) {
	testenv.NeedsBrowser(t)
	env := startFarm(t, 1)
	g := startGateway(t)
	g.startBoxAt("de-1", withBrowserRoutes(t, env), fleet.Exit{Country: "DE"})
	g.startBoxAt("de-2", withBrowserRoutes(t, env), fleet.Exit{Country: "DE"})
	g.waitServing(relay.RouteName("unblock"), 2)

	for _, c := range []struct {
		path string
		q    url.Values
	}{
		{"/v1/unblock", url.Values{"url": {env.URL("/article")}, "country": {"fr"}}},
		{"/v1/fr/" + catalog.DefaultNames().ClassifiedsA, url.Values{"text": {"velo"}}},
	} {
		status, hdr, body := g.get(c.path, c.q)
		msg, _ := apitest.At(apitest.Decode(t, body), "error", "message").(string)
		if status != http.StatusServiceUnavailable || !bytes.Contains([]byte(msg), []byte("exit is in FR")) {
			t.Errorf("%s with only German boxes: %d %s; want 503 naming the French exit", c.path, status, body)
		}
		if hdr.Get(relay.HeaderBox) != "" {
			t.Errorf("%s: the 503 names box %q", c.path, hdr.Get(relay.HeaderBox))
		}
	}
	if charged, waived := g.gate.Counts(); charged != 0 || waived != 0 {
		t.Errorf("charged %d, waived %d; want nothing", charged, waived)
	}
}

// TestBoxRefusesACallItsExitDoesNotFit: a box whose record claims a French exit while its
// relay knows its exit is German (a misconfigured box) is picked, refuses the unblock call
// unrun, and the gateway retries it on the French box: served there, charged once.
func TestBoxRefusesACallItsExitDoesNotFit(t *testing.T) {
	testenv.NeedsBrowser(t)
	env := startFarm(t, 1)
	g := startGateway(t)
	g.startBoxOffering("claims-fr", relay.BoxOffer(withBrowserRoutes(t, env), fleet.Exit{Country: "DE"}), fleet.Exit{Country: "FR"})
	g.startBoxAt("fr", withBrowserRoutes(t, env), fleet.Exit{Country: "FR"})
	g.waitServing(relay.RouteName("unblock"), 2)

	served := g.unblockFromFrance(env, 4)
	if served["fr"] != 4 {
		t.Errorf("served by %v; want the French box only", served)
	}
	if charged, waived := g.gate.Counts(); charged != 4 || waived != 0 {
		t.Errorf("charged %d, waived %d; want the 4 calls charged once", charged, waived)
	}
}
