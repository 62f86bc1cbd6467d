package llm

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/peage/appliance/api/catalog"
)

// Plan is the router's choice for a task: one catalog capability and its input, validated
// by the capability's own parameter checks (Entry.Decode), so the input is what the direct
// route would have received.
type Plan struct {
	Capability string       `json:"capability"` // catalog id, e.g. fr.iban
	Route      string       `json:"route"`      // e.g. GET /v1/fr/iban
	Input      catalog.Args `json:"input"`      // normalised by the capability's own decoder
	Recogniser string       `json:"recogniser"` // which recogniser matched, or "model"
	Provider   string       `json:"provider"`   // deterministic or model
}

// recogniser finds one kind of identifier or request in a task and proposes a capability.
type recogniser struct {
	name    string
	example string
	routes  []string // every capability it can propose, for /v1/capabilities
	match   func(t task) (string, map[string]any, bool)
}

// task is a task in the forms the recognisers read.
type task struct {
	raw   string
	lower string
	rest  string // lower-case, with URLs removed
}

func newTask(s string) task {
	l := strings.ToLower(s)
	return task{raw: s, lower: l, rest: urlRe.ReplaceAllString(l, " ")}
}

func (t task) has(words ...string) bool {
	for _, w := range words {
		if wordRe(w).MatchString(t.rest) {
			return true
		}
	}
	return false
}

// wordCache holds the compiled whole-word matcher of each keyword the recognisers use.
var wordCache sync.Map

// wordRe matches w as whole words.
func wordRe(w string) *regexp.Regexp {
	if re, ok := wordCache.Load(w); ok {
		return re.(*regexp.Regexp)
	}
	re := regexp.MustCompile(`(^|[^\pL\pN])` + regexp.QuoteMeta(w) + `($|[^\pL\pN])`)
	wordCache.Store(w, re)
	return re
}

var (
	urlRe     = regexp.MustCompile(`https?://[^\s<>"'\])]+`)
	txRe      = regexp.MustCompile(`\b0x[0-9a-fA-F]{64}\b`)
	addrRe    = regexp.MustCompile(`\b0x[0-9a-fA-F]{40}\b`)
	ensRe     = regexp.MustCompile(`\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.eth\b`)
	ibanRe    = regexp.MustCompile(`\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b`)
	vatRe     = regexp.MustCompile(`\b(?:AT|BE|BG|CY|CZ|DE|DK|EE|EL|ES|FI|FR|HR|HU|IE|IT|LT|LU|LV|MT|NL|PL|PT|RO|SE|SI|SK|XI)[0-9A-Z]{8,12}\b`)
	vinRe     = regexp.MustCompile(`\b[A-HJ-NPR-Z0-9]{17}\b`)
	siretRe   = regexp.MustCompile(`\b\d{3} ?\d{3} ?\d{3} ?\d{5}\b`)
	sirenRe   = regexp.MustCompile(`\b\d{3} ?\d{3} ?\d{3}\b`)
	emailRe   = regexp.MustCompile(`\b[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,24}\b`)
	domainRe  = regexp.MustCompile(`\b(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,24}\b`)
	cashTagRe = regexp.MustCompile(`\$([A-Z]{1,5}(?:[.-][A-Z])?)\b`)
	capsRe    = regexp.MustCompile(`\b[A-Z]{1,5}(?:[.-][A-Z])?\b`)
	ukNumRe   = regexp.MustCompile(`\b(?:SC|NI|OC|SO|NC)?\d{6,8}\b`)
	cpRe      = regexp.MustCompile(`\b(?:0[1-9]|[1-8]\d|9[0-8])\d{3}\b`)
	yearRe    = regexp.MustCompile(`\b(19\d\d|2[01]\d\d)\b`)
	streetRe  = regexp.MustCompile(`(?i)\b\d{1,4}(?: ?(?:bis|ter))?,? (?:rue|avenue|av\.?|boulevard|bd|place|chemin|allée|allee|impasse|quai|route|cours|square)\b[^?!;\n]*`)
	placeRe   = regexp.MustCompile(`(?:\b(?:in|at|for|à|a|pour|de|en)\s+)([A-Z\p{Lu}][\p{L}'-]+(?:[ -][A-Z\p{Lu}][\p{L}'-]+){0,3})`)
)

