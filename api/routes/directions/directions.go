// Package directions serves /v1/route/directions over an OSRM-compatible routing server
// (api/upstream/osrm): 2 to 10 stops, by car, bike or foot, the geometry as GeoJSON or as an
// encoded polyline (precision 5), and per leg its distance, duration and steps.
package directions

import (
	"context"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/compute/polyline"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/osrm"
)

// Parts are the family's collaborators.
type Parts struct {
	// Pool is the process-wide client pool: one token bucket for the routing server, so the
	// whole appliance keeps to the public servers' one request per second.
	Pool *httpc.Pool
}

// Routes holds the handler.
type Routes struct{ osrm *osrm.Client }

// With builds the family; the pool must know the osrm upstream.
func With(d Parts) (*Routes, error) {
	h, err := d.Pool.Client(osrm.Name)
	if err != nil {
		return nil, err
	}
	return &Routes{osrm: osrm.New(h)}, nil
}

// Bind attaches the handler.
func (r *Routes) Bind(c *catalog.Catalog) error {
	return c.Bind("route.directions", r.directions, r.osrm.Ready)
}

// Attribution is required by the OpenStreetMap licence of the data the routes run on.
const Attribution = "Route data © OpenStreetMap contributors (ODbL), computed by OSRM"

// Stop is a stop as asked and as the router placed it on the road network.
type Stop struct {
	Lat           float64 `json:"lat"`
	Lon           float64 `json:"lon"`
	SnappedLat    float64 `json:"snapped_lat"`
	SnappedLon    float64 `json:"snapped_lon"`
	SnapDistanceM float64 `json:"snap_distance_m"`
	Road          string  `json:"road,omitempty"`
}

// Step is one instruction of a leg.
type Step struct {
	Maneuver  string  `json:"maneuver"`           // depart, turn, end of road, roundabout, arrive...
	Modifier  string  `json:"modifier,omitempty"` // left, slight right, straight...
	Exit      int     `json:"exit,omitempty"`     // roundabout exit number
	Road      string  `json:"road,omitempty"`
	Ref       string  `json:"ref,omitempty"`
	DistanceM float64 `json:"distance_m"`
	DurationS float64 `json:"duration_s"`
	Lat       float64 `json:"lat"`
	Lon       float64 `json:"lon"`
}

// Leg is the route between stop From and stop To (indexes into stops).
type Leg struct {
	From      int     `json:"from"`
	To        int     `json:"to"`
	DistanceM float64 `json:"distance_m"`
	DurationS float64 `json:"duration_s"`
	Summary   string  `json:"summary,omitempty"`
	Steps     []Step  `json:"steps"`
}

// Answer is the route.
type Answer struct {
	Mode           string  `json:"mode"`
	Stops          []Stop  `json:"stops"`
	DistanceKm     float64 `json:"distance_km"`
	DurationMin    float64 `json:"duration_min"`
	Legs           []Leg   `json:"legs"`
	GeometryFormat string  `json:"geometry_format"` // geojson or polyline
	// Geometry is a GeoJSON LineString ([lon, lat] positions), or a Google encoded polyline
	// (precision 5, lat/lon order) when geometry=polyline.
	Geometry    any    `json:"geometry"`
	Source      string `json:"source"`
	Attribution string `json:"attribution"`
}

func (r *Routes) directions(ctx context.Context, req *catalog.Request) (any, error) {
	mode, format := req.Args.Str("mode"), req.Args.Str("geometry")
	stops, err := parseStops(req.Args.Str("stops"))
	if err != nil {
		return nil, err
	}
	res, err := r.osrm.Route(ctx, mode, stops)
	if err != nil {
		return nil, refusal(err, mode)
	}
	route := res.Routes[0]
	a := &Answer{Mode: mode, DistanceKm: round(route.Distance/1000, 3), DurationMin: round(route.Duration/60, 1),
		GeometryFormat: format, Source: osrm.Name, Attribution: Attribution}
	for i, p := range stops {
		s := Stop{Lat: p.Lat, Lon: p.Lon}
		if i < len(res.Waypoints) {
			w := res.Waypoints[i]
			s.SnappedLat, s.SnappedLon, s.SnapDistanceM, s.Road = w.Location[1], w.Location[0], round(w.Distance, 1), w.Name
		}
		a.Stops = append(a.Stops, s)
	}
	for i, l := range route.Legs {
		leg := Leg{From: i, To: i + 1, DistanceM: round(l.Distance, 1), DurationS: round(l.Duration, 1), Summary: l.Summary, Steps: []Step{}}
		for _, s := range l.Steps {
			leg.Steps = append(leg.Steps, Step{Maneuver: s.Maneuver.Type, Modifier: s.Maneuver.Modifier, Exit: s.Maneuver.Exit,
				Road: s.Name, Ref: s.Ref, DistanceM: round(s.Distance, 1), DurationS: round(s.Duration, 1),
				Lat: s.Maneuver.Location[1], Lon: s.Maneuver.Location[0]})
		}
		a.Legs = append(a.Legs, leg)
	}
	if format == "polyline" {
		a.Geometry = polyline.Encode(route.Geometry.Coordinates)
	} else {
		a.Geometry = route.Geometry
	}
	return a, nil
}

// parseStops reads the stops the catalog already checked (2 to 10 lat,lon pairs in range).
func parseStops(s string) ([]osrm.Point, error) {
	var out []osrm.Point
	for _, pair := range strings.Split(s, "|") {
		lat, lon, _ := strings.Cut(pair, ",")
		la, err1 := strconv.ParseFloat(strings.TrimSpace(lat), 64)
		lo, err2 := strconv.ParseFloat(strings.TrimSpace(lon), 64)
		if err1 != nil || err2 != nil {
			return nil, apierr.BadParam("stops", "has a pair that is not a valid lat,lon")
		}
		out = append(out, osrm.Point{Lat: la, Lon: lo})
	}
	return out, nil
}

// segmentIndex reads the stop OSRM could not place from its NoSegment message.
var segmentIndex = regexp.MustCompile(`coordinate (\d+)`)

// refusal turns the router's own refusals into answers about the request: no route between
// the stops or a stop too far from any road is a 404 (nothing is charged); a refusal of the
// stops themselves a 400 naming them; anything else the router's failure (502).
func refusal(err error, mode string) error {
	r, ok := osrm.IsRefusal(err)
	if !ok {
		return err
	}
	switch r.Code {
	case "NoRoute":
		return apierr.NotFound("no %s route joins these stops (%s)", mode, r.Message)
	case "NoSegment":
		if m := segmentIndex.FindStringSubmatch(r.Message); m != nil {
			n, _ := strconv.Atoi(m[1])
			return apierr.NotFound("stop %d is too far from any road the %s profile can use", n+1, mode)
		}
		return apierr.NotFound("a stop is too far from any road the %s profile can use", mode)
	case "InvalidValue", "TooBig":
		return apierr.BadParam("stops", "the routing server refused them: %s", r.Message)
	default:
		return apierr.Upstream(osrm.Name, err, "the routing server refused the request (%s)", r.Code)
	}
}

func round(v float64, decimals int) float64 {
	p := math.Pow10(decimals)
	return math.Round(v*p) / p
}
