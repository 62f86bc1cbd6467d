package catalog

import (
	"errors"
	"net/url"
	"regexp"
	"time"
)

// The builder keeps the table to one statement per route. It only fills Entry fields.

func route(family, method, path string, price uint64, summary string, params ...Param) Entry {
	e := Entry{Family: family, Method: method, Path: path, Price: price, Summary: summary, Params: params,
		Kind: Paid, Timeout: 15 * time.Second}
	if price == 0 {
		e.Kind = Free
	}
	return e
}

func (e Entry) up(name string, ttl time.Duration) Entry { e.Upstream, e.CacheTTL = name, ttl; return e }
func (e Entry) timeout(d time.Duration) Entry           { e.Timeout = d; return e }
func (e Entry) partial(path string) Entry               { e.Partial = path; return e }
func (e Entry) trial(path string) Entry                 { e.FreeTrial = path; return e }
func (e Entry) freeFirst() Entry                        { e.FreeFirstCall = true; return e }
func (e Entry) produces(mt string) Entry                { e.Produces = mt; return e }
func (e Entry) status(s string) Entry                   { e.Status = s; return e }
func (e Entry) kind(k Kind) Entry                       { e.Kind = k; return e }
func (e Entry) metered() Entry                          { e.Tier = TierMetered; return e }
func (e Entry) anyMethod() Entry                        { e.AnyMethod = true; return e }
func (e Entry) document() Entry                         { e.Document = true; return e }
func (e Entry) creates() Entry                          { e.Creates = true; return e }
func (e Entry) offline() Entry                          { e.Offline = true; return e }
func (e Entry) describedByGET() Entry                   { e.DescribedByGET = true; return e }
func (e Entry) paysInBody(key string) Entry             { e.PaymentInBody = key; return e }
func (e Entry) exit(country string) Entry               { e.ExitCountry = country; return e }
func (e Entry) exitFrom(param string) Entry             { e.ExitParam = param; return e }

// ex sets the example request from name/value pairs.
func (e Entry) ex(kv ...any) Entry {
	e.Example = map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		e.Example[kv[i].(string)] = kv[i+1]
	}
	return e
}

// Common parameters, declared once.
var (
	pURL    = S("url", "absolute http or https URL of the page").Req().Fmt("url")
	pSIREN  = S("siren", "9-digit SIREN company number").Req().Fmt("siren")
	pINSEE  = S("insee", "5-character INSEE commune code (e.g. 75056, 2A004)").Req().Fmt("insee")
	pCP     = S("cp", "5-digit French postal code").Req().Fmt("cp")
	pLat    = N("lat", "latitude in degrees").Req().Range(-90, 90)
	pLon    = N("lon", "longitude in degrees").Req().Range(-180, 180)
	pQIdent = S("q", "company name, SIREN or SIRET").Group("company").Range(2, 200)
	pSIRENo = S("siren", "9-digit SIREN company number").Group("company").Fmt("siren")
	pUKQ    = S("q", "company name").Group("company").Range(2, 160)
	pUKNum  = S("number", "Companies House number (8 characters)").Group("company").Fmt("uk_company")
	pTicker = S("ticker", "stock ticker (e.g. AAPL, BRK-B)").Group("company").Fmt("ticker")
	pCIK    = S("cik", "SEC central index key (up to 10 digits)").Group("company").Fmt("cik")
	pAddr   = S("address", "0x EVM address").Req().Fmt("evm_address")
	// A proxy package's exit: a fleet sells it on a box exiting there; one box only when its
	// own exit is there.
	pExitCountry = S("country", "exit country, ISO 3166-1 alpha-2 (e.g. FR); default any").Fmt("country")
	pExitASN     = I("asn", "exit autonomous system number (e.g. 3215); default any").Range(1, 4294967295)
	pLimit       = func(def, max float64) Param { return I("limit", "how many results").Range(1, max).Def(int64(def)) }
)

// coingeckoVS are the quote currencies CoinGecko answers in: its GET /simple/supported_vs_currencies
// as published in coingecko/coingecko-api-oas (demo-api.json, commit 83d7556f, 2026-06-22;
// api/upstream/coingecko/testdata/supported_vs_currencies.json), so an unknown one is a 400
// before any 402 rather than a silently empty answer.
var coingeckoVS = []string{"btc", "eth", "ltc", "bch", "bnb", "eos", "xrp", "xlm", "link", "dot", "yfi", "sol", "usd",
	"aed", "ars", "aud", "bdt", "bhd", "bmd", "brl", "cad", "chf", "clp", "cny", "czk", "dkk", "eur", "gbp", "gel", "hkd",
	"huf", "idr", "ils", "inr", "jpy", "krw", "kwd", "lkr", "mmk", "mxn", "myr", "ngn", "nok", "nzd", "php", "pkr", "pln",
	"rub", "sar", "sek", "sgd", "thb", "try", "twd", "uah", "vef", "vnd", "zar", "xdr", "xag", "xau", "bits", "sats"}

