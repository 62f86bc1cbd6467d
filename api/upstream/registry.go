package upstream

import (
	"fmt"
	"slices"
	"time"
)

// Spec is one upstream: where it lives, how hard we may call it, and its terms.
type Spec struct {
	Name    string // referenced by catalog.Entry.Upstream and by config overrides
	BaseURL string
	Timeout time.Duration // per attempt
	RPS     float64       // client-side limit, at or below the published one
	Burst   int
	Retries int // extra attempts, idempotent calls only
	// KeyParam or KeyHeader says how a credential is sent; NeedsKey makes routes using the
	// upstream unavailable (503 before any 402) until Key is configured.
	KeyParam  string
	KeyHeader string
	// KeyBasic sends the key as the user name of HTTP Basic authentication, with an empty
	// password (Companies House).
	KeyBasic bool
	NeedsKey bool
	Key      string
	// KeyedBaseURL replaces BaseURL once a key is configured (paid hosts of freemium APIs).
	KeyedBaseURL string
	Terms        string // licence and use conditions, surfaced in discovery documents
	// NeedsContact makes the upstream unavailable until upstream.contact is an e-mail address:
	// SEC EDGAR refuses requests whose User-Agent does not name a contact.
	NeedsContact bool
}

// Ready reports whether the upstream can be called for a paid product.
func (s Spec) Ready() error {
	if s.NeedsKey && s.Key == "" {
		return fmt.Errorf("%s: %w (set upstream.%s.key)", s.Name, ErrNotConfigured, s.Name)
	}
	return nil
}

const etalab = "Licence Ouverte / Etalab 2.0: reuse allowed, attribution required."

