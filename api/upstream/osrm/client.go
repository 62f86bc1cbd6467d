// Package osrm is the connector of an OSRM-compatible routing server (HTTP API v5, route
// service). One server per profile is the usual deployment (osrm-routed serves the profile its
// data was built with, whatever the URL says), so the base URL may name the profile with a
// "{profile}" placeholder: the FOSSGIS servers are routing.openstreetmap.de/routed-{car,bike,foot}.
package osrm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
)

// Name is the registry name.
const Name = "osrm"

// Profiles are the travel modes a request may name.
var Profiles = []string{"car", "bike", "foot"}

// Client asks the routing server for routes through the process-wide httpc client, whose
// token bucket keeps the appliance at the public servers' one request per second.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

// Ready is nil: the public servers need no key.
func (c *Client) Ready() error { return c.h.Ready() }

// Point is a stop, in degrees.
type Point struct{ Lat, Lon float64 }

// Maneuver is what a step asks of the traveller where it starts.
type Maneuver struct {
	Type     string     `json:"type"`
	Modifier string     `json:"modifier"`
	Exit     int        `json:"exit"`
	Location [2]float64 `json:"location"` // lon, lat
}

// Step is one instruction of a leg.
type Step struct {
	Distance float64  `json:"distance"` // metres
	Duration float64  `json:"duration"` // seconds
	Name     string   `json:"name"`
	Ref      string   `json:"ref"`
	Mode     string   `json:"mode"`
	Maneuver Maneuver `json:"maneuver"`
}

// Leg is the route between two consecutive stops.
type Leg struct {
	Distance float64 `json:"distance"`
	Duration float64 `json:"duration"`
	Summary  string  `json:"summary"`
	Steps    []Step  `json:"steps"`
}

// LineString is a GeoJSON line, positions as [lon, lat].
type LineString struct {
	Type        string       `json:"type"`
	Coordinates [][2]float64 `json:"coordinates"`
}

// Route is one route through every stop.
type Route struct {
	Distance float64    `json:"distance"`
	Duration float64    `json:"duration"`
	Geometry LineString `json:"geometry"`
	Legs     []Leg      `json:"legs"`
}

// Waypoint is a stop as snapped to the road network.
type Waypoint struct {
	Name     string     `json:"name"`
	Location [2]float64 `json:"location"` // lon, lat
	Distance float64    `json:"distance"` // metres from the stop asked for
}

// Response is the route service's answer.
type Response struct {
	Code      string     `json:"code"`
	Message   string     `json:"message"`
	Routes    []Route    `json:"routes"`
	Waypoints []Waypoint `json:"waypoints"`
}

// Refusal is the server's own "code" other than "Ok": NoRoute, NoSegment, InvalidValue,
// TooBig, InvalidQuery... (osrm-routed answers them with status 400).
type Refusal struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (r *Refusal) Error() string { return "osrm: " + r.Code + ": " + r.Message }

// Route asks for the fastest route through stops with the given profile: the full geometry as
// GeoJSON and the steps of each leg. A refusal of the server comes back as *Refusal; any other
// failure as *upstream.Error.
func (c *Client) Route(ctx context.Context, profile string, stops []Point) (*Response, error) {
	coords := make([]string, len(stops))
	for i, p := range stops {
		coords[i] = strconv.FormatFloat(p.Lon, 'f', -1, 64) + "," + strconv.FormatFloat(p.Lat, 'f', -1, 64)
	}
	path := "/route/v1/" + profile + "/" + strings.Join(coords, ";")
	q := url.Values{"overview": {"full"}, "geometries": {"geojson"}, "steps": {"true"}}
	var out Response
	err := c.h.GetJSONAt(ctx, map[string]string{"profile": profile}, path, q, &out)
	if err != nil {
		if body := upstream.BodyOf(err); upstream.StatusOf(err) == 400 && len(body) > 0 {
			var r Refusal
			if json.Unmarshal(body, &r) == nil && r.Code != "" {
				return nil, &r
			}
		}
		return nil, err
	}
	if out.Code != "Ok" {
		return nil, &Refusal{Code: out.Code, Message: out.Message}
	}
	if len(out.Routes) == 0 || len(out.Routes[0].Legs) != len(stops)-1 {
		return nil, upstream.BadAnswer(Name, "GET /route/v1", 200, "routes", fmt.Errorf("%d routes for %d stops", len(out.Routes), len(stops)))
	}
	return &out, nil
}

// IsRefusal reports whether err is the server's refusal with one of codes.
func IsRefusal(err error, codes ...string) (*Refusal, bool) {
	var r *Refusal
	if !errors.As(err, &r) {
		return nil, false
	}
	for _, c := range codes {
		if r.Code == c {
			return r, true
		}
	}
	return r, len(codes) == 0
}
