package fr

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/peage/appliance/api/upstream/upstreamtest"
)

// kybCase is one verdict on recorded companies, with the rules that fire checked by hand.
type kybCase struct {
	name, id string
	at       time.Time
	args     map[string]any
	fixtures func(e *env) map[string]http.Handler
	verdict  string
	fired    []string // checked by hand against the fixtures
	types    map[string]string
}

func kybCases() []kybCase {
	// The Danone ratios were recorded on 2024-12-12: a month later its accounts are fresh.
	recorded := time.Date(2025, 1, 15, 12, 0, 0, 0, time.UTC)
	danone := func(e *env) map[string]http.Handler {
		t, f := e.t, e.file
		return map[string]http.Handler{
			"recherche-entreprises": upstreamtest.Want(t, "/search", registerQuery("552032534"), f("rechercheentreprises", "search_552032534.json")),
			// DERIVED: no recording of Danone's notices in the v2.1 format exists; the empty
			// envelope stands for a company without any notice.
			"bodacc":        upstreamtest.Want(t, bodaccRecords, bodaccQuery("552032534"), f("bodacc", "empty.json")),
			"vies":          upstreamtest.Want(t, viesREST+"/ms/FR/vat/27552032534", nil, f("vies", "get_valid.json")),
			"data-economie": upstreamtest.Want(t, ratiosRecords, ratiosQuery("552032534"), f("economie", "ratios.json")),
		}
	}
	types := map[string]string{"siren": "string", "verdict": "string", "method_version": "string", "fiscal.tva_validee_vies": "boolean",
		"dirigeants": "array", "comptes": "array", "controles.0.regle": "string", "controles.0.poids": "number", "controles.0.points": "number",
		"controles.0.valeur": "string", "controles.0.resultat": "string", "sources": "array", "confidence": "number"}
	return []kybCase{

		// GANYMEDE ceased in 2022 and published a deregistration.
		{"kyb_ceased", "fr.kyb", now, map[string]any{"q": "88087814500015"}, ganymede, NonConforme,
			[]string{"etat_administratif", "radiation", "tva_validee_vies", "comptes_24_mois"}, types},
		{"kyb_healthy", "fr.kyb", recorded, map[string]any{"siren": "552032534"}, danone, Conforme, nil, types},
		// VIES blocking our address (its recorded IP_BLOCKED answer for a French number, served
		// to Danone's: derived use): the VAT rule is unchecked, not failed, so no CONFORME.
		{"kyb_vies_blocked", "fr.kyb", recorded, map[string]any{"siren": "552032534"}, func(e *env) map[string]http.Handler {
			h := danone(e)
			h["vies"] = upstreamtest.Want(e.t, viesREST+"/ms/FR/vat/27552032534", nil, e.file("vies", "get_ip_blocked_fr.json"))
			return h
		}, AVerifier, nil, nil},
		// The same company two years on: its newest recorded accounts are now too old.
		{"kyb_accounts_stale", "fr.kyb", now, map[string]any{"siren": "552032534"}, danone, AVerifier, []string{"comptes_24_mois"}, nil},
		// BESOIN DE TOIT (recorded register) with a redressement judiciaire open (the notice
		// DERIVED from a real one, see bodacc/PROVENANCE); VIES MS_UNAVAILABLE (DERIVED, the VAT
		// rule is unchecked); a 5710 company with no accounts known: the accounts rule fires.
		{"kyb_receivership", "fr.kyb", now, map[string]any{"siren": "843701079"}, func(e *env) map[string]http.Handler {
			return map[string]http.Handler{
				"recherche-entreprises": upstreamtest.Want(e.t, "/search", registerQuery("843701079"), e.file("rechercheentreprises", "search_843701079.json")),
				"bodacc":                upstreamtest.Want(e.t, bodaccRecords, bodaccQuery("843701079"), e.file("bodacc", "annonces.json")),
				"vies":                  upstreamtest.Want(e.t, viesREST+"/ms/FR/vat/90843701079", nil, e.file("vies", "get_ms_unavailable.json")),
				"data-economie":         upstreamtest.Want(e.t, ratiosRecords, ratiosQuery("843701079"), e.file("economie", "empty.json")),
			}
		}, AVerifier, []string{"procedure_collective_en_cours", "comptes_24_mois"},
			map[string]string{"verdict": "string", "fiscal.tva_validee_vies": "null", "controles.3.valeur": "string", "controles.3.resultat": "string", "confidence": "number"}},
		{"kyb_partial", "fr.kyb.partial", now, map[string]any{"q": "88087814500015"}, ganymede, NonConforme,
			[]string{"etat_administratif", "radiation", "tva_validee_vies"},
			map[string]string{"verdict": "string", "tva_validee_vies": "boolean", "insolvency": "string", "drapeaux": "number", "_partial": "boolean"}},
		{"free_kyb", "free.kyb", recorded, map[string]any{"siren": "552032534"}, danone, AVerifier, nil,
			map[string]string{"verdict": "string", "method_version": "string", "controles": "array", "_trial": "boolean"}},
	}
}

// TestKYB runs the verdict on recorded companies and checks, by hand, which rules fire.
func TestKYB(t *testing.T) {
	for _, c := range kybCases() {
		t.Run(c.name, func(t *testing.T) {
			e := setupAt(t, 0, c.at)
			for name, h := range c.fixtures(e) {
				e.serve(name, h)
			}
			out, err := e.call(c.id, c.args)
			if err != nil {
				t.Fatal(err)
			}
			var checks []Check
			var v string
			switch o := out.(type) {
			case KYB:
				checks, v = o.Controles, o.Verdict
			case KYBPartial:
				checks, v = o.Controles, o.Verdict
			case FreeKYB:
				checks, v = o.Controles, o.Verdict
			}
			var fired []string
			for _, ch := range checks {
				if ch.Resultat == Fired {
					fired = append(fired, ch.Regle)
				}
				if want := map[bool]int{true: ch.Poids}[ch.Resultat == Passed]; ch.Points != want {
					t.Errorf("%s: %s earned %d of %d", c.name, ch.Regle, ch.Points, ch.Poids)
				}
			}
			if v != c.verdict || !slices.Equal(fired, c.fired) {
				t.Errorf("verdict %s with %v fired, want %s with %v", v, fired, c.verdict, c.fired)
			}
			if c.types != nil {
				checkGolden(t, c.name, out, c.types)
			}
		})
	}
}

// A rule whose source failed is never taken as passed: the verdict cannot be CONFORME.
func TestKYBUncheckedRulesAreNotPassed(t *testing.T) {
	checks := []Check{
		rule("etat_administratif", KnockOut, 0, "A", "").with(Passed, ""),
		rule("tva_validee_vies", Vigilance, 1, nil, "").with(Unchecked, ""),
	}
	if v, flags := verdict(checks); v != AVerifier || flags != 0 {
		t.Errorf("verdict = %s, %d flags", v, flags)
	}
	checks[1] = checks[1].with(Passed, "")
	if v, _ := verdict(checks); v != Conforme {
		t.Errorf("verdict = %s", v)
	}
}

// TestSameName: the VIES name check tolerates legal forms, case and accents, and nothing else.
func TestSameName(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"SA DANONE", "DANONE", true},
		{"SAS DURAND BOIS", "Durand Bois", true},
		{"SOCIETE GENERALE", "Société Générale", true},
		{"ORLEN SPÓŁKA AKCYJNA", "DANONE", false},
		{"SARL MARTIN", "SAS DURAND", false},
	} {
		if got := sameName(c.a, c.b); got != c.want {
			t.Errorf("sameName(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
