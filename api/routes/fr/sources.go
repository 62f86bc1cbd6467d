package fr

import (
	"context"
	"encoding/json"
	"time"

	"github.com/peage/appliance/api/upstream/ademe"
	"github.com/peage/appliance/api/upstream/agencebio"
	"github.com/peage/appliance/api/upstream/boamp"
	"github.com/peage/appliance/api/upstream/bodacc"
	"github.com/peage/appliance/api/upstream/economie"
	"github.com/peage/appliance/api/upstream/ods"
	re "github.com/peage/appliance/api/upstream/rechercheentreprises"
	"github.com/peage/appliance/api/upstream/vies"
)

// The calls the company reports share: one constructor per source, so that every report
// keeps and finds an answer under the same key. The keep times follow how often each source
// changes: notices and VAT status within the day, filed accounts and RGE lists daily.
const (
	keepRegister = time.Hour
	keepNotices  = time.Hour
	keepVAT      = time.Hour
	keepDaily    = 24 * time.Hour
)

func registerCall(r *Routes, q string, out **re.Results) call {
	return call{Source: re.Name, Key: "fr/report/register/" + q, TTL: keepRegister, Out: out,
		Run: func(ctx context.Context) (err error) { *out, err = r.entreprises.Find(ctx, q, 1); return }}
}

func noticesCall(r *Routes, siren string, out **ods.Page[bodacc.Annonce]) call {
	return call{Source: bodacc.Name, Key: "fr/report/bodacc/" + siren, TTL: keepNotices, Out: out,
		Run: func(ctx context.Context) (err error) { *out, err = r.bodacc.Annonces(ctx, siren, ""); return }}
}

func vatCall(r *Routes, number string, out **vies.Result) call {
	return call{Source: vies.Name, Key: "fr/report/vies/" + number, TTL: keepVAT, Out: out,
		Run: func(ctx context.Context) (err error) { *out, err = r.vies.Check(ctx, number[:2], number[2:]); return }}
}

func ratiosCall(r *Routes, siren string, out **ods.Page[economie.Ratio]) call {
	return call{Source: economie.Name, Key: "fr/report/ratios/" + siren, TTL: keepDaily, Out: out,
		Run: func(ctx context.Context) (err error) { *out, err = r.economie.Ratios(ctx, siren); return }}
}

func rgeCall(r *Routes, siret string, out **ademe.Lines[ademe.RGE]) call {
	return call{Source: ademe.Name, Key: "fr/report/rge/" + siret, TTL: keepDaily, Out: out,
		Run: func(ctx context.Context) (err error) { *out, err = r.ademe.RGEBySiret(ctx, siret); return }}
}

func bioCall(r *Routes, siren string, out **agencebio.Page) call {
	return call{Source: agencebio.Name, Key: "fr/report/bio/" + siren, TTL: keepDaily, Out: out,
		Run: func(ctx context.Context) (err error) { *out, err = r.bio.ParSiren(ctx, siren); return }}
}

// awardsCall searches BOAMP for notices naming the company (full text); the caller keeps
// those whose titulaire is the company.
func awardsCall(r *Routes, siren, name string, out **ods.Page[boamp.Avis]) call {
	return call{Source: boamp.Name, Key: "fr/report/boamp/" + siren, TTL: keepDaily, Out: out,
		Run: func(ctx context.Context) (err error) {
			*out, err = r.boamp.Search(ctx, boamp.Query{Text: name, Max: maxAwardsRead})
			return
		}}
}

const maxAwardsRead = 100

// searchCall is a filtered register search (competitors, leads, a person's companies),
// kept under its canonical query.
func searchCall(r *Routes, q re.Query, out **re.Results) call {
	return call{Source: re.Name, Key: "fr/report/search/" + searchKey(q), TTL: keepRegister, Out: out,
		Run: func(ctx context.Context) (err error) { *out, err = r.entreprises.Search(ctx, q); return }}
}

func searchKey(q re.Query) string {
	b, _ := json.Marshal(q)
	return string(b)
}
