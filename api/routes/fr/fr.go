// Package fr serves the French public-data routes and the generic geo and weather utilities
// that share their upstreams. Each handler calls one or a few connectors of api/upstream and
// maps the answer to the fields of the spec; the offline ones (tva, iban, jours-feries) call
// api/compute.
//
// Decisions (also in docs/upstreams.md):
//   - an identifier that the registry does not know (SIREN, SIRET lookup, INSEE code, a point
//     outside every parcel) answers 404; a search that matches nothing answers 200 with total 0;
//   - upstream failures answer 502 naming the upstream (504 when it ran out of time); nothing
//     is charged for them (the server never settles a non-2xx);
//   - weather routes need an Open-Meteo subscription key (the keyless tier is non-commercial):
//     without one they are unavailable (503 before any 402);
//   - Paris, Lyon and Marseille: routes taking an INSEE code accept the commune code (75056,
//     69123, 13055) and read every arrondissement where the dataset is per arrondissement
//     (DVF, DPE, IRVE), or map arrondissements to the commune where it is per commune
//     (Géorisques, insee-commune).
package fr

import (
	"errors"
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // Europe/Paris on hosts without a zoneinfo database

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/ademe"
	"github.com/peage/appliance/api/upstream/agencebio"
	"github.com/peage/appliance/api/upstream/apicarto"
	"github.com/peage/appliance/api/upstream/ban"
	"github.com/peage/appliance/api/upstream/boamp"
	"github.com/peage/appliance/api/upstream/bodacc"
	"github.com/peage/appliance/api/upstream/dvf"
	"github.com/peage/appliance/api/upstream/economie"
	"github.com/peage/appliance/api/upstream/education"
	"github.com/peage/appliance/api/upstream/geoapi"
	"github.com/peage/appliance/api/upstream/georisques"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/loyers"
	"github.com/peage/appliance/api/upstream/openmeteo"
	"github.com/peage/appliance/api/upstream/rechercheentreprises"
	"github.com/peage/appliance/api/upstream/tabular"
	"github.com/peage/appliance/api/upstream/transport"
	"github.com/peage/appliance/api/upstream/vies"
)

// Parts are what the routes need.
type Parts struct {
	// Pool is the process-wide client pool, shared with every family calling the same
	// upstreams so that they share its rate limit. When nil, one is built from Upstreams
	// and HTTP.
	Pool *httpc.Pool
	// Upstreams are the resolved registry rows: upstream.Resolve(cfg.Upstream).
	Upstreams map[string]upstream.Spec
	HTTP      httpc.Options
	Now       func() time.Time // nil means time.Now
	// Cache keeps the upstream answers the company reports share (nil: none kept).
	Cache Cache
}

// Routes holds one client per upstream.
type Routes struct {
	entreprises *rechercheentreprises.Client
	bodacc      *bodacc.Client
	boamp       *boamp.Client
	economie    *economie.Client
	education   *education.Client
	ademe       *ademe.Client
	bio         *agencebio.Client
	vies        *vies.Client
	ban         *ban.Client
	geo         *geoapi.Client
	risques     *georisques.Client
	dvf         *dvf.Client
	meteo       *openmeteo.Client
	transport   *transport.Client
	tabular     *tabular.Client
	cadastre    *apicarto.Client
	loyers      *loyers.Client
	now         func() time.Time
	cache       Cache
}

