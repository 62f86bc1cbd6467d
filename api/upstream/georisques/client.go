// Package georisques is the connector of the Géorisques API v1 (BRGM, ministry of ecological
// transition).
package georisques

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"

	"github.com/peage/appliance/api/compute/plm"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/wire"
)

// Name is the registry name.
const Name = "georisques"

// Client reads the risk report of a commune, the one behind the site's "Connaître les risques
// près de chez moi" page (/resultats_rapport_risque). It replaced the GASPAR list
// (/gaspar/risques) because that endpoint's answer was never found recorded anywhere, while
// this one's is (testdata/PROVENANCE).
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

func (c *Client) Ready() error { return c.h.Ready() }

// Report is the answer of /resultats_rapport_risque.
type Report struct {
	Commune               Commune `json:"commune"`
	URL                   string  `json:"url"` // the report's page on georisques.gouv.fr
	RisquesNaturels       Risks   `json:"risquesNaturels"`
	RisquesTechnologiques Risks   `json:"risquesTechnologiques"`
}

// Commune is the commune the report is about; null leaves it empty.
type Commune struct {
	Libelle    string    `json:"libelle"`
	CodePostal wire.Text `json:"codePostal"`
	CodeInsee  wire.Text `json:"codeInsee"`
}

// Risk is one entry of a report: Key is its name in the report (inondation, seisme, icpe…).
// The two status texts appear in some answers only ("Risque Existant"); Present is the
// report's own verdict.
type Risk struct {
	Key           string `json:"-"`
	Present       bool   `json:"present"`
	Libelle       string `json:"libelle,omitempty"`
	StatutCommune string `json:"libelleStatutCommune,omitempty"`
	StatutAdresse string `json:"libelleStatutAdresse,omitempty"`
}

// Label is the risk's own label, or the one Géorisques gives that key in the recorded answers
// when an answer leaves it out, or the key.
func (r Risk) Label() string {
	if r.Libelle != "" {
		return r.Libelle
	}
	if l, ok := labels[r.Key]; ok {
		return l
	}
	return r.Key
}

// labels are the labels of the recorded answers (testdata), by key.
var labels = map[string]string{
	"inondation": "Inondation", "remonteeNappe": "Remontée de nappe",
	"risqueCotier": "Risques côtiers (submersion marine, tsunami)", "seisme": "Séisme",
	"mouvementTerrain": "Mouvements de terrain", "reculTraitCote": "Recul du trait de côte",
	"retraitGonflementArgile": "Retrait gonflement des argiles", "avalanche": "Avalanche",
	"feuForet": "Feu de forêt", "eruptionVolcanique": "Volcan", "cyclone": "Vent violent", "radon": "Radon",
	"icpe": "Installations industrielles classées (ICPE)", "nucleaire": "Nucléaire",
	"canalisationsMatieresDangereuses": "Canalisations de transport de matières dangereuses",
	"pollutionSols":                    "Pollution des sols", "ruptureBarrage": "Rupture de barrage", "risqueMinier": "Risques miniers",
}

// Risks are a report's risk object, kept in the report's order (a map would lose it); a key
// whose value is null is left out.
type Risks []Risk

func (rs *Risks) UnmarshalJSON(b []byte) error {
	*rs = nil
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		if err != nil {
			return err
		}
		return &json.UnmarshalTypeError{Value: fmt.Sprint(t), Type: reflect.TypeFor[Risks]()}
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			continue
		}
		r := Risk{Key: key}
		if err := json.Unmarshal(raw, &r); err != nil {
			// Name the field under its key (risquesNaturels.radon.present), not the bare "present".
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				te.Field = key + "." + te.Field
				if te.Field == key+"." {
					te.Field = key
				}
			}
			return err
		}
		*rs = append(*rs, r)
	}
	return nil
}

// MarshalJSON writes the object back in its order, so that a cached report reads the same.
func (rs Risks) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, r := range rs {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(r.Key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "%s:%s", k, v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Natural and Technological are the families of a present risk.
const (
	Natural       = "naturel"
	Technological = "technologique"
)

// PresentRisk is a risk the report says concerns the place, with its family.
type PresentRisk struct {
	Risk
	Famille string
}

// Present lists the risks the report marks present, natural then technological, each family
// in the report's order.
func (r *Report) Present() []PresentRisk {
	out := []PresentRisk{}
	for _, fam := range []struct {
		name  string
		risks Risks
	}{{Natural, r.RisquesNaturels}, {Technological, r.RisquesTechnologiques}} {
		for _, k := range fam.risks {
			if k.Present {
				out = append(out, PresentRisk{Risk: k, Famille: fam.name})
			}
		}
	}
	return out
}

// Empty is a report that names no commune and no risk: Géorisques knows nothing of the code.
func (r *Report) Empty() bool {
	return r.Commune.CodeInsee == "" && r.Commune.Libelle == "" && len(r.RisquesNaturels) == 0 && len(r.RisquesTechnologiques) == 0
}

// Report reads the risk report of commune insee. Géorisques is asked Paris, Lyon and Marseille
// by their commune code (75056, 69123, 13055), as its clients do: an arrondissement code is
// mapped to it.
func (c *Client) Report(ctx context.Context, insee string) (*Report, error) {
	var out Report
	err := c.h.GetJSON(ctx, "/resultats_rapport_risque", url.Values{"code_insee": {plm.Commune(insee)}}, &out)
	return &out, err
}
