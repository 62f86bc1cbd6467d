package directions_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/routes/directions"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/osrm"
	"github.com/peage/appliance/api/upstream/upstreamtest"
	"github.com/peage/appliance/internal/goldenfile"
	"github.com/peage/appliance/internal/obs"
)

var quiet = obs.Discard()

func fixture(name string) string {
	return filepath.Join("..", "..", "upstream", "osrm", "testdata", name)
}

// The recorded route (testdata/PROVENANCE of the connector): Hyderabad, two stops, car.
const (
	hyderabadStops = "17.3735683,78.5229411|17.379,78.529"
	hyderabadPath  = "/routed-car/route/v1/car/78.5229411,17.3735683;78.529,17.379"
)

// routeQuery is what the connector asks for every route: the full geometry as GeoJSON, steps.
var routeQuery = upstreamtest.Query("overview", "full", "geometries", "geojson", "steps", "true")

type env struct {
	srv *upstreamtest.Server
	h   *apitest.Harness
}

// start binds the family to the real catalog behind the real server, the routing server being
// the fixture server under the registry's base path (/routed-{profile}). gate nil is
// production's challenge-only gate.
func start(t *testing.T, gate paywall.Gate) *env {
	t.Helper()
	srv := upstreamtest.New(t)
	pool := httpc.NewPool(map[string]upstream.Spec{osrm.Name: srv.Spec(t, osrm.Name)}, httpc.Options{Contact: "test@example.org", Logger: quiet})
	r, err := directions.With(directions.Parts{Pool: pool})
	if err != nil {
		t.Fatal(err)
	}
	return &env{srv: srv, h: apitest.StartFamily(t, catalog.DefaultNames(), r, apitest.Options{Gate: gate})}
}

func (e *env) get(t *testing.T, q url.Values) (int, []byte) {
	t.Helper()
	return e.h.Get(t, "/v1/route/directions", q)
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return v
}

func TestRouteAgainstRecordedAnswer(t *testing.T) {
	gate := &apitest.RecordingGate{}
	e := start(t, gate)
	e.srv.Expect(hyderabadPath, routeQuery, upstreamtest.File(t, fixture("route_car_hyderabad.json")))
	tests := []struct {
		golden, geometry string
		check            func(a directions.Answer) bool
	}{
		{"route_geojson", "geojson", func(a directions.Answer) bool {
			g, _ := a.Geometry.(map[string]any)
			coords, _ := g["coordinates"].([]any)
			return g["type"] == "LineString" && len(coords) == 121
		}},
		// The polyline is computed from the recorded GeoJSON line; its first point is the
		// snapped start (17.373603, 78.522829), encoded "_h`iBung~M" (checked by hand with the
		// algorithm).
		{"route_polyline", "polyline", func(a directions.Answer) bool {
			p, _ := a.Geometry.(string)
			return strings.HasPrefix(p, "_h`iBung~M") && a.GeometryFormat == "polyline"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			status, body := e.get(t, url.Values{"stops": {hyderabadStops}, "mode": {"car"}, "geometry": {tt.geometry}})
			if status != 200 {
				t.Fatalf("%d %s", status, body)
			}
			var a directions.Answer
			if err := json.Unmarshal(body, &a); err != nil {
				t.Fatal(err)
			}
			leg := a.Legs[0]
			if a.Mode != "car" || a.DistanceKm != 3.706 || a.DurationMin != 6.3 || len(a.Legs) != 1 || leg.From != 0 || leg.To != 1 ||
				leg.DistanceM != 3706.4 || len(leg.Steps) != 9 || leg.Steps[0].Maneuver != "depart" || leg.Steps[1].Road != "Model Bank Road" ||
				leg.Steps[1].Modifier != "right" || leg.Steps[8].Maneuver != "arrive" || a.Stops[0].Road != "Street No 2" ||
				a.Stops[1].SnapDistanceM != 47.1 || a.Stops[1].Lat != 17.379 || a.Attribution == "" {
				t.Errorf("answer lacks the recorded values: %s", body)
			}
			if !tt.check(a) {
				t.Errorf("geometry: %s", body)
			}
			apitest.Golden(t, tt.golden, body, goldenfile.Update())
		})
	}
	if charged, waived := gate.Counts(); charged != len(tests) || waived != 0 {
		t.Errorf("charged %d waived %d, want %d and 0", charged, waived, len(tests))
	}
}

