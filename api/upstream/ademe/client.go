// Package ademe is the connector of ADEME's Data Fair open-data API: the list of RGE-certified
// firms and the energy performance diagnoses (DPE) of existing dwellings.
package ademe

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	"github.com/peage/appliance/api/upstream/httpc"
)

// Name is the registry name.
const Name = "ademe"

// Client reads the datasets' lines.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

func (c *Client) Ready() error { return c.h.Ready() }

// Lines is the Data Fair envelope.
type Lines[T any] struct {
	Total   int    `json:"total"`
	Next    string `json:"next"`
	Results []T    `json:"results"`
}

// RGE is one (company × qualification) row.
type RGE struct {
	Siret             string   `json:"siret"`
	NomEntreprise     string   `json:"nom_entreprise"`
	Adresse           string   `json:"adresse"`
	CodePostal        string   `json:"code_postal"`
	Commune           string   `json:"commune"`
	Telephone         string   `json:"telephone"`
	Email             string   `json:"email"`
	SiteInternet      string   `json:"site_internet"`
	CodeQualification string   `json:"code_qualification"`
	NomQualification  string   `json:"nom_qualification"`
	NomCertificat     string   `json:"nom_certificat"`
	Domaine           string   `json:"domaine"`
	MetaDomaine       string   `json:"meta_domaine"`
	Organisme         string   `json:"organisme"`
	Particulier       bool     `json:"particulier"`
	LienDateDebut     string   `json:"lien_date_debut"`
	LienDateFin       string   `json:"lien_date_fin"`
	Latitude          *float64 `json:"latitude"`
	Longitude         *float64 `json:"longitude"`
}

const rgeDataset = "/datasets/liste-des-entreprises-rge-2/lines"

// RGEByCP lists the rows of a postal code. Matching on domaine is left to the caller:
// Lucene matching on those keyword fields is case- and accent-sensitive.
func (c *Client) RGEByCP(ctx context.Context, cp string) (*Lines[RGE], error) {
	var out Lines[RGE]
	err := c.h.GetJSON(ctx, rgeDataset, url.Values{"qs": {`code_postal:"` + cp + `"`}, "size": {"1000"}, "sort": {"nom_entreprise"}}, &out)
	return &out, err
}

// RGEBySiret lists the rows of one establishment.
func (c *Client) RGEBySiret(ctx context.Context, siret string) (*Lines[RGE], error) {
	var out Lines[RGE]
	err := c.h.GetJSON(ctx, rgeDataset, url.Values{"siret_eq": {siret}, "size": {"100"}}, &out)
	return &out, err
}

// DPE is one diagnosis.
type DPE struct {
	NumeroDPE         string   `json:"numero_dpe"`
	Date              string   `json:"date_etablissement_dpe"`
	EtiquetteDPE      string   `json:"etiquette_dpe"`
	EtiquetteGES      string   `json:"etiquette_ges"`
	ConsoM2           *float64 `json:"conso_5_usages_par_m2_ep"`
	GESM2             *float64 `json:"emission_ges_5_usages_par_m2"`
	Surface           *float64 `json:"surface_habitable_logement"`
	TypeBatiment      string   `json:"type_batiment"`
	AnneeConstruction *int     `json:"annee_construction"`
	Adresse           string   `json:"adresse_ban"`
	CodePostal        string   `json:"code_postal_ban"`
	CodeINSEE         string   `json:"code_insee_ban"`
	Commune           string   `json:"nom_commune_ban"`
}

const dpeFields = "numero_dpe,date_etablissement_dpe,etiquette_dpe,etiquette_ges,conso_5_usages_par_m2_ep,emission_ges_5_usages_par_m2,surface_habitable_logement,type_batiment,annee_construction,adresse_ban,code_postal_ban,code_insee_ban,nom_commune_ban"

// DPEQuery filters on INSEE codes (several for Paris, Lyon and Marseille, whose rows carry
// arrondissement codes) or on a postal code.
type DPEQuery struct {
	INSEE []string
	CP    string
	Size  int
}

// DPE lists the newest diagnoses.
func (c *Client) DPE(ctx context.Context, q DPEQuery) (*Lines[DPE], error) {
	var qs string
	switch {
	case len(q.INSEE) == 1:
		qs = `code_insee_ban:"` + q.INSEE[0] + `"`
	case len(q.INSEE) > 1:
		quoted := make([]string, len(q.INSEE))
		for i, c := range q.INSEE {
			quoted[i] = `"` + c + `"`
		}
		qs = "code_insee_ban:(" + strings.Join(quoted, " OR ") + ")"
	default:
		qs = `code_postal_ban:"` + q.CP + `"`
	}
	size := q.Size
	if size <= 0 || size > 100 {
		size = 50
	}
	var out Lines[DPE]
	err := c.h.GetJSON(ctx, "/datasets/dpe03existant/lines", url.Values{
		"qs": {qs}, "size": {strconv.Itoa(size)}, "select": {dpeFields}, "sort": {"-date_etablissement_dpe"}}, &out)
	return &out, err
}