// notTickers are capitalised words a task uses that are not tickers.
var notTickers = map[string]bool{"A": true, "I": true, "SEC": true, "US": true, "USA": true, "CEO": true, "CFO": true, "EPS": true,
	"OK": true, "AI": true, "API": true, "K": true, "Q": true, "FY": true, "ETF": true, "NYSE": true, "IPO": true, "UK": true, "EU": true}

var cryptoIDs = map[string]string{"bitcoin": "bitcoin", "btc": "bitcoin", "ethereum": "ethereum", "eth": "ethereum", "ether": "ethereum",
	"solana": "solana", "sol": "solana", "usdc": "usd-coin", "tether": "tether", "usdt": "tether", "dogecoin": "dogecoin", "doge": "dogecoin"}

func args(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// recognisers run in order; the first that yields a valid input wins. URL tasks come first
// (a URL holds domains and numbers), then the identifiers, most specific first.
var recognisers = []recogniser{
	{name: "url", example: "https://example.com/pricing what does the pro plan cost?",
		routes: []string{"understand", "extract", "screenshot", "pdf", "links", "meta", "web.tables", "web.contacts", "web.prices", "web.headings", "url.unwrap", "x402.inspect", "site.agent-readiness", "guard"},
		match: func(t task) (string, map[string]any, bool) {
			u := urlRe.FindString(t.raw)
			if u == "" {
				return "", nil, false
			}
			u = strings.TrimRight(u, ".,;:!?")
			switch {
			case t.has("screenshot", "capture d'écran", "capture"):
				return "screenshot", args("url", u), true
			case t.has("pdf"):
				return "pdf", args("url", u), true
			case t.has("x402", "402", "payment challenge"):
				return "x402.inspect", args("url", u), true
			case t.has("agent-readiness", "agent readiness", "agent-ready"):
				return "site.agent-readiness", args("url", u), true
			case t.has("prompt injection", "injection"):
				return "guard", args("url", u), true
			case t.has("unwrap", "redirects", "redirect", "short link", "redirection"):
				return "url.unwrap", args("url", u), true
			case t.has("links", "liens"):
				return "links", args("url", u), true
			case t.has("tables", "table", "tableau", "tableaux"):
				return "web.tables", args("url", u), true
			case t.has("contacts", "contact", "phone", "téléphone", "emails"):
				return "web.contacts", args("url", u), true
			case t.has("headings", "outline", "titres"):
				return "web.headings", args("url", u), true
			case t.has("meta", "metadata", "open graph", "og tags"):
				return "meta", args("url", u), true
			case t.has("markdown", "extract", "extraire", "main content", "contenu"):
				return "extract", args("url", u), true
			}
			q := strings.TrimSpace(urlRe.ReplaceAllString(t.raw, " "))
			if len(strings.Fields(q)) >= 2 || strings.Contains(q, "?") {
				return "understand", args("source", u, "objective", q), true
			}
			return "extract", args("url", u), true
		}},
	{name: "evm_tx_hash", example: "status of tx 0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060",
		routes: []string{"chain.tx"},
		match: func(t task) (string, map[string]any, bool) {
			h := txRe.FindString(t.raw)
			return "chain.tx", args("hash", h), h != ""
		}},
	{name: "evm_address", example: "USDC balance of 0x4200000000000000000000000000000000000006",
		routes: []string{"chain.balance", "chain.abi", "chain.token", "chain.address", "chain.ens"},
		match: func(t task) (string, map[string]any, bool) {
			a := addrRe.FindString(t.raw)
			switch {
			case a == "":
				return "", nil, false
			case t.has("abi", "interface", "proxy", "contract", "verified"):
				return "chain.abi", args("address", a), true
			case t.has("ens", "name", "reverse"):
				return "chain.ens", args("address", a), true
			case t.has("payments", "history", "transfers", "received", "x402"):
				return "chain.address", args("address", a), true
			case t.has("token", "decimals", "supply", "erc-20", "erc20", "symbol") && !t.has("balance", "balances", "holds"):
				return "chain.token", args("address", a), true
			}
			return "chain.balance", args("address", a), true
		}},
	{name: "ens_name", example: "address of vitalik.eth", routes: []string{"chain.ens"},
		match: func(t task) (string, map[string]any, bool) {
			n := ensRe.FindString(t.rest)
			return "chain.ens", args("name", n), n != ""
		}},
	{name: "iban", example: "is FR14 2004 1010 0505 0001 3M02 606 a valid IBAN?", routes: []string{"fr.iban"},
		match: func(t task) (string, map[string]any, bool) {
			i := ibanRe.FindString(strings.ToUpper(t.raw))
			return "fr.iban", args("iban", strings.ReplaceAll(i, " ", "")), i != "" && ibanValid(i)
		}},
	{name: "eu_vat", example: "check VAT number FR40303265045", routes: []string{"fr.vat-eu"},
		match: func(t task) (string, map[string]any, bool) {
			v := vatRe.FindString(strings.ToUpper(t.raw))
			return "fr.vat-eu", args("vat", v), v != "" && strings.ContainsAny(v[2:], "0123456789")
		}},
	{name: "vin", example: "decode VIN 1HGCM82633A004352", routes: []string{"vin.decode"},
		match: func(t task) (string, map[string]any, bool) {
			for _, v := range vinRe.FindAllString(strings.ToUpper(t.raw), -1) {
				if strings.ContainsAny(v, "0123456789") && strings.IndexFunc(v, func(r rune) bool { return r >= 'A' && r <= 'Z' }) >= 0 {
					return "vin.decode", args("vin", v), true
				}
			}
			return "", nil, false
		}},
	{name: "siret", example: "company with SIRET 542 065 479 00017", routes: []string{"fr.entreprise"},
		match: func(t task) (string, map[string]any, bool) {
			s := strings.ReplaceAll(siretRe.FindString(t.rest), " ", "")
			return "fr.entreprise", args("q", s), s != "" && luhn(s)
		}},
	{name: "siren", example: "is SIREN 542065479 in insolvency?",
		routes: []string{"fr.entreprise", "fr.tva", "fr.kyb", "fr.score-entreprise", "fr.bodacc", "fr.procedures-collectives", "fr.bilans", "fr.etablissements"},
		match: func(t task) (string, map[string]any, bool) {
			s := strings.ReplaceAll(sirenRe.FindString(t.rest), " ", "")
			if s == "" || !luhn(s) {
				return "", nil, false
			}
			switch {
			case t.has("tva", "vat"):
				return "fr.tva", args("siren", s), true
			case t.has("kyb", "know your business", "compliance"):
				return "fr.kyb", args("siren", s), true
			case t.has("score", "risk", "risque"):
				return "fr.score-entreprise", args("siren", s), true
			case t.has("insolvency", "procédure", "procédures", "procedures", "redressement", "liquidation", "faillite"):
				return "fr.procedures-collectives", args("siren", s), true
			case t.has("bodacc", "annonces", "announcements"):
				return "fr.bodacc", args("siren", s), true
			case t.has("bilan", "bilans", "accounts", "revenue", "chiffre d'affaires", "comptes"):
				return "fr.bilans", args("siren", s), true
			case t.has("établissements", "etablissements", "establishments", "sites"):
				return "fr.etablissements", args("siren", s), true
			}
			return "fr.entreprise", args("q", s), true
		}},
	{name: "email", example: "is contact@example.com deliverable?", routes: []string{"email.verify", "email.validate"},
		match: func(t task) (string, map[string]any, bool) {
			e := emailRe.FindString(t.rest)
			if e == "" {
				return "", nil, false
			}
			if t.has("deliverable", "deliverability", "verify", "vérifier", "disposable", "spf", "dmarc") {
				return "email.verify", args("email", e), true
			}
			return "email.validate", args("email", e), true
		}},
	{name: "us_ticker", example: "latest 10-K filings of $AAPL", routes: []string{"us.company", "us.filings", "us.financials", "us.snapshot"},
		match: func(t task) (string, map[string]any, bool) {
			var tk string
			if m := cashTagRe.FindStringSubmatch(t.raw); m != nil {
				tk = m[1]
			} else if t.has("ticker", "stock", "shares", "10-k", "10-q", "8-k", "sec", "filings", "nasdaq", "nyse") {
				for _, c := range capsRe.FindAllString(urlRe.ReplaceAllString(t.raw, " "), -1) {
					if !notTickers[c] && len(c) >= 2 {
						tk = c
						break
					}
				}
			}
			if tk == "" {
				return "", nil, false
			}
			switch {
			case t.has("filings", "filing", "10-k", "10-q", "8-k"):
				return "us.filings", args("ticker", tk), true
			case t.has("financials", "revenue", "income", "earnings", "balance sheet"):
				return "us.financials", args("ticker", tk), true
			case t.has("snapshot", "margin", "growth", "roe"):
				return "us.snapshot", args("ticker", tk), true
			}
			return "us.company", args("ticker", tk), true
		}},
	{name: "uk_company_number", example: "UK company 00445790 officers", routes: []string{"uk.company", "uk.officers", "uk.psc", "uk.company-check"},
		match: func(t task) (string, map[string]any, bool) {
			if !t.has("uk", "companies house", "ltd", "limited", "plc", "england", "british") {
				return "", nil, false
			}
			n := ukNumRe.FindString(strings.ToUpper(t.rest))
			if n == "" {
				return "", nil, false
			}
			switch {
			case t.has("officers", "directors"):
				return "uk.officers", args("number", n), true
			case t.has("psc", "significant control", "owners", "ownership"):
				return "uk.psc", args("number", n), true
			case t.has("check", "verdict", "due diligence"):
				return "uk.company-check", args("number", n), true
			}
			return "uk.company", args("number", n), true
		}},
	{name: "domain", example: "DNS records of example.org", routes: []string{"dns", "domain.health"},
		match: func(t task) (string, map[string]any, bool) {
			d := domainRe.FindString(emailRe.ReplaceAllString(t.rest, " "))
			if d == "" || strings.HasSuffix(d, ".eth") {
				return "", nil, false
			}
			if t.has("health", "tls", "ssl", "certificate", "certificat", "https", "headers") {
				return "domain.health", args("domain", d), true
			}
			return "dns", args("domain", d), true
		}},
	{name: "crypto_price", example: "bitcoin price in eur", routes: []string{"crypto.price"},
		match: func(t task) (string, map[string]any, bool) {
			if !t.has("price", "prix", "cours", "worth", "value") {
				return "", nil, false
			}
			var ids []string
			for w, id := range cryptoIDs {
				if t.has(w) && !slices.Contains(ids, id) {
					ids = append(ids, id)
				}
			}
			if len(ids) == 0 {
				return "", nil, false
			}
			slices.Sort(ids)
			vs := []string{"usd"}
			if t.has("eur", "euro", "euros", "€") {
				vs = []string{"eur"}
			}
			return "crypto.price", args("ids", ids, "vs", vs), true
		}},
	{name: "chain_gas_block", example: "current gas price on Base", routes: []string{"chain.gas", "chain.block"},
		match: func(t task) (string, map[string]any, bool) {
			switch {
			case t.has("gas", "gwei", "base fee"):
				return "chain.gas", map[string]any{}, true
			case t.has("latest block", "block number", "dernier bloc"):
				return "chain.block", map[string]any{}, true
			}
			return "", nil, false
		}},
	{name: "french_address", example: "geocode 8 boulevard du Port, 80000 Amiens", routes: []string{"fr.geocode"},
		match: func(t task) (string, map[string]any, bool) {
			a := strings.TrimSpace(strings.TrimRight(streetRe.FindString(t.raw), ".,"))
			return "fr.geocode", args("q", a), len(a) >= 8
		}},
	{name: "french_postal_code", example: "fuel prices around 80000", routes: []string{"fr.carburants", "fr.codes-postaux"},
		match: func(t task) (string, map[string]any, bool) {
			cp := cpRe.FindString(t.rest)
			switch {
			case cp == "":
				return "", nil, false
			case t.has("carburant", "carburants", "fuel", "essence", "gazole", "diesel", "petrol"):
				return "fr.carburants", args("cp", cp), true
			case t.has("code postal", "postal code", "communes", "commune", "ville", "villes"):
				return "fr.codes-postaux", args("cp", cp), true
			}
			return "", nil, false
		}},
	{name: "french_holidays", example: "jours fériés 2026 en Alsace-Moselle", routes: []string{"fr.jours-feries"},
		match: func(t task) (string, map[string]any, bool) {
			y := yearRe.FindString(t.rest)
			if y == "" || !t.has("jours fériés", "jours feries", "public holidays", "bank holidays", "fériés") {
				return "", nil, false
			}
			n, _ := strconv.Atoi(y)
			a := args("annee", n)
			if t.has("alsace", "moselle", "alsace-moselle") {
				a["zone"] = "alsace-moselle"
			}
			return "fr.jours-feries", a, true
		}},
	{name: "weather", example: "weather in Amiens tomorrow", routes: []string{"weather"},
		match: func(t task) (string, map[string]any, bool) {
			if !t.has("weather", "météo", "meteo", "forecast", "prévisions", "temperature", "température") {
				return "", nil, false
			}
			m := placeRe.FindStringSubmatch(t.raw)
			if m == nil {
				return "", nil, false
			}
			return "weather", args("city", m[1]), true
		}},
}

// Deterministic routes a task with the recognisers alone; ok is false when none yields an
// input the capability's own decoder accepts. want, when set, restricts the plan to that
// capability.
func Deterministic(cat *catalog.Catalog, raw, want string) (*Plan, bool) {
	t := newTask(raw)
	for _, rc := range recognisers {
		id, in, ok := rc.match(t)
		if !ok || (want != "" && id != want) {
			continue
		}
		e := cat.Entry(id)
		if e == nil {
			continue
		}
		decoded, err := e.Decode(in)
		if err != nil {
			continue
		}
		return &Plan{Capability: id, Route: e.Method + " " + e.Path, Input: decoded, Recogniser: rc.name, Provider: "deterministic"}, true
	}
	return nil, false
}

// ibanValid is the ISO 13616 mod-97 check.
func ibanValid(s string) bool {
	s = strings.ReplaceAll(s, " ", "")
	if len(s) < 15 || len(s) > 34 {
		return false
	}
	r := s[4:] + s[:4]
	rem := 0
	for _, c := range r {
		switch {
		case c >= '0' && c <= '9':
			rem = (rem*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			v := int(c-'A') + 10
			rem = (rem*100 + v) % 97
		default:
			return false
		}
	}
	return rem == 1
}

// luhn is the SIREN/SIRET check digit.
func luhn(s string) bool {
	sum := 0
	for i := range len(s) {
		d := int(s[len(s)-1-i] - '0')
		if d < 0 || d > 9 {
			return false
		}
		if i%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}