// TestFailuresAreNotCharged: the router's refusals NoRoute and NoSegment (osrm-routed answers
// them with 400 and a code) are 404s about the stops; its 429 and 500 are 502 naming it; no
// answer in time is 504. None is charged. The foot profile goes to its own server
// (/routed-foot), which the expected path checks.
func TestFailuresAreNotCharged(t *testing.T) {
	const footPath = "/routed-foot/route/v1/foot/2.3522,48.8566;2.3376,48.8606"
	tests := []struct {
		name    string
		handler http.Handler
		status  int
		says    string
	}{
		{"no route", upstreamtest.FileStatus(t, fixture("error_noroute.json"), 400), 404, "no foot route"},
		{"stop off the network", upstreamtest.FileStatus(t, fixture("error_nosegment.json"), 400), 404, "stop 2 is too far"},
		{"rate limited", upstreamtest.TooMany(), 502, "rate limited"},
		{"server error", upstreamtest.ServerError(), 502, "status 500"},
		{"no answer", upstreamtest.Hang(), 504, "did not answer in time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			apitest.NeedsTime(t, tt.status)
			gate := &apitest.RecordingGate{}
			e := start(t, gate)
			e.srv.Expect(footPath, routeQuery, tt.handler)
			status, body := e.get(t, url.Values{"stops": {"48.8566,2.3522|48.8606,2.3376"}, "mode": {"foot"}})
			if status != tt.status || !strings.Contains(string(body), tt.says) {
				t.Errorf("= %d %s, want %d saying %q", status, body, tt.status, tt.says)
			}
			if status >= 500 {
				if up, _ := decode(t, body)["error"].(map[string]any); up["upstream"] != osrm.Name {
					t.Errorf("error names %v, want %s", up["upstream"], osrm.Name)
				}
			}
			gate.WantNotCharged(t, 1)
		})
	}
}

// TestBadInputBeforePayment: with production's challenge-only gate a valid call is asked to
// pay (402); bad stops, mode or geometry are a 400 naming the parameter, and nothing reaches
// the router.
func TestBadInputBeforePayment(t *testing.T) {
	e := start(t, nil)
	if status, body := e.get(t, url.Values{"stops": {hyderabadStops}}); status != 402 {
		t.Fatalf("valid call = %d %s, want 402", status, body)
	}
	eleven := strings.TrimSuffix(strings.Repeat("48.85,2.35|", 11), "|")
	tests := []struct {
		q     url.Values
		param string
	}{
		{url.Values{"mode": {"foot"}}, "stops"},
		{url.Values{"stops": {"48.85,2.35"}}, "stops"},
		{url.Values{"stops": {eleven}}, "stops"},
		{url.Values{"stops": {"91,2.35|48.86,2.33"}}, "stops"},
		{url.Values{"stops": {"48.85,181|48.86,2.33"}}, "stops"},
		{url.Values{"stops": {"NaN,2.35|48.86,2.33"}}, "stops"},
		{url.Values{"stops": {"48.85;2.35|48.86;2.33"}}, "stops"},
		{url.Values{"stops": {hyderabadStops}, "mode": {"plane"}}, "mode"},
		{url.Values{"stops": {hyderabadStops}, "geometry": {"kml"}}, "geometry"},
	}
	for _, tt := range tests {
		status, body := e.get(t, tt.q)
		if err, _ := decode(t, body)["error"].(map[string]any); status != 400 || err["param"] != tt.param {
			t.Errorf("%s = %d %s, want 400 naming %s", tt.q.Encode(), status, body, tt.param)
		}
	}
	if n := len(e.srv.Requests()); n != 0 {
		t.Errorf("%d requests reached the router", n)
	}
}
