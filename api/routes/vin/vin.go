// Package vin serves /v1/vin/decode: the check digit, the model year and the manufacturer
// are computed offline (api/compute/vin), the make, model and the rest come from NHTSA vPIC
// (api/upstream/vpic), and the answer's sources say which field came from where. A wrong
// check digit is an answer (valid false, with the reason), not an error.
package vin

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	vincode "github.com/peage/appliance/api/compute/vin"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/vpic"
)

// Parts are the family's collaborators.
type Parts struct {
	Pool *httpc.Pool
	Now  func() time.Time // the current year bounds the model-year candidates; nil is time.Now
}

// Routes holds the handler.
type Routes struct {
	vpic *vpic.Client
	now  func() time.Time
}

// With builds the family; the pool must know the vpic upstream.
func With(d Parts) (*Routes, error) {
	h, err := d.Pool.Client(vpic.Name)
	if err != nil {
		return nil, err
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Routes{vpic: vpic.New(h), now: d.Now}, nil
}

// Bind attaches the handler.
func (r *Routes) Bind(c *catalog.Catalog) error { return c.Bind("vin.decode", r.decode, r.vpic.Ready) }

// Where each field comes from.
const (
	fromVIN   = "computed from the VIN (49 CFR 565.15)"
	fromWMI   = "WMI table (api/compute/vin/wmi.tsv, from vininfo)"
	fromVPIC  = "NHTSA vPIC DecodeVinValues"
	checkNote = "VINs of vehicles built for markets outside North America often do not use the check digit"
)

// CheckDigit compares position 9 with the digit the other 16 characters give.
type CheckDigit struct {
	Expected string `json:"expected"`
	Found    string `json:"found"`
	Valid    bool   `json:"valid"`
}

// Engine is what vPIC knows of the engine. Every field is there, null when unknown, as the
// spec names them (and the other fields of the answer alike).
type Engine struct {
	Cylinders     *int     `json:"cylinders"`
	DisplacementL *float64 `json:"displacement_l"`
	Fuel          *string  `json:"fuel"`
	Model         *string  `json:"model"`
	HP            *float64 `json:"hp"`
	Electrified   *string  `json:"electrification"`
}

// Plant is where the vehicle was assembled.
type Plant struct {
	City    *string `json:"city"`
	State   *string `json:"state"`
	Country *string `json:"country"`
	Company *string `json:"company"`
}

// Answer is the decoded VIN.
type Answer struct {
	VIN            string     `json:"vin"`
	Valid          bool       `json:"valid"`
	Reasons        []string   `json:"reasons"` // why valid is false; empty when true
	CheckDigit     CheckDigit `json:"check_digit"`
	WMI            string     `json:"wmi"`
	Manufacturer   *string    `json:"manufacturer"`
	Year           *int       `json:"year"`
	YearCandidates []int      `json:"year_candidates"`
	YearRule       string     `json:"year_rule"`
	Make           *string    `json:"make"`
	Model          *string    `json:"model"`
	Trim           *string    `json:"trim"`
	Series         *string    `json:"series"`
	VehicleType    *string    `json:"vehicle_type"`
	BodyClass      *string    `json:"body_class"`
	Doors          *int       `json:"doors"`
	DriveType      *string    `json:"drive_type"`
	Transmission   *string    `json:"transmission"`
	Engine         Engine     `json:"engine"`
	Plant          Plant      `json:"plant"`
	// VPIC is what NHTSA says of its own decode: its manufacturer of record, its model year and
	// its notices (code 0 is a clean decode).
	VPIC struct {
		Manufacturer string        `json:"manufacturer,omitempty"`
		ModelYear    *int          `json:"model_year"`
		Clean        bool          `json:"clean"`
		Notices      []vpic.Notice `json:"notices"`
	} `json:"vpic"`
	// Sources names, for each field, where its value came from.
	Sources map[string]string `json:"sources"`
	Note    string            `json:"note"`
}

func (r *Routes) decode(ctx context.Context, req *catalog.Request) (any, error) {
	v := strings.ToUpper(strings.NewReplacer(" ", "", "-", "").Replace(req.Args.Str("vin")))
	d, err := r.vpic.DecodeVIN(ctx, v)
	if err != nil {
		return nil, err
	}
	return Build(v, d, r.now().Year())
}

// Build joins the offline decode of v and vPIC's record d. Nothing known of the maker (no WMI
// row and no make from vPIC) is a 404: the VIN is well formed but names nobody.
func Build(v string, d *vpic.Decoded, thisYear int) (*Answer, error) {
	a := &Answer{VIN: v, Reasons: []string{}, WMI: v[:3], Sources: map[string]string{
		"valid": fromVIN, "check_digit": fromVIN, "year": fromVIN, "year_candidates": fromVIN, "wmi": fromVIN,
	}, Note: "Missing vPIC values mean NHTSA has no data on the variable, not that the vehicle lacks it. " + checkNote + "."}
	expected, found := vincode.CheckDigit(v), v[8]
	a.CheckDigit = CheckDigit{Expected: string(expected), Found: string(found), Valid: expected == found}
	a.Valid = a.CheckDigit.Valid
	if !a.Valid {
		a.Reasons = append(a.Reasons, fmt.Sprintf("check digit (position 9) is %c, the other characters give %c; %s", found, expected, checkNote))
	}
	y := vincode.ModelYear(v, thisYear)
	a.YearCandidates, a.YearRule = orEmpty(y.Candidates), y.Rule
	if y.Year != 0 {
		a.Year = &y.Year
	}
	if name, _ := vincode.Manufacturer(v); name != "" {
		a.Manufacturer = &name
		a.Sources["manufacturer"] = fromWMI
	}
	vp := func(field, value string) *string {
		value = strings.TrimSpace(value)
		if value != "" && value != "Not Applicable" {
			a.Sources[field] = fromVPIC
			return &value
		}
		return nil
	}
	a.Make, a.Model, a.Trim, a.Series = vp("make", d.Make), vp("model", d.Model), vp("trim", d.Trim), vp("series", d.Series)
	a.VehicleType, a.BodyClass, a.DriveType = vp("vehicle_type", d.VehicleType), vp("body_class", d.BodyClass), vp("drive_type", d.DriveType)
	a.Transmission = vp("transmission", strings.TrimSpace(d.TransmissionStyle+" "+speeds(d.TransmissionSpeed)))
	a.Doors = intOf(vp("doors", d.Doors))
	a.Engine = Engine{Cylinders: intOf(vp("engine.cylinders", d.EngineCylinders)), DisplacementL: floatOf(vp("engine.displacement_l", d.DisplacementL)),
		Fuel: vp("engine.fuel", d.FuelTypePrimary), Model: vp("engine.model", d.EngineModel), HP: floatOf(vp("engine.hp", d.EngineHP)),
		Electrified: vp("engine.electrification", d.Electrification)}
	a.Plant = Plant{City: vp("plant.city", d.PlantCity), State: vp("plant.state", d.PlantState), Country: vp("plant.country", d.PlantCountry),
		Company: vp("plant.company", d.PlantCompany)}
	a.VPIC.Manufacturer, a.VPIC.Clean, a.VPIC.Notices = strings.TrimSpace(d.Manufacturer), d.Clean(), orEmpty(d.Notices())
	modelYear := strings.TrimSpace(d.ModelYear)
	a.VPIC.ModelYear = intOf(&modelYear)
	a.Sources["vpic"] = fromVPIC
	if a.Manufacturer == nil && a.Make == nil {
		return nil, apierr.NotFound("neither the WMI table nor NHTSA vPIC knows the maker of WMI %s", a.WMI)
	}
	return a, nil
}

func speeds(s string) string {
	if strings.TrimSpace(s) == "" {
		return ""
	}
	return "(" + strings.TrimSpace(s) + " speeds)"
}

func intOf(s *string) *int {
	if s == nil {
		return nil
	}
	n, err := strconv.Atoi(*s)
	if err != nil {
		return nil
	}
	return &n
}

func floatOf(s *string) *float64 {
	if s == nil {
		return nil
	}
	f, err := strconv.ParseFloat(*s, 64)
	if err != nil {
		return nil
	}
	f = float64(int64(f*1000+0.5)) / 1000 // vPIC writes 2.998832712 for a 3.0 l engine
	return &f
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