func init() {
	// Companies House numbers: 8 digits, or a 2-letter register prefix (SC, NI, OC, FC, ...)
	// and 6 digits, or R0 and 6 digits (old Northern Ireland companies).
	register("uk_company", `^([0-9]{8}|[A-Za-z]{2}[0-9]{6}|[Rr]0[0-9]{6})$`, re(`^([0-9]{8}|[A-Za-z]{2}[0-9]{6}|[Rr]0[0-9]{6})$`, "must be an 8-character Companies House number: 8 digits, or 2 letters and 6 digits (e.g. 00445790 or SC123456)"))
	// SEC tickers: a letter, then letters, digits, "." or "-" (BRK-B), 10 characters at most.
	register("ticker", `^[A-Za-z][A-Za-z0-9.-]{0,9}$`, re(`^[A-Za-z][A-Za-z0-9.-]{0,9}$`, "must be a stock ticker: a letter, then up to 9 letters, digits, '.' or '-' (e.g. AAPL, BRK-B)"))
	register("cik", `^[0-9]{1,10}$`, re(`^[0-9]{1,10}$`, "must be 1 to 10 digits"))
	// Community ids: reddit:<base36 id> (t3_ prefix allowed) or hn:<item number>, as
	// /v1/social/search returns them; any other source or shape is a 400 before any 402.
	register("social_id", `^(reddit:(t3_)?[a-z0-9]{1,12}|hn:[0-9]{1,12})$`, re(`^(reddit:(t3_)?[a-z0-9]{1,12}|hn:[0-9]{1,12})$`, "must be reddit:<id> or hn:<id> as returned by /v1/social/search"))
	register("actor", `^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`, re(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`, "must be owner/name"))
	register("asin", `^[A-Z0-9]{10}$`, re(`^[A-Z0-9]{10}$`, "must be a 10-character ASIN"))
	register("lei", `^[A-Z0-9]{18}[0-9]{2}$`, checkLEI)
	// Wikipedia language subdomains (en, fr, simple, be-tarask, zh-min-nan): the shape here; the
	// wiki family refines it with the list of open Wikipedias.
	register("wiki_lang", `^[a-z]{2,12}(-[a-z]{2,12})*$`, re(`^[a-z]{2,12}(-[a-z]{2,12})*$`, "must be a Wikipedia language code such as en, fr, simple or zh-min-nan"))
	formats["product_url"] = format{check: checkProductURL, jsonFormat: "uri"}
	// A video page: any http(s) URL here; the transcribe family refines it to the platforms
	// whose audio it can fetch, so another platform is a 400 before any 402.
	formats["video_url"] = format{check: checkURL, jsonFormat: "uri"}
	register("stops", `^-?[0-9.]+,-?[0-9.]+(\|-?[0-9.]+,-?[0-9.]+){1,9}$`, checkStops)
	// CoinGecko coin ids are lowercase words joined by "-" (bitcoin, usd-coin, matic-network).
	register("coin_id", `^[a-z0-9][a-z0-9.-]{0,79}$`, re(`^[a-z0-9][a-z0-9.-]{0,79}$`, "must be a CoinGecko coin id in lowercase (e.g. bitcoin, usd-coin)"))
	// A coin id, or <chain>:<token contract> on one of the EVM chains the history route maps.
	register("coin_ref", `^([a-z0-9][a-z0-9.-]{0,79}|(base|ethereum|arbitrum|optimism|polygon|bsc|avalanche):0x[0-9a-fA-F]{40})$`,
		re(`^([a-z0-9][a-z0-9.-]{0,79}|(base|ethereum|arbitrum|optimism|polygon|bsc|avalanche):0x[0-9a-fA-F]{40})$`,
			"must be a CoinGecko coin id (e.g. bitcoin) or chain:0xaddress with chain one of base, ethereum, arbitrum, optimism, polygon, bsc, avalanche"))
	register("past_year_date", `^[0-9]{4}-[0-9]{2}-[0-9]{2}$`, checkPastYearDate)
	register("perp_symbol", `^[A-Za-z0-9]{1,15}$`, re(`^[A-Za-z0-9]{1,15}$`, "must be a perpetual's coin symbol, letters and digits (e.g. BTC, kPEPE)"))
}

// checkPastYearDate accepts a YYYY-MM-DD date from 365 days ago to today (UTC): the span of
// CoinGecko's public price history.
func checkPastYearDate(s string) error {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return errors.New("must be a date YYYY-MM-DD")
	}
	today := time.Now().UTC().Truncate(24 * time.Hour)
	if d.After(today) {
		return errors.New("is in the future")
	}
	if d.Before(today.AddDate(0, 0, -365)) {
		return errors.New("must be within the last 365 days")
	}
	return nil
}

// productPath is where a marketplace product URL names its ASIN: /dp/ASIN, /gp/product/ASIN,
// /gp/aw/d/ASIN.
var productPath = regexp.MustCompile(`/(dp|gp/product|gp/aw/d)/[A-Z0-9]{10}([/?]|$)`)

// checkProductURL checks an absolute http(s) URL of a marketplace product page.
func checkProductURL(s string) error {
	if err := checkURL(s); err != nil {
		return err
	}
	u, _ := url.Parse(s)
	if !productPath.MatchString(u.EscapedPath()) {
		return errors.New("must be a product page of the marketplace, with /dp/<ASIN> in its path")
	}
	return nil
}

var leiShape = re(`^[A-Z0-9]{18}[0-9]{2}$`, "must be a 20-character LEI: 18 capital letters or digits and 2 check digits")

// checkLEI checks an ISO 17442 legal entity identifier: 18 letters or digits and 2 check
// digits, valid when the letters read as numbers (A=10 ... Z=35) give a value that is 1
// modulo 97 (ISO 7064 MOD 97-10).
func checkLEI(s string) error {
	if err := leiShape(s); err != nil {
		return err
	}
	rem := 0
	for _, c := range s {
		v := int(c - '0')
		if c >= 'A' {
			v = int(c-'A') + 10
			rem = (rem*100 + v) % 97
			continue
		}
		rem = (rem*10 + v) % 97
	}
	if rem != 1 {
		return errors.New("check digits do not match: not a valid LEI (ISO 17442)")
	}
	return nil
}
