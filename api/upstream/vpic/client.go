// Package vpic is the connector of NHTSA's Product Information Catalog Vehicle Listing (vPIC)
// API, keyless: DecodeVinValues, one flat record of decoded variables per VIN.
package vpic

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
)

// Name is the registry name.
const Name = "vpic"

// Client calls vPIC through the process-wide httpc client.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

// Ready is nil: vPIC needs no key.
func (c *Client) Ready() error { return c.h.Ready() }

// Decoded is the record vPIC decodes for one VIN. Every value is text; a variable NHTSA has no
// data on is "" (which says nothing about the vehicle lacking the feature).
type Decoded struct {
	VIN               string `json:"VIN"`
	Make              string `json:"Make"`
	Manufacturer      string `json:"Manufacturer"`
	Model             string `json:"Model"`
	ModelYear         string `json:"ModelYear"`
	Trim              string `json:"Trim"`
	Series            string `json:"Series"`
	VehicleType       string `json:"VehicleType"`
	BodyClass         string `json:"BodyClass"`
	Doors             string `json:"Doors"`
	DriveType         string `json:"DriveType"`
	EngineCylinders   string `json:"EngineCylinders"`
	DisplacementL     string `json:"DisplacementL"`
	EngineModel       string `json:"EngineModel"`
	EngineHP          string `json:"EngineHP"`
	FuelTypePrimary   string `json:"FuelTypePrimary"`
	Electrification   string `json:"ElectrificationLevel"`
	TransmissionStyle string `json:"TransmissionStyle"`
	TransmissionSpeed string `json:"TransmissionSpeeds"`
	PlantCity         string `json:"PlantCity"`
	PlantState        string `json:"PlantState"`
	PlantCountry      string `json:"PlantCountry"`
	PlantCompany      string `json:"PlantCompanyName"`
	// ErrorCode is "0" for a clean decode, else the codes that apply, comma-separated
	// ("1" wrong check digit, "5" errors in some positions, "6" incomplete VIN, "7" manufacturer
	// not registered, "8" no detailed data, "11" incorrect model year, "14" some positions not
	// decoded, "400" invalid characters); ErrorText has "code - text" parts joined by "; ".
	ErrorCode           string `json:"ErrorCode"`
	ErrorText           string `json:"ErrorText"`
	AdditionalErrorText string `json:"AdditionalErrorText"`
}

// envelope is vPIC's answer around the records.
type envelope struct {
	Count          int       `json:"Count"`
	Message        string    `json:"Message"`
	SearchCriteria string    `json:"SearchCriteria"`
	Results        []Decoded `json:"Results"`
}

// DecodeVIN asks vPIC to decode a full VIN (no model-year hint: vPIC settles the cycle itself).
func (c *Client) DecodeVIN(ctx context.Context, vin string) (*Decoded, error) {
	var out envelope
	if err := c.h.GetJSON(ctx, "/vehicles/DecodeVinValues/"+url.PathEscape(vin), url.Values{"format": {"json"}}, &out); err != nil {
		return nil, err
	}
	if len(out.Results) != 1 {
		return nil, upstream.BadAnswer(Name, "GET /vehicles/DecodeVinValues", 200, "Results", fmt.Errorf("%d records for one VIN", len(out.Results)))
	}
	return &out.Results[0], nil
}

// Notice is one "code - text" part of ErrorText.
type Notice struct {
	Code string `json:"code"`
	Text string `json:"text"`
}

// Notices splits ErrorText into its parts.
func (d *Decoded) Notices() []Notice {
	var out []Notice
	for _, part := range strings.Split(d.ErrorText, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		code, text, ok := strings.Cut(part, " - ")
		if !ok {
			code, text = "", part
		}
		out = append(out, Notice{Code: strings.TrimSpace(code), Text: strings.TrimSpace(text)})
	}
	return out
}

// Clean reports whether vPIC decoded the VIN without any notice.
func (d *Decoded) Clean() bool { return strings.TrimSpace(d.ErrorCode) == "0" }
