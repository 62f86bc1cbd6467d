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
	// KeyBearer sends the key as "Authorization: Bearer <key>" (OpenAI-compatible servers).
	KeyBearer bool
	NeedsKey  bool
	Key       string
	// KeyedBaseURL replaces BaseURL once a key is configured (paid hosts of freemium APIs).
	KeyedBaseURL string
	Terms        string // licence and use conditions, surfaced in discovery documents
	// NeedsContact makes the upstream unavailable until upstream.contact is an e-mail address:
	// SEC EDGAR refuses requests whose User-Agent does not name a contact.
	NeedsContact bool
	// NeedsBaseURL marks an upstream the operator runs (a SearXNG instance): BaseURL is a
	// placeholder and the upstream is unavailable until upstream.override.<name>.base_url is set.
	NeedsBaseURL bool
}

// Ready reports whether the upstream can be called for a paid product.
func (s Spec) Ready() error {
	if s.NeedsKey && s.Key == "" {
		return fmt.Errorf("%s: %w (set upstream.override.%s.key or key_file)", s.Name, ErrNotConfigured, s.Name)
	}
	if s.NeedsBaseURL {
		return fmt.Errorf("%s: %w (set upstream.override.%s.base_url to your instance)", s.Name, ErrNotConfigured, s.Name)
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
	{Name: "carte-loyers", BaseURL: "https://static.data.gouv.fr/resources/carte-des-loyers-indicateurs-de-loyers-dannonce-par-commune-en-2025",
		Timeout: 30 * time.Second, RPS: 1, Burst: 2, Retries: 1,
		Terms: "Carte des loyers (ministère chargé du Logement, ANIL; asking rents of leboncoin and SeLoger listings), published on data.gouv.fr."},
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
	// Both public OSRM servers (router.project-osrm.org, car only; FOSSGIS's
	// routing.openstreetmap.de, one server per profile) ask for at most 1 request per second,
	// a User-Agent naming the application, no heavy use and OSM attribution. A base_url without
	// "{profile}" is one server for every mode: it must honour the profile in the path.
	{Name: "osrm", BaseURL: "https://routing.openstreetmap.de/routed-{profile}", Timeout: 10 * time.Second, RPS: 1, Burst: 1, Retries: 0,
		Terms: "Routes computed by OSRM on OpenStreetMap data (© OpenStreetMap contributors, ODbL). The public FOSSGIS and OSRM demo servers allow at most one request per second, no heavy or bulk use, and may withdraw access: a production box should set upstream.override.osrm.base_url to its own OSRM."},
	// vPIC publishes no rate; its traffic control blocks bursts, so a few calls a second.
	{Name: "vpic", BaseURL: "https://vpic.nhtsa.dot.gov/api", Timeout: 10 * time.Second, RPS: 2, Burst: 4, Retries: 1,
		Terms: "NHTSA vPIC (U.S. Department of Transportation), public domain. Missing values mean NHTSA has no data on the variable, not that the feature is absent."},
	// Wikimedia's REST API allows about 200 requests per second per client; 10 is polite. The
	// User-Agent names the appliance and upstream.contact, as Wikimedia's policy asks.
	{Name: "wikipedia", BaseURL: "https://{lang}.wikipedia.org", Timeout: 6 * time.Second, RPS: 10, Burst: 10, Retries: 1,
		Terms: "Wikipedia text is CC BY-SA 4.0: reuse requires attribution (the article URL) and share-alike."},
	// ESMA publishes no limit; the five register files are downloaded once a day in a row.
	{Name: "esma", BaseURL: "https://www.esma.europa.eu", Timeout: 20 * time.Second, RPS: 1, Burst: 5, Retries: 1,
		Terms: "ESMA interim MiCA register (CSV files, reuse with attribution to ESMA). An interim register compiled from national authorities' notifications: absence from it is not a finding of illegality."},
	// Apify API v2: per-resource limits with 429 (research: upstreams-other.md §17); a token
	// is optional for public actors and raises them.
	{Name: "actor-marketplace", BaseURL: "https://api.apify.com", KeyParam: "token", Timeout: 8 * time.Second, RPS: 5, Burst: 5, Retries: 1,
		Terms: "Apify API v2, public actor records and store statistics (runs of the last 30 days exclude the owner's own runs)."},
	// Sourcify publishes no figure for its public server; a few calls a second is polite and
	// the abi route caches answers a day.
	{Name: "sourcify", BaseURL: "https://sourcify.dev/server", Timeout: 8 * time.Second, RPS: 4, Burst: 4, Retries: 1,
		Terms: "Sourcify (sourcify.dev) verified contract data; each contract's source keeps the licence its authors gave it."},
	// Blockscout's public Base instance publishes no keyless figure; a key (apikey) raises it.
	{Name: "blockscout", BaseURL: "https://base.blockscout.com/api", KeyParam: "apikey", Timeout: 10 * time.Second, RPS: 3, Burst: 3, Retries: 1,
		Terms: "Blockscout (base.blockscout.com) indexed chain data, Etherscan-compatible API; the chain itself is public."},
	// The language model: any OpenAI-compatible chat-completions server (a hosted provider, or
	// a local llama.cpp/Ollama/vLLM server: its base_url, and any key it accepts). Calls are
	// POSTs, never retried; the rate stays well under hosted providers' lowest tiers.
	{Name: "llm", BaseURL: "https://api.openai.com/v1", KeyBearer: true, NeedsKey: true, Timeout: 85 * time.Second, RPS: 5, Burst: 10,
		Terms: "Language-model output is produced by the configured model provider under its terms; the appliance checks labels, schemas and quotes before answering."},
	// The marketplace of /v1/<marketplace>: its pages are read by the browser farm, not by an
	// HTTP client; the row holds its host (override base_url for another country's site).
	{Name: "marketplace", BaseURL: "https://www.amazon.com", Timeout: 30 * time.Second, RPS: 1, Burst: 3,
		Terms: "Product data as the marketplace's public pages show it, read in a real browser; captchas and robot checks are reported, never bypassed."},
	// The classifieds site of /v1/fr/<classifieds_a>, /v1/fr/immo and biens-sous-cotes: read by
	// the browser farm; the row holds its host.
	{Name: "classifieds", BaseURL: "https://www.leboncoin.fr", Timeout: 30 * time.Second, RPS: 1, Burst: 3,
		Terms: "Classified ads as the site's public search pages show them, read in a real browser; captchas and block pages are reported, never bypassed."},
	// The property-listings site of /v1/fr/<listings_b> and /v1/fr/immo: its search service
	// (www) and place service (res), read by the browser farm.
	{Name: "listings", BaseURL: "https://www.bienici.com", Timeout: 30 * time.Second, RPS: 1, Burst: 3,
		Terms: "Property listings as the site's public JSON API gives them to its own pages, read in a real browser; block pages are reported, never bypassed."},
	{Name: "listings-places", BaseURL: "https://res.bienici.com", Timeout: 30 * time.Second, RPS: 1, Burst: 3,
		Terms: "The listings site's place lookup (postal code or city to its zone ids), read in a real browser."},
	// The maps of /v1/maps: read by the browser farm like the marketplace; the row holds its
	// host (override base_url to read another).
	{Name: "maps", BaseURL: "https://www.google.com", Timeout: 45 * time.Second, RPS: 1, Burst: 3,
		Terms: "Business listings as Google Maps' public pages show them, read in a real browser; its consent and unusual-traffic pages are reported, never bypassed."},
	{Name: "apicarto", BaseURL: "https://apicarto.ign.fr", Timeout: 8 * time.Second, RPS: 5, Burst: 5, Retries: 1,
		Terms: "IGN API Carto, cadastre PCI Express, " + etalab},
	// Keyless CoinGecko shares an unpublished per-IP limit (the Demo plan publishes 30 calls a
	// minute): 0.4/s stays under it; the market overview is refreshed at most every 5 minutes.
	{Name: "coingecko", BaseURL: "https://api.coingecko.com/api/v3", KeyHeader: "x-cg-demo-api-key",
		Timeout: 6 * time.Second, RPS: 0.4, Burst: 5, Retries: 1,
		Terms: "Data provided by CoinGecko (attribution required). Prices are indicative market data, not an offer."},
	// metaAndAssetCtxs weighs 20 of 1,200 per minute and IP: at most 60 a minute, so 0.8/s.
	{Name: "hyperliquid", BaseURL: "https://api.hyperliquid.xyz", Timeout: 5 * time.Second, RPS: 0.8, Burst: 4,
		Terms: "Hyperliquid public info API. Funding and prices are the venue's own figures."},
	// Funding venues of /v1/crypto/funding-rate: Binance USDⓈ-M allows 2,400 weight a minute
	// per IP (premiumIndex 1 with a symbol) and 500 fundingInfo calls per 5 minutes; Bybit about
	// 600 requests per 5 s per IP. A question asks at most 10 symbols (plus fundingInfo).
	{Name: "binance-futures", BaseURL: "https://fapi.binance.com", Timeout: 5 * time.Second, RPS: 2, Burst: 11, Retries: 1,
		Terms: "Binance USDⓈ-M futures public market data. Funding and prices are the venue's own figures."},
	{Name: "bybit", BaseURL: "https://api.bybit.com", Timeout: 5 * time.Second, RPS: 5, Burst: 10, Retries: 1,
		Terms: "Bybit v5 public market data. Funding and prices are the venue's own figures."},
	// Prediction markets: Gamma allows 300 /markets requests per 10 s, Kalshi's keyless reads
	// are per IP (kept well under 10/s), Manifold 500 requests a minute per IP.
	{Name: "polymarket", BaseURL: "https://gamma-api.polymarket.com", Timeout: 6 * time.Second, RPS: 2, Burst: 4, Retries: 1,
		Terms: "Polymarket Gamma market data. Prices are the market's, not a forecast of ours."},
	{Name: "kalshi", BaseURL: "https://api.elections.kalshi.com/trade-api/v2", Timeout: 6 * time.Second, RPS: 2, Burst: 4, Retries: 1,
		Terms: "Kalshi public market data (Trade API v2)."},
	{Name: "manifold", BaseURL: "https://api.manifold.markets/v0", Timeout: 6 * time.Second, RPS: 2, Burst: 4, Retries: 1,
		Terms: "Manifold Markets public API; play-money (mana) markets."},
	// Newsroom feeds publish no limit; the news route is cached 5 minutes, so each feed is read
	// at most a few times in that window.
	{Name: "coindesk-rss", BaseURL: "https://www.coindesk.com", Timeout: 6 * time.Second, RPS: 0.5, Burst: 2, Retries: 1,
		Terms: "CoinDesk RSS feed: headlines, links and summaries; articles belong to CoinDesk."},
	{Name: "cointelegraph-rss", BaseURL: "https://cointelegraph.com", Timeout: 6 * time.Second, RPS: 0.5, Burst: 2, Retries: 1,
		Terms: "Cointelegraph RSS feed: headlines, links and summaries; articles belong to Cointelegraph."},
	{Name: "decrypt-rss", BaseURL: "https://decrypt.co", Timeout: 6 * time.Second, RPS: 0.5, Burst: 2, Retries: 1,
		Terms: "Decrypt RSS feed: headlines, links and summaries; articles belong to Decrypt."},
	{Name: "theblock-rss", BaseURL: "https://www.theblock.co", Timeout: 6 * time.Second, RPS: 0.5, Burst: 2, Retries: 1,
		Terms: "The Block RSS feed: headlines, links and summaries; articles belong to The Block."},
	// Token risk sources: GoPlus publishes no keyless limit (about 30 a minute is safe);
	// honeypot.is none either.
	{Name: "goplus", BaseURL: "https://api.gopluslabs.io", Timeout: 8 * time.Second, RPS: 0.5, Burst: 3, Retries: 1,
		Terms: "GoPlus Security token data; a missing flag means unknown, not safe."},
	{Name: "honeypot-is", BaseURL: "https://api.honeypot.is", Timeout: 10 * time.Second, RPS: 0.5, Burst: 3, Retries: 1,
		Terms: "honeypot.is buy/sell simulation; a simulation is evidence, not a guarantee."},
	// Stock perps: Jupiter's keyless host allows about 60 requests a minute; Yahoo's chart
	// endpoint is unofficial and throttles bursts, one request per stock.
	{Name: "jupiter", BaseURL: "https://lite-api.jup.ag", KeyedBaseURL: "https://api.jup.ag", KeyHeader: "x-api-key",
		Timeout: 5 * time.Second, RPS: 0.8, Burst: 3, Retries: 1,
		Terms: "Jupiter Price API: aggregated Solana DEX prices."},
	{Name: "yahoo-finance", BaseURL: "https://query1.finance.yahoo.com", Timeout: 5 * time.Second, RPS: 3, Burst: 10, Retries: 1,
		Terms: "Yahoo Finance chart data (unofficial endpoint), for reference only; quotes may be delayed."},
	{Name: "defillama-stablecoins", BaseURL: "https://stablecoins.llama.fi", Timeout: 8 * time.Second, RPS: 1, Burst: 2, Retries: 1,
		Terms: "DefiLlama stablecoin data, free and open; attribution to DefiLlama appreciated."},
	// Web search: Serper (Google results, keyed) first, a self-hosted SearXNG instance (no
	// default address: it is the operator's own) alone or as the fallback.
	{Name: "serper", BaseURL: "https://google.serper.dev", KeyHeader: "X-API-KEY", NeedsKey: true, Timeout: 8 * time.Second, RPS: 5, Burst: 5,
		Terms: "Serper.dev Google Search API: results are Google's, for the caller's own use."},
	{Name: "searxng", BaseURL: "https://searxng.invalid", NeedsBaseURL: true, Timeout: 10 * time.Second, RPS: 2, Burst: 4, Retries: 1,
		Terms: "A self-hosted SearXNG meta-search instance; each engine it queries keeps its own terms."},
	// Reddit's keyless JSON allows about 10 requests a minute per IP; OAuth (key
	// "client_id:client_secret") 100 a minute per client id. The bucket is set for the keyless
	// rate; the OAuth rate is applied when the key is configured (api/upstream/reddit).
	{Name: "reddit", BaseURL: "https://www.reddit.com", KeyedBaseURL: "https://oauth.reddit.com", Timeout: 8 * time.Second, RPS: 10.0 / 60, Burst: 3,
		Terms: "Reddit Data API terms: content belongs to its authors; no commercial redistribution beyond the answer, no model training."},
	{Name: "reddit-auth", BaseURL: "https://www.reddit.com", Timeout: 8 * time.Second, RPS: 0.1, Burst: 2,
		Terms: "Reddit OAuth token endpoint (application-only grant)."},
	// 10,000 requests per hour per IP.
	{Name: "hn-algolia", BaseURL: "https://hn.algolia.com/api/v1", Timeout: 6 * time.Second, RPS: 2.5, Burst: 5, Retries: 1,
		Terms: "Hacker News Search by Algolia; content belongs to its authors (Y Combinator's HN API terms)."},
	{Name: "youtube", BaseURL: "https://www.youtube.com", Timeout: 10 * time.Second, RPS: 1, Burst: 3, Retries: 1,
		Terms: "YouTube captions as published by the uploader or generated by YouTube; the transcript is for the caller's own use."},
	// An OpenAI-compatible transcription endpoint (POST /v1/audio/transcriptions): OpenAI, a
	// hosted provider, or a self-hosted whisper server (base_url; key optional there).
	{Name: "speech", BaseURL: "https://api.openai.com", Timeout: 120 * time.Second, RPS: 1, Burst: 2,
		Terms: "Speech recognition by the configured OpenAI-compatible transcription endpoint."},
	// Twilio: key "AccountSid:AuthToken" (or "ApiKeySid:Secret@AccountSid").
	{Name: "twilio", BaseURL: "https://api.twilio.com/2010-04-01", NeedsKey: true, Timeout: 10 * time.Second, RPS: 5, Burst: 5, Retries: 1,
		Terms: "Twilio phone numbers: rented numbers are VoIP-typed and some services refuse them for verification."},
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
