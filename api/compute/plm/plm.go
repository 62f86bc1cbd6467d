// Package plm knows the municipal arrondissements of Paris, Lyon and Marseille: some
// datasets (BAN, DVF, DPE) use the arrondissement codes, others only the commune's.
package plm

import "fmt"

var cities = map[string]struct {
	first, n int
}{
	"75056": {75101, 20}, // Paris
	"69123": {69381, 9},  // Lyon
	"13055": {13201, 16}, // Marseille
}

// Arrondissements lists the arrondissement codes of a PLM commune code, or nil.
func Arrondissements(insee string) []string {
	c, ok := cities[insee]
	if !ok {
		return nil
	}
	out := make([]string, c.n)
	for i := range c.n {
		out[i] = fmt.Sprint(c.first + i)
	}
	return out
}

// Commune maps an arrondissement code to its commune's code; other codes are unchanged.
func Commune(insee string) string {
	for city, c := range cities {
		for i := range c.n {
			if insee == fmt.Sprint(c.first+i) {
				return city
			}
		}
	}
	return insee
}
