package fr

import (
	"context"
	"math"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/compute/plm"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/ban"
	"github.com/peage/appliance/api/upstream/geoapi"
)

// Geocoded is the answer of /v1/fr/geocode.
type Geocoded struct {
	Query   string    `json:"query"`
	Total   int       `json:"total"`
	Results []Address `json:"results"`
}

// Address is one BAN match.
type Address struct {
	Label    string  `json:"label"`
	Lat      float64 `json:"lat"`
	Lon      float64 `json:"lon"`
	Score    float64 `json:"score"`
	Type     string  `json:"type"`
	Postcode string  `json:"postcode"`
	Insee    string  `json:"insee"` // arrondissement code in Paris, Lyon, Marseille
	City     string  `json:"city"`
	Context  string  `json:"context"`
}

func address(f ban.Feature) Address {
	p := f.Properties
	return Address{Label: p.Label, Lat: f.Geometry.Coordinates[1], Lon: f.Geometry.Coordinates[0], Score: p.Score, Type: p.Type,
		Postcode: p.Postcode, Insee: p.Citycode, City: p.City, Context: p.Context}
}

func (r *Routes) geocode(ctx context.Context, req *catalog.Request) (any, error) {
	q := req.Args.Str("q")
	res, err := r.ban.Search(ctx, q, 5)
	if err != nil {
		return nil, err
	}
	out := Geocoded{Query: q, Total: len(res.Features), Results: []Address{}}
	for _, f := range res.Features {
		out.Results = append(out.Results, address(f))
	}
	return out, nil
}

// Reversed is the answer of /v1/fr/reverse-geocode.
type Reversed struct {
	Label     string   `json:"label"`
	CP        string   `json:"cp"`
	Ville     string   `json:"ville"`
	Insee     string   `json:"insee"`
	Lat       float64  `json:"lat"`
	Lon       float64  `json:"lon"`
	DistanceM *float64 `json:"distance_m"`
}

func (r *Routes) nearest(ctx context.Context, req *catalog.Request) (*ban.Feature, error) {
	res, err := r.ban.Reverse(ctx, req.Args.Float("lat"), req.Args.Float("lon"))
	if err != nil {
		return nil, err
	}
	f := res.Nearest()
	if f == nil {
		return nil, apierr.NotFound("no French address near %g,%g (the Base Adresse Nationale covers France only)", req.Args.Float("lat"), req.Args.Float("lon"))
	}
	return f, nil
}

func (r *Routes) reverseGeocode(ctx context.Context, req *catalog.Request) (any, error) {
	f, err := r.nearest(ctx, req)
	if err != nil {
		return nil, err
	}
	a := address(*f)
	return Reversed{Label: a.Label, CP: a.Postcode, Ville: a.City, Insee: a.Insee, Lat: a.Lat, Lon: a.Lon, DistanceM: f.Properties.Distance}, nil
}

// Forward is the answer of /v1/geo/forward.
type Forward struct {
	Query string `json:"query"`
	Best  Place  `json:"best"`
	Total int    `json:"total"`
}

// Place is a generic geocoding result.
type Place struct {
	Label     string  `json:"label"`
	Lat       float64 `json:"lat"`
	Lon       float64 `json:"lon"`
	Postcode  string  `json:"postcode"`
	City      string  `json:"city"`
	InseeCode string  `json:"insee_code"`
	Score     float64 `json:"score"`
	Source    string  `json:"source"`
}

func place(f ban.Feature) Place {
	a := address(f)
	return Place{Label: a.Label, Lat: a.Lat, Lon: a.Lon, Postcode: a.Postcode, City: a.City, InseeCode: a.Insee, Score: a.Score, Source: "ban"}
}

func (r *Routes) geoForward(ctx context.Context, req *catalog.Request) (any, error) {
	q := req.Args.Str("q")
	limit := int(req.Args.Int("limit"))
	res, err := r.ban.Search(ctx, q, max(limit, 1))
	if err != nil {
		return nil, err
	}
	if len(res.Features) == 0 {
		return nil, apierr.NotFound("no address matches %q", q)
	}
	return Forward{Query: q, Best: place(res.Features[0]), Total: len(res.Features)}, nil
}

// ReverseAddress is the answer of /v1/geo/reverse.
type ReverseAddress struct {
	Address   ReversePlace `json:"address"`
	DistanceM *float64     `json:"distance_m"`
}

// ReversePlace is the address found at a point.
type ReversePlace struct {
	Label     string `json:"label"`
	Postcode  string `json:"postcode"`
	City      string `json:"city"`
	InseeCode string `json:"insee_code"`
	Source    string `json:"source"`
}

func (r *Routes) geoReverse(ctx context.Context, req *catalog.Request) (any, error) {
	f, err := r.nearest(ctx, req)
	if err != nil {
		return nil, err
	}
	p := place(*f)
	return ReverseAddress{Address: ReversePlace{Label: p.Label, Postcode: p.Postcode, City: p.City, InseeCode: p.InseeCode, Source: p.Source}, DistanceM: f.Properties.Distance}, nil
}

// Commune is a commune as the commune routes show it.
type Commune struct {
	Nom          string   `json:"nom"`
	Insee        string   `json:"insee"`
	Population   *int     `json:"population"`
	Region       *Ref     `json:"region"`
	Departement  *Ref     `json:"departement"`
	EPCI         *Ref     `json:"epci"`
	CodesPostaux []string `json:"codes_postaux"`
	Lat          *float64 `json:"lat"`
	Lon          *float64 `json:"lon"`
}

