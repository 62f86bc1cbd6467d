// Package dvf is the connector of the geolocated DVF files (DGFiP property sales, cleaned
// by Etalab) on files.data.gouv.fr: one CSV per commune and year.
package dvf

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/peage/appliance/api/compute/plm"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/wire"
)

// Name is the registry name.
const Name = "dvf"

// Client reads the commune files.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

func (c *Client) Ready() error { return c.h.Ready() }

// Mutation is one sale, however many lines (parcels × premises × crops) it spans.
type Mutation struct {
	ID             string
	Date           string
	Nature         string
	Valeur         *float64 // euros; the same total repeated on each line of the sale
	Type           string   // Maison, Appartement, Local…, Dépendance, Terrain, or Mixte
	SurfaceBati    int      // m² of the premises, each counted once
	Pieces         int
	SurfaceTerrain int
	Dwellings      int  // distinct houses and flats, each counted once
	Commercial     bool // a "Local industriel. commercial ou assimilé" is part of the sale
	Adresse        string
	CodeCommune    string
	Parcelles      []string
	Lat, Lon       *float64
}

// path of a commune file: the département is 3 characters overseas, 2 elsewhere (2A, 2B).
func path(year int, insee string) string {
	dep := insee[:2]
	if strings.HasPrefix(insee, "97") {
		dep = insee[:3]
	}
	return fmt.Sprintf("/%d/communes/%s/%s.csv", year, dep, insee)
}

// ErrNoFile means DVF publishes no file for the commune and year: the year is not published
// yet, or the commune is in Alsace-Moselle or Mayotte, which DVF does not cover. It is not
// "no sale".
var ErrNoFile = errors.New("DVF has no file for this commune and year")

// Mutations lists the sales of insee in year, newest first. Paris, Lyon and Marseille are
// published per arrondissement, so their files are read and joined; an arrondissement
// without a file has no sale that year, but no file at all is ErrNoFile.
func (c *Client) Mutations(ctx context.Context, year int, insee string) ([]Mutation, error) {
	codes := plm.Arrondissements(insee)
	if codes == nil {
		codes = []string{insee}
	}
	// Paris has 20 files: read a few at once (the rate limit still paces them).
	parts := make([][]Mutation, len(codes))
	errs := make([]error, len(codes))
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i, code := range codes {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			parts[i], errs[i] = c.file(ctx, year, code)
		})
	}
	wg.Wait()
	var all []Mutation
	files := 0
	for i := range codes {
		if errors.Is(errs[i], ErrNoFile) {
			continue
		}
		if errs[i] != nil {
			return nil, errs[i]
		}
		files++
		all = append(all, parts[i]...)
	}
	if files == 0 {
		return nil, ErrNoFile
	}
	slices.SortStableFunc(all, func(a, b Mutation) int { return strings.Compare(b.Date, a.Date) })
	return all, nil
}

func (c *Client) file(ctx context.Context, year int, insee string) ([]Mutation, error) {
	r, err := c.h.Do(ctx, "GET", path(year, insee), nil, nil)
	if upstream.IsNotFound(err) {
		return nil, ErrNoFile
	}
	if err != nil {
		return nil, err
	}
	ms, err := Parse(r.Body)
	if err != nil {
		return nil, upstream.BadAnswer(Name, "GET "+path(year, insee), r.Status, wire.MissingField(err), err)
	}
	return ms, nil
}

// MissingColumn is a table whose header lacks a column the parser needs.
type MissingColumn = wire.MissingColumn

// Parse groups the lines of a DVF CSV by id_mutation.
func Parse(b []byte) ([]Mutation, error) {
	rd := csv.NewReader(bytes.NewReader(b))
	rd.FieldsPerRecord = -1
	head, err := rd.Read()
	if errors.Is(err, io.EOF) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("DVF header: %w", err)
	}
	col, err := wire.NewHeader(head, "DVF", "id_mutation", "date_mutation", "valeur_fonciere", "type_local", "id_parcelle")
	if err != nil {
		return nil, err
	}
	get := col.Get
	byID := map[string]*Mutation{}
	var order []string
	type seenKey struct{ a, b, c, d, e string }
	premises := map[seenKey]bool{}
	land := map[seenKey]bool{}
	kinds := map[string]map[string]bool{}
	for {
		rec, err := rd.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("DVF line: %w", err)
		}
		id := get(rec, "id_mutation")
		m := byID[id]
		if m == nil {
			m = &Mutation{ID: id, Date: get(rec, "date_mutation"), Nature: get(rec, "nature_mutation"), CodeCommune: get(rec, "code_commune")}
			if v, err := strconv.ParseFloat(get(rec, "valeur_fonciere"), 64); err == nil {
				m.Valeur = &v
			}
			m.Adresse = strings.Join(strings.Fields(strings.Join([]string{get(rec, "adresse_numero"), get(rec, "adresse_suffixe"), get(rec, "adresse_nom_voie"), get(rec, "code_postal"), get(rec, "nom_commune")}, " ")), " ")
			m.Lat, m.Lon = num(get(rec, "latitude")), num(get(rec, "longitude"))
			byID[id] = m
			kinds[id] = map[string]bool{}
			order = append(order, id)
		}
		if p := get(rec, "id_parcelle"); p != "" && !slices.Contains(m.Parcelles, p) {
			m.Parcelles = append(m.Parcelles, p)
		}
		if t := get(rec, "type_local"); t != "" {
			kinds[id][t] = true
			// A premises line repeats once per parcel and per crop of the sale: count it once
			// (same type, surface, rooms and first lot, the rule of data.gouv's DVF statistics).
			k := seenKey{id, "", t, get(rec, "surface_reelle_bati"), get(rec, "lot1_numero") + "/" + get(rec, "nombre_pieces_principales")}
			if !premises[k] && t != "Dépendance" {
				premises[k] = true
				m.SurfaceBati += atoi(get(rec, "surface_reelle_bati"))
				m.Pieces += atoi(get(rec, "nombre_pieces_principales"))
				if t == "Maison" || t == "Appartement" {
					m.Dwellings++
				}
			}
			if strings.HasPrefix(t, "Local") {
				m.Commercial = true
			}
		}
		if s := get(rec, "surface_terrain"); s != "" {
			k := seenKey{id, get(rec, "id_parcelle"), get(rec, "code_nature_culture"), get(rec, "code_nature_culture_speciale"), s}
			if !land[k] {
				land[k] = true
				m.SurfaceTerrain += atoi(s)
			}
		}
	}
	out := make([]Mutation, 0, len(order))
	for _, id := range order {
		m := byID[id]
		m.Type = kind(kinds[id])
		out = append(out, *m)
	}
	return out, nil
}

// kind names the sale after its main premises: dependencies alone are Dépendance, no
// premises at all is land.
func kind(k map[string]bool) string {
	delete(k, "Dépendance")
	switch len(k) {
	case 0:
		return "Terrain"
	case 1:
		for t := range k {
			return t
		}
	}
	return "Mixte"
}

func num(s string) *float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil
	}
	return &v
}

func atoi(s string) int {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return int(f)
	}
	return 0
}