// Specs lists every upstream. The limits sit below the published ones (see
// shared/research/upstreams-*.md) so that one box never gets its home IP blocked.
var Specs = []Spec{
	{Name: "recherche-entreprises", BaseURL: "https://recherche-entreprises.api.gouv.fr", Timeout: 5 * time.Second, RPS: 6, Burst: 6, Retries: 1,
		Terms: "API Recherche d'entreprises (DINUM), " + etalab + " Non-diffusible companies are absent."},
	{Name: "bodacc", BaseURL: "https://bodacc-datadila.opendatasoft.com", Timeout: 6 * time.Second, RPS: 5, Burst: 5, Retries: 1,
		Terms: "BODACC (DILA) open data, " + etalab},
	{Name: "boamp", BaseURL: "https://boamp-datadila.opendatasoft.com", Timeout: 6 * time.Second, RPS: 5, Burst: 5, Retries: 1,
		Terms: "BOAMP (DILA) open data, " + etalab},
	{Name: "data-economie", BaseURL: "https://data.economie.gouv.fr", Timeout: 6 * time.Second, RPS: 5, Burst: 5, Retries: 1,
		Terms: "data.economie.gouv.fr (ratios BCE/INPI, prix des carburants), " + etalab},
	{Name: "data-education", BaseURL: "https://data.education.gouv.fr", Timeout: 6 * time.Second, RPS: 5, Burst: 5, Retries: 1,
		Terms: "data.education.gouv.fr (calendrier scolaire, annuaire de l'éducation), " + etalab},
	{Name: "ademe", BaseURL: "https://data.ademe.fr/data-fair/api/v1", Timeout: 8 * time.Second, RPS: 10, Burst: 10, Retries: 1,
		Terms: "ADEME open data (liste RGE, DPE), " + etalab},
	{Name: "agence-bio", BaseURL: "https://opendata.agencebio.org/api/gouv", Timeout: 8 * time.Second, RPS: 2, Burst: 2, Retries: 1,
		Terms: "Agence Bio, API Professionnels BIO, " + etalab},
	{Name: "vies", BaseURL: "https://ec.europa.eu/taxation_customs/vies/rest-api", Timeout: 8 * time.Second, RPS: 2, Burst: 2, Retries: 1,
		Terms: "European Commission VIES: the answer reflects the member state's database at request time and is not a legal certificate."},
	{Name: "ban", BaseURL: "https://data.geopf.fr/geocodage", Timeout: 4 * time.Second, RPS: 40, Burst: 20, Retries: 1,
		Terms: "Base Adresse Nationale (IGN Géoplateforme), " + etalab},
	{Name: "geo-api", BaseURL: "https://geo.api.gouv.fr", Timeout: 4 * time.Second, RPS: 40, Burst: 20, Retries: 1,
		Terms: "API Découpage administratif (geo.api.gouv.fr), " + etalab},
	{Name: "georisques", BaseURL: "https://georisques.gouv.fr/api/v1", Timeout: 8 * time.Second, RPS: 5, Burst: 5, Retries: 1,
		Terms: "Géorisques (BRGM / ministère de la Transition écologique), " + etalab},
	{Name: "dvf", BaseURL: "https://files.data.gouv.fr/geo-dvf/latest/csv", Timeout: 10 * time.Second, RPS: 5, Burst: 5, Retries: 1,
		Terms: "DVF géolocalisées (DGFiP / Etalab), " + etalab + " The DGFiP's conditions forbid re-identifying the persons behind a sale and indexing by search engines."},
	{Name: "open-meteo", BaseURL: "https://api.open-meteo.com", KeyedBaseURL: "https://customer-api.open-meteo.com", KeyParam: "apikey", NeedsKey: true,
		Timeout: 5 * time.Second, RPS: 8, Burst: 8, Retries: 1,
		Terms: "Open-Meteo, data CC BY 4.0 (attribution required). The keyless tier is non-commercial only, so the weather routes stay unavailable until a subscription key is configured."},
	{Name: "open-meteo-geocoding", BaseURL: "https://geocoding-api.open-meteo.com", KeyedBaseURL: "https://customer-geocoding-api.open-meteo.com", KeyParam: "apikey", NeedsKey: true,
		Timeout: 5 * time.Second, RPS: 8, Burst: 8, Retries: 1,
		Terms: "Open-Meteo geocoding (GeoNames, CC BY 4.0). Non-commercial without a subscription key."},
	{Name: "transport-data-gouv", BaseURL: "https://transport.data.gouv.fr", Timeout: 25 * time.Second, RPS: 1, Burst: 1, Retries: 1,
		Terms: "transport.data.gouv.fr (point d'accès national), " + etalab + " Each dataset keeps its own licence (often ODbL)."},
	{Name: "data-gouv-tabular", BaseURL: "https://tabular-api.data.gouv.fr", Timeout: 8 * time.Second, RPS: 5, Burst: 5, Retries: 1,
		Terms: "data.gouv.fr tabular API (Base nationale des IRVE), " + etalab},
	// 600 requests per rolling 5 minutes per key: a burst of 10 plus 1.9/s stays under it
	// over any 5-minute window (10 + 1.9 × 300 = 580).
	{Name: "companies-house", BaseURL: "https://api.company-information.service.gov.uk", KeyBasic: true, NeedsKey: true,
		Timeout: 8 * time.Second, RPS: 1.9, Burst: 10, Retries: 1,
		Terms: "Companies House Public Data API (Open Government Licence v3.0). Officers' personal details are shown as published by the registrar and may only be used within data protection law."},
	// SEC allows 10 requests per second in all for one user, across its hosts: data.sec.gov
	// takes 8 and www.sec.gov (the ticker file, read once a day) 1, so the sum stays under 10.
	{Name: "sec-edgar", BaseURL: "https://data.sec.gov", NeedsContact: true, Timeout: 10 * time.Second, RPS: 8, Burst: 8, Retries: 1,
		Terms: "SEC EDGAR public data (U.S. government work, not copyrighted). SEC's fair-access policy requires a User-Agent naming a contact and at most 10 requests per second."},
	{Name: "sec-edgar-files", BaseURL: "https://www.sec.gov", NeedsContact: true, Timeout: 20 * time.Second, RPS: 1, Burst: 1, Retries: 1,
		Terms: "SEC EDGAR company ticker file (www.sec.gov/files/company_tickers.json), same fair-access policy."},
	// ESMA publishes no limit; the five register files are downloaded once a day in a row.
	{Name: "esma", BaseURL: "https://www.esma.europa.eu", Timeout: 20 * time.Second, RPS: 1, Burst: 5, Retries: 1,
		Terms: "ESMA interim MiCA register (CSV files, reuse with attribution to ESMA). An interim register compiled from national authorities' notifications: absence from it is not a finding of illegality."},
	// Apify API v2: per-resource limits with 429 (research: upstreams-other.md §17); a token
	// is optional for public actors and raises them.
	{Name: "actor-marketplace", BaseURL: "https://api.apify.com", KeyParam: "token", Timeout: 8 * time.Second, RPS: 5, Burst: 5, Retries: 1,
		Terms: "Apify API v2, public actor records and store statistics (runs of the last 30 days exclude the owner's own runs)."},
	// The marketplace of /v1/<marketplace>: its pages are read by the browser farm, not by an
	// HTTP client; the row holds its host (override base_url for another country's site).
	{Name: "marketplace", BaseURL: "https://www.amazon.com", Timeout: 30 * time.Second, RPS: 1, Burst: 3,
		Terms: "Product data as the marketplace's public pages show it, read in a real browser; captchas and robot checks are reported, never bypassed."},
	{Name: "apicarto", BaseURL: "https://apicarto.ign.fr", Timeout: 8 * time.Second, RPS: 5, Burst: 5, Retries: 1,
		Terms: "IGN API Carto, cadastre PCI Express, " + etalab},
}

// Lookup returns the default spec of name.
func Lookup(name string) (Spec, bool) {
	i := slices.IndexFunc(Specs, func(s Spec) bool { return s.Name == name })
	if i < 0 {
		return Spec{}, false
	}
	return Specs[i], true
}

// TermsOf is the terms note of the named upstream, "" when it has none or is unknown.
func TermsOf(name string) string {
	s, _ := Lookup(name)
	return s.Terms
}