// Ref is a code and its name.
type Ref struct {
	Code string `json:"code"`
	Nom  string `json:"nom"`
}

func ref(r *geoapi.Ref) *Ref {
	if r == nil {
		return nil
	}
	return &Ref{Code: r.Code, Nom: r.Nom}
}

func commune(c geoapi.Commune) Commune {
	out := Commune{Nom: c.Nom, Insee: c.Code, Population: c.Population, Region: ref(c.Region), Departement: ref(c.Departement),
		EPCI: ref(c.EPCI), CodesPostaux: nonNil(c.CodesPostaux)}
	if c.Centre != nil {
		lon, lat := c.Centre.Coordinates[0], c.Centre.Coordinates[1]
		out.Lat, out.Lon = &lat, &lon
	}
	return out
}

// Communes is the answer of /v1/fr/commune.
type Communes struct {
	Total   int       `json:"total"`
	Results []Commune `json:"results"`
}

func (r *Routes) commune(ctx context.Context, req *catalog.Request) (any, error) {
	var (
		list []geoapi.Commune
		err  error
	)
	if cp := req.Args.Str("cp"); cp != "" {
		list, err = r.geo.ByPostalCode(ctx, cp)
	} else {
		list, err = r.geo.ByName(ctx, req.Args.Str("q"), 10)
	}
	if err != nil {
		return nil, err
	}
	out := Communes{Total: len(list), Results: []Commune{}}
	for _, c := range list {
		out.Results = append(out.Results, commune(c))
	}
	return out, nil
}

// InseeCommune is the answer of /v1/fr/insee-commune.
type InseeCommune struct {
	Commune
	SurfaceKm2     *float64 `json:"surface_km2"`
	DensiteHabKm2  *float64 `json:"densite_hab_km2"` // population / area, computed here
	Arrondissement *string  `json:"arrondissement"`  // the code asked, when it was one
}

func (r *Routes) inseeCommune(ctx context.Context, req *catalog.Request) (any, error) {
	code := req.Args.Str("insee")
	// geo.api.gouv.fr files arrondissements apart from communes: answer for the commune.
	city := plm.Commune(code)
	c, err := r.geo.ByCode(ctx, city)
	if err != nil {
		if upstream.IsNotFound(err) {
			return nil, apierr.NotFound("no commune with INSEE code %s", code)
		}
		return nil, err
	}
	out := InseeCommune{Commune: commune(*c)}
	if city != code {
		out.Arrondissement = &code
	}
	out.SurfaceKm2, out.DensiteHabKm2 = areaDensity(c)
	return out, nil
}

func round(f float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(f*p) / p
}

// CodesPostaux is the answer of /v1/fr/codes-postaux.
type CodesPostaux struct {
	CP       string       `json:"cp"`
	Communes []CommuneRef `json:"communes"`
}

// CommuneRef names a commune.
type CommuneRef struct {
	Nom   string `json:"nom"`
	Insee string `json:"insee"`
}

func (r *Routes) codesPostaux(ctx context.Context, req *catalog.Request) (any, error) {
	cp := req.Args.Str("cp")
	list, err := r.geo.ByPostalCode(ctx, cp)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, apierr.NotFound("no commune has the postal code %s", cp)
	}
	out := CodesPostaux{CP: cp, Communes: []CommuneRef{}}
	for _, c := range list {
		out.Communes = append(out.Communes, CommuneRef{Nom: c.Nom, Insee: c.Code})
	}
	return out, nil
}

// Parcelle is the answer of /v1/fr/cadastre.
type Parcelle struct {
	IDU          string    `json:"idu"`
	Section      string    `json:"section"`
	Number       string    `json:"number"`
	ContenanceM2 *int      `json:"contenance_m2"`
	Insee        string    `json:"insee"`
	Commune      string    `json:"commune"`
	Prefixe      string    `json:"prefixe"`
	Feuille      int       `json:"feuille"`
	Autres       []Parcel2 `json:"autres"` // other parcels at the point (a boundary)
}

// Parcel2 is another parcel touching the point.
type Parcel2 struct {
	IDU          string `json:"idu"`
	ContenanceM2 *int   `json:"contenance_m2"`
}

func (r *Routes) parcelle(ctx context.Context, req *catalog.Request) (any, error) {
	p, err := r.cadastre.Parcelle(ctx, req.Args.Float("lat"), req.Args.Float("lon"))
	if err != nil {
		return nil, err
	}
	if len(p.Features) == 0 {
		return nil, apierr.NotFound("no cadastral parcel at %g,%g (public road, water, or outside France)", req.Args.Float("lat"), req.Args.Float("lon"))
	}
	f := p.Features[0].Properties
	out := Parcelle{IDU: f.IDU, Section: f.Section, Number: f.Numero, ContenanceM2: f.Contenance, Insee: nonEmpty(f.CodeINSEE, f.CodeDep+f.CodeCom),
		Commune: f.NomCom, Prefixe: f.ComAbs, Feuille: f.Feuille, Autres: []Parcel2{}}
	for _, o := range p.Features[1:] {
		out.Autres = append(out.Autres, Parcel2{IDU: o.Properties.IDU, ContenanceM2: o.Properties.Contenance})
	}
	return out, nil
}
