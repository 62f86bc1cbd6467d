package family

import (
	"context"

	"github.com/peage/appliance/internal/fanout"
)

// Reference is the recorded sale price per m² of a postal code's commune (its arrondissement
// in Paris, Lyon and Marseille), as estimation-immo draws it: the same DVF sample, the same
// widening, the same method (prixm2.Version). Other families compare asking prices with it: the fr family offers it (Deps.References).
type Reference struct {
	Insee         string          `json:"insee"`
	Commune       string          `json:"commune"`
	Type          string          `json:"type"` // appartement or maison
	PrixM2        PrixM2          `json:"prix_m2"`
	Echantillon   Echantillon     `json:"echantillon"`
	MethodVersion string          `json:"method_version"`
	Sources       []fanout.Source `json:"sources"`
}

// References answers the DVF reference of a postal code. The fr family offers it to the
// families listed after it (Deps.References), so that none imports fr.
type References interface {
	DVFReference(ctx context.Context, cp, city, typ string) (*Reference, error)
	ReferenceReady() error
}

// PrixM2 is the price per m² of the sample, euros.
type PrixM2 struct {
	Median float64    `json:"median"`
	Q1     float64    `json:"q1"`
	Q3     float64    `json:"q3"`
	Range  [2]float64 `json:"range"` // [q1, q3]: half the sales lie in it
	Min    float64    `json:"min"`
	Max    float64    `json:"max"`
}

// Echantillon says which sales the figures come from.
type Echantillon struct {
	Ventes            int            `json:"ventes"`   // sales kept
	Ecartees          map[string]int `json:"ecartees"` // sales left out, by reason
	Periode           string         `json:"periode"`  // first and last year asked
	Annees            []int          `json:"annees"`   // years whose file was read
	AnneesSansFichier []int          `json:"annees_sans_fichier"`
	AnneesEnEchec     []int          `json:"annees_en_echec"` // the file could not be read: see sources
	Perimetre         string         `json:"perimetre"`       // commune, arrondissement, or the whole city
	Codes             string         `json:"insee_lu"`        // the INSEE code whose files were read
	Elargissements    []string       `json:"elargissements"`  // what was widened, in order
	Fiabilite         string         `json:"fiabilite"`       // faible (< 10 sales), moyenne (< 30), bonne
	Note              *string        `json:"note"`
}