// With builds the clients. Every upstream the routes use must be in d.Upstreams.
func With(d Parts) (*Routes, error) {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Pool == nil {
		d.Pool = httpc.NewPool(d.Upstreams, d.HTTP)
	}
	var errs []error
	h := func(name string) *httpc.Client {
		c, err := d.Pool.Client(name)
		if err != nil {
			errs = append(errs, fmt.Errorf("fr: %w", err))
		}
		return c
	}
	r := &Routes{
		entreprises: rechercheentreprises.New(h(rechercheentreprises.Name)),
		bodacc:      bodacc.New(h(bodacc.Name)),
		boamp:       boamp.New(h(boamp.Name)),
		economie:    economie.New(h(economie.Name)),
		education:   education.New(h(education.Name)),
		ademe:       ademe.New(h(ademe.Name)),
		bio:         agencebio.New(h(agencebio.Name)),
		vies:        vies.New(h(vies.Name)),
		ban:         ban.New(h(ban.Name)),
		geo:         geoapi.New(h(geoapi.Name)),
		risques:     georisques.New(h(georisques.Name)),
		dvf:         dvf.New(h(dvf.Name)),
		meteo:       openmeteo.New(h(openmeteo.Name), h(openmeteo.GeocodingName)),
		transport:   transport.New(h(transport.Name)),
		tabular:     tabular.New(h(tabular.Name)),
		cadastre:    apicarto.New(h(apicarto.Name)),
		loyers:      loyers.New(h(loyers.Name)),
		now:         d.Now,
		cache:       d.Cache,
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return r, nil
}

// binding is one route: its catalog ID, handler and readiness.
type binding struct {
	id    string
	h     catalog.Handler
	ready func() error
}

func (r *Routes) bindings() []binding {
	return []binding{
		{"fr.entreprise", r.entreprise, r.entreprises.Ready},
		{"free.entreprise", r.freeEntreprise, r.entreprises.Ready},
		{"fr.entreprise-360", r.entreprise360, r.entreprises.Ready},
		{"fr.entreprise-360.partial", r.entreprise360Partial, r.entreprises.Ready},
		{"free.entreprise-360", r.freeEntreprise360, r.entreprises.Ready},
		{"fr.kyb", r.kyb, r.entreprises.Ready},
		{"fr.kyb.partial", r.kybPartial, r.entreprises.Ready},
		{"free.kyb", r.freeKYB, r.entreprises.Ready},
		{"fr.score-entreprise", r.scoreEntreprise, r.entreprises.Ready},
		{"fr.score-entreprise.partial", r.scorePartial, r.entreprises.Ready},
		{"free.score-entreprise", r.freeScore, r.entreprises.Ready},
		{"fr.due-diligence", r.dueDiligence, r.entreprises.Ready},
		{"fr.enrich", r.enrich, r.entreprises.Ready},
		{"fr.verif-artisan", r.verifArtisan, r.entreprises.Ready},
		{"fr.valorisation", r.valorisation, r.entreprises.Ready},
		{"fr.reseau-dirigeant", r.reseauDirigeant, r.entreprises.Ready},
		{"fr.concurrents", r.concurrents, r.entreprises.Ready},
		{"fr.qualified-leads", r.qualifiedLeads, r.entreprises.Ready},
		{"fr.estimation-immo", r.estimationImmo, r.immoReady},
		{"free.estimation-immo", r.freeEstimation, r.immoReady},
		{"fr.analyse-immo", r.analyseImmo, r.immoReady},
		{"fr.analyse-immo.partial", r.analyseImmoPartial, r.immoReady},
		{"fr.etude-implantation", r.etudeImplantation, r.entreprises.Ready},
		{"fr.etablissements", r.etablissements, r.entreprises.Ready},
		{"fr.association", r.association, r.entreprises.Ready},
		{"fr.bodacc", r.annonces, r.bodacc.Ready},
		{"fr.bilans", r.bilans, r.economie.Ready},
		{"fr.procedures-collectives", r.procedures, r.bodacc.Ready},
		{"fr.vat-eu", r.vatEU, r.vies.Ready},
		{"fr.tva", r.tva, nil},
		{"fr.iban", r.iban, nil},
		{"fr.rge", r.rge, r.ademe.Ready},
		{"fr.rge-check", r.rgeCheck, r.ademe.Ready},
		{"fr.bio", r.operateursBio, r.bio.Ready},
		{"fr.marches-publics", r.marchesPublics, r.boamp.Ready},
		{"fr.geocode", r.geocode, r.ban.Ready},
		{"fr.reverse-geocode", r.reverseGeocode, r.ban.Ready},
		{"geo.forward", r.geoForward, r.ban.Ready},
		{"geo.reverse", r.geoReverse, r.ban.Ready},
		{"fr.commune", r.commune, r.geo.Ready},
		{"fr.insee-commune", r.inseeCommune, r.geo.Ready},
		{"fr.codes-postaux", r.codesPostaux, r.geo.Ready},
		{"fr.jours-feries", r.joursFeries, nil},
		{"fr.vacances-scolaires", r.vacances, r.education.Ready},
		{"fr.georisques", r.georisques, r.risques.Ready},
		{"fr.carburants", r.carburants, r.economie.Ready},
		{"fr.dpe", r.dpe, r.ademe.Ready},
		{"fr.ecoles", r.ecoles, r.education.Ready},
		{"fr.cadastre", r.parcelle, r.cadastre.Ready},
		{"fr.valeurs-foncieres", r.valeursFoncieres, r.dvf.Ready},
		{"fr.meteo", r.meteoFR, r.meteo.Ready},
		{"weather", r.weather, r.meteo.Ready},
		{"fr.transport", r.transportDatasets, r.transport.Ready},
		{"fr.irve", r.irve, r.tabular.Ready},
	}
}

// IDs lists the catalog IDs the package serves.
func (r *Routes) IDs() []string {
	var ids []string
	for _, b := range r.bindings() {
		ids = append(ids, b.id)
	}
	return ids
}

// Bind attaches every handler to its catalog entry.
func (r *Routes) Bind(c *catalog.Catalog) error {
	var errs []error
	for _, b := range r.bindings() {
		errs = append(errs, c.Bind(b.id, b.h, b.ready))
	}
	return errors.Join(errs...)
}

// parisDate is today in France: a calendar question asked at 23:30 UTC is about tomorrow there.
func (r *Routes) parisDate() time.Time {
	now := r.now()
	if loc, err := time.LoadLocation("Europe/Paris"); err == nil {
		now = now.In(loc)
	}
	return time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
}

func nonEmpty(s ...string) string {
	for _, v := range s {
		if strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// strPtr is nil for "", so absent values read null rather than "".
func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
