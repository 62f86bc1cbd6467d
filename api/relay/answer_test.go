package relay_test

import (
	"context"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/relay"
	"github.com/peage/appliance/internal/cache"
)

// TestRelayedErrorsNameTheirBox: an error answer the fleet gave names the box whose failure it
// reports, as a result names the box that served it; nothing is charged.
func TestRelayedErrorsNameTheirBox(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler catalog.Handler
		status  int
	}{
		{"the route failed on the box", func(context.Context, *catalog.Request) (any, error) {
			return nil, &apierr.Error{Code: apierr.CodeUpstream, Upstream: "inpi", Message: "the registry answered 500"}
		}, http.StatusBadGateway},
		{"the call outlived its deadline on the box", func(ctx context.Context, _ *catalog.Request) (any, error) {
			<-ctx.Done() // the call's deadline, which the box received with it
			return nil, ctx.Err()
		}, http.StatusGatewayTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gate := &apitest.RecordingGate{}
			g := startGatewayWith(t, apitest.Options{Gate: gate}, func(cat *catalog.Catalog) {
				cat.Entry("fr.tva").Timeout = time.Second // the deadline is waited out
			})
			g.startBox("a", boxCatalogBinding(t, "fr.tva", tc.handler, nil))
			g.waitServing(relay.RouteName("fr.tva"), 1)
			status, hdr, body := g.get(tvaPath, url.Values{"siren": {"542065479"}})
			if status != tc.status || hdr.Get(relay.HeaderBox) != "a" {
				t.Fatalf("%d %s naming box %q; want %d naming a", status, body, hdr.Get(relay.HeaderBox), tc.status)
			}
			if charged, waived := gate.Counts(); charged != 0 || waived != 1 {
				t.Errorf("charged %d, waived %d; want nothing charged", charged, waived)
			}
		})
	}
}

// syncCache is the appliance's result cache storing at once (ristretto may delay or drop a
// Set, which would leave the second call a miss).
type syncCache struct{ *cache.Cache }

func (c syncCache) Set(key string, val []byte, ttl time.Duration) { c.SetSync(key, val, ttl) }

// counting is a route handler that counts the calls each box runs.
type counting struct {
	mu   sync.Mutex
	runs map[string]int
}

func (c *counting) handler(box string) catalog.Handler {
	return func(_ context.Context, req *catalog.Request) (any, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.runs[box]++
		return map[string]string{"q": req.Args.Str("q")}, nil
	}
}

func (c *counting) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.runs {
		n += v
	}
	return n
}

// TestCacheHitNamesNoBox: a gateway's result cache answers a call again without sending it to
// a box, so the answer names no box (the box that served the first call did no work for it);
// the answer is byte for byte the first, and each call is charged.
func TestCacheHitNamesNoBox(t *testing.T) {
	c, err := cache.New(cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	gate := &apitest.RecordingGate{}
	g := startGatewayWith(t, apitest.Options{Gate: gate, Cache: syncCache{c}})
	runs := &counting{runs: map[string]int{}}
	for _, name := range []string{"a", "b"} {
		g.startBox(name, boxCatalogBinding(t, "fr.geocode", runs.handler(name), nil))
	}
	g.waitServing(relay.RouteName("fr.geocode"), 2)
	q := url.Values{"q": {"8 bd du port amiens"}}
	status, hdr, first := g.get("/v1/fr/geocode", q)
	if status != http.StatusOK || hdr.Get(relay.HeaderBox) == "" {
		t.Fatalf("first call: %d %s naming box %q", status, first, hdr.Get(relay.HeaderBox))
	}
	status, hdr, again := g.get("/v1/fr/geocode", q)
	if status != http.StatusOK || string(again) != string(first) {
		t.Fatalf("second call: %d %s; want the first answer %s", status, again, first)
	}
	if _, named := hdr[http.CanonicalHeaderKey(relay.HeaderBox)]; named || runs.total() != 1 {
		t.Fatalf("the cache hit names box %q, boxes ran %d calls; want no box named and one run", hdr.Get(relay.HeaderBox), runs.total())
	}
	if charged, _ := gate.Counts(); charged != 2 {
		t.Errorf("charged %d; want both calls", charged)
	}
}
