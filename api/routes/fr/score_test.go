package fr

import (
	"net/http"
	"testing"
	"time"

	"github.com/peage/appliance/api/upstream/upstreamtest"
)

// scoreCase is one score on recorded companies; points are the factors' points in the order
// of the scorecard (A: net income, EBITDA margin, equity ratio, repayment capacity,
// liquidity, revenue trend; B; C; D; E), worked out by hand from the fixtures.
type scoreCase struct {
	name, id string
	at       time.Time
	args     map[string]any
	fixtures func(e *env) map[string]http.Handler
	score    int
	niveau   string
	points   []int
	types    map[string]string
}

func scoreCases() []scoreCase {
	recorded := time.Date(2025, 1, 15, 12, 0, 0, 0, time.UTC)
	danone := func(e *env) map[string]http.Handler {
		t, f := e.t, e.file
		return map[string]http.Handler{
			"recherche-entreprises": upstreamtest.Want(t, "/search", registerQuery("552032534"), f("rechercheentreprises", "search_552032534.json")),
			// DERIVED: the empty envelope stands for a company without any notice (no v2.1
			// recording of Danone's notices exists).
			"bodacc":        upstreamtest.Want(t, bodaccRecords, bodaccQuery("552032534"), f("bodacc", "empty.json")),
			"data-economie": upstreamtest.Want(t, ratiosRecords, ratiosQuery("552032534"), f("economie", "ratios.json")),
		}
	}
	types := map[string]string{"siren": "string", "score": "number", "niveau": "string", "grade": "string", "method_version": "string",
		"facteurs.0.facteur": "string", "facteurs.0.valeur": "number", "facteurs.0.poids": "number", "facteurs.0.points": "number",
		"knock_outs": "array", "finances": "array", "sources": "array", "confidence": "number"}
	return []scoreCase{
		// 2023 accounts: net income > 0 (5), margin 59.7 % (5), equity 46.2 % (10), repayment
		// 0.0 published (0), liquidity -1.3 (0), revenue +10.1 % on 2022 (5); no proceeding
		// (25); founded 1955 (15); GE (10); accounts closed 2023-12-31 (10): 85, A.
		{"score_healthy", "fr.score-entreprise", recorded, map[string]any{"siren": "552032534"}, danone, 85, "solide",
			[]int{5, 5, 10, 0, 0, 5, 25, 15, 10, 10}, types},
		// GANYMEDE ceased: no accounts (40 % of pillar A), no proceeding (25), 6.8 years old
		// (12), no employee (2), newest accounts 2021-12-31 (0); then the knock-out sets 0.
		{"score_ceased", "fr.score-entreprise", now, map[string]any{"q": "88087814500015"}, ganymede, 0, "cessee",
			[]int{2, 2, 4, 4, 2, 2, 25, 12, 2, 0}, map[string]string{"score": "number", "niveau": "string", "knock_outs.0.regle": "string"}},
		// BESOIN DE TOIT (recorded register) with a redressement judiciaire open (the notice
		// DERIVED from a real one, see bodacc/PROVENANCE), no published ratios (DERIVED empty).
		// No ratios (pillar A at 40 %: 16), open proceeding (0), created 2018-11-12: 8 years
		// (12), employee band 03 (5), legal category 5710 with no accounts known (0): 33,
		// capped at 25 by the redressement.
		{"score_receivership", "fr.score-entreprise", now, map[string]any{"siren": "843701079"}, func(e *env) map[string]http.Handler {
			return map[string]http.Handler{
				"recherche-entreprises": upstreamtest.Want(e.t, "/search", registerQuery("843701079"), e.file("rechercheentreprises", "search_843701079.json")),
				"bodacc":                upstreamtest.Want(e.t, bodaccRecords, bodaccQuery("843701079"), e.file("bodacc", "annonces.json")),
				"data-economie":         upstreamtest.Want(e.t, ratiosRecords, ratiosQuery("843701079"), e.file("economie", "empty.json")),
			}
		}, 25, "risque_eleve", []int{2, 2, 4, 4, 2, 2, 0, 12, 5, 0},
			map[string]string{"score": "number", "grade": "string", "facteurs.0.valeur": "null", "facteurs.6.valeur": "string",
				"knock_outs.0.regle": "string", "confidence": "number"}},
		// Without the accounts: pillar A and the filing factor earn 40 % of their weights:
		// 16 + 25 + 15 + 10 + 4 = 70, B.
		{"score_partial", "fr.score-entreprise.partial", recorded, map[string]any{"siren": "552032534"}, danone, 70, "satisfaisant",
			[]int{2, 2, 4, 4, 2, 2, 25, 15, 10, 4},
			map[string]string{"score": "number", "niveau": "string", "procedures_collectives": "number", "_partial": "boolean"}},
		{"free_score", "free.score-entreprise", recorded, map[string]any{"siren": "552032534"}, danone, 70, "satisfaisant", nil,
			map[string]string{"score": "number", "niveau": "string", "method_version": "string", "_trial": "boolean"}},
	}
}

func TestScore(t *testing.T) {
	for _, c := range scoreCases() {
		t.Run(c.name, func(t *testing.T) {
			e := setupAt(t, 0, c.at)
			for name, h := range c.fixtures(e) {
				e.serve(name, h)
			}
			out, err := e.call(c.id, c.args)
			if err != nil {
				t.Fatal(err)
			}
			var (
				score   int
				niveau  string
				factors []Factor
			)
			switch o := out.(type) {
			case Score:
				score, niveau, factors = o.Score, o.Niveau, o.Facteurs
			case ScorePartial:
				score, niveau, factors = o.Score, o.Niveau, o.Facteurs
			case FreeScore:
				score, niveau = o.Score, o.Niveau
			}
			var points []int
			for _, x := range factors {
				points = append(points, x.Points)
			}
			if score != c.score || niveau != c.niveau || (c.points != nil && !equalInts(points, c.points)) {
				t.Errorf("score %d %s %v, want %d %s %v", score, niveau, points, c.score, c.niveau, c.points)
			}
			if c.types != nil {
				checkGolden(t, c.name, out, c.types)
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
