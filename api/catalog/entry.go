// Package catalog is the single table of routes. The router, parameter validation, the 402
// challenges, OpenAPI, llms.txt, MCP tools, x402 discovery and metric labels are all derived
// from Entries; nothing else declares a route. It imports only the standard library and apierr,
// so generators and tests load it cheaply.
package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"time"
)

// Kind says how a route is reached and paid.
type Kind uint8

const (
	Paid      Kind = iota // /v1 route behind the paywall
	Free                  // free route (no payment)
	Discovery             // machine-readable description of the service
	Resource              // a paid-for resource's public address (/hook/<id>, /p/<id>)
)

func (k Kind) String() string {
	return [...]string{"paid", "free", "discovery", "resource"}[k]
}

// Handler computes a route's result. It never sees the transport: the server decodes and
// validates the parameters into req.Args and gives ctx the route's deadline. The result is
// marshalled as JSON with status 200 unless it is a *Raw. Errors should be *apierr.Error.
type Handler func(ctx context.Context, req *Request) (any, error)

// Request is what a handler may know about the call, copied out of the transport. A transport
// may leave the headers, query and body where it holds them (ReadInPlace) until the work
// begins (Copy): a call refused before any work, such as every unpaid call's 402, copies none.
type Request struct {
	Route  *Entry
	Args   Args
	Method string
	Path   string
	PathID string      // the <id> segment of /hook/<id> and /p/<id>
	Query  [][2]string // raw query pairs in order, for routes that capture requests
	// Header holds the request headers (canonical names) once copied: before the work, read
	// them with HeaderValue.
	Header http.Header
	Body   []byte // raw body (already size-limited)
	// ClientIP is the client's identity for per-client allowances and limits: its IPv4
	// address, or its IPv6 prefix ("2001:db8:1:2::/64"), behind trusted proxies only.
	ClientIP string
	// Free is set when nobody pays for the call (a free route, or the free first call of the
	// day): its work may only use what the appliance sets aside for free calls.
	Free    bool
	Payer   string // payer address once a payment is verified ("" on free routes)
	BaseURL string // the public base address of the appliance, from config

	inPlace InPlace // the transport's request until Copy; nil once copied
}

// InPlace is a transport's request read where the transport holds it, valid only while the
// transport serves the call (fasthttp reuses it for the connection's next request).
type InPlace interface {
	// Peek is the first value of the named header, nil when absent.
	Peek(name string) []byte
	// CopyTo fills r's Header, Query and Body.
	CopyTo(r *Request)
}

// ReadInPlace leaves r's headers, query and body in t until Copy. The transport must call
// Copy before anything that outlives its serving the call may read them.
func (r *Request) ReadInPlace(t InPlace) { r.inPlace = t }

// HeaderValue is the first value of the named header, read in place when not yet copied.
func (r *Request) HeaderValue(name string) string {
	if r.inPlace != nil {
		return string(r.inPlace.Peek(name))
	}
	return r.Header.Get(name)
}

// Copy takes the headers, query and body out of the transport, once, for the work (which may
// hand them to goroutines and other processes) to read.
func (r *Request) Copy() {
	if t := r.inPlace; t != nil {
		r.inPlace = nil
		t.CopyTo(r)
	}
}

// Raw is a result encoded once (a JSON body, a PNG, a PDF, a served page), so that it can be
// cached and replayed byte for byte.
type Raw struct {
	Status      int // 0 means 200
	ContentType string
	Header      map[string]string
	Body        []byte
	// OnRevoke takes back what the work handed out (a proxy key) when its payment does not
	// arrive. It is never cached.
	OnRevoke func(context.Context) error `json:"-"`
}

// Revoke undoes the result's side effect, if it has one.
func (r *Raw) Revoke(ctx context.Context) error {
	if r.OnRevoke == nil {
		return nil
	}
	return r.OnRevoke(ctx)
}

// Entry declares one route. Price is in USDC atomic units (6 decimals); money is never a float.
type Entry struct {
	ID      string // stable identifier: OpenAPI operationId, MCP tool name, metric label
	Family  string // the spec's family, e.g. "web", "fr", "chain"
	Method  string // the documented method; every /v1 route also accepts the other of GET/POST
	Path    string // exact path; a trailing "/*" matches one more segment (PathID)
	Summary string // one line, reused by every rendering
	Params  []Param
	Kind    Kind
	Price   uint64        // atomic USDC units; 0 for free routes
	Tier    Tier          // derived from Price by New unless set (EXCEPTION_METERED)
	Timeout time.Duration // the handler's deadline
	// CacheTTL is how long an upstream answer for the same canonical params may be reused.
	CacheTTL      time.Duration
	Upstream      string // upstream name ("" for local work)
	Partial       string // path of the cheaper /partial variant, if any
	FreeTrial     string // path of the free trial route, if any
	FreeFirstCall bool   // the first call of the UTC day per client is free
	Produces      string // response media type; "" means application/json
	Status        string // route attribute from the spec, e.g. "PRIVATE_BETA"
	AnyMethod     bool   // accepts every HTTP method (the webhook inbox's callback_url)
	// DescribedByGET lets a POST endpoint also take GET, which its handler answers with its
	// description (the MCP endpoint, listed among the GET discovery routes).
	DescribedByGET bool
	// PaymentInBody is the JSON key under which the endpoint's JSON-RPC body carries an x402
	// payment (MCP's _meta, A2A's message metadata), for the connections kept for paid calls.
	PaymentInBody string
	// Document marks a free route that is a description of the service rendered from memory
	// (/v1/capabilities): like the discovery documents, it is bounded by the connection
	// limits only, never by the per-client free-call bucket.
	Document bool
	// Creates marks a route whose call leaves something behind that outlives it (a published
	// page, a webhook inbox, proxy credentials, a rented number): it is not read-only, and a
	// repeated call creates another. Every other route only reads.
	Creates bool
	// Offline marks a route answered from the box's own rules and state alone (a checksum, a
	// computed calendar), without reaching any outside service or page.
	Offline bool
	// ExitCountry marks a route whose answer depends on where the box's traffic leaves for the
	// Internet: it reads sites that serve (or block) by the visitor's country, through the
	// box's own residential exit, which must be in this country (ISO 3166-1 alpha-2). ExitParam
	// instead names the parameter in which the caller asks for the exit's country. A fleet
	// sends such a call only to a box whose exit is known to be there.
	ExitCountry string
	ExitParam   string
	Example     map[string]any
	// Returns is the spec's description of the answer (its Response cell), from which the
	// output schema and example are derived; Default fills it in.
	Returns string
	// Handler is nil until the route is implemented: the route is then listed with
	// available:false and answers 503 not_available before any 402.
	Handler Handler
	// Ready, when set, reports whether the route can serve right now (upstream configured,
	// browser pool up). It is consulted before any 402.
	Ready func() error
	// Check, when set, is the family's check across the decoded parameters (a plan over its
	// budget, a capability the router cannot call): Decode runs it, so such input is a 400
	// before any 402 like a malformed parameter. It must do no I/O.
	Check func(Args) error

	// formats are the validators of the catalog holding the entry (nil outside one: the
	// standard set).
	formats formatSet
}

func (e *Entry) formatSet() formatSet {
	if e.formats == nil {
		return formats
	}
	return e.formats
}

// Available reports whether the route has an implementation and is ready to serve.
func (e *Entry) Available() bool {
	if e.Handler == nil {
		return false
	}
	return e.Ready == nil || e.Ready() == nil
}

// ExitDependent reports whether the route's answer depends on the box's exit country.
func (e *Entry) ExitDependent() bool { return e.ExitCountry != "" || e.ExitParam != "" }

// ExitFor is the exit country (upper case) a call with args needs, "" when any exit serves it.
func (e *Entry) ExitFor(args Args) string {
	c := e.ExitCountry
	if e.ExitParam != "" {
		c = args.Str(e.ExitParam)
	}
	return strings.ToUpper(c)
}

// MediaType is the response content type.
func (e *Entry) MediaType() string {
	if e.Produces == "" {
		return "application/json"
	}
	return e.Produces
}

// Tier is the price tier label of the spec.
type Tier string

const (
	TierFree     Tier = "FREE"
	TierMicro    Tier = "MICRO"
	TierStandard Tier = "STANDARD"
	TierPro      Tier = "PRO"
	TierComposed Tier = "COMPOSED"
	TierPremium  Tier = "PREMIUM"
	TierReport   Tier = "REPORT"
	TierDeep     Tier = "DEEP"
	TierMetered  Tier = "EXCEPTION_METERED"
)

// tierFloor lists each tier's list price; a route's tier is the highest one its price reaches.
var tierFloor = []struct {
	tier  Tier
	price uint64
}{
	{TierDeep, 1_000_000}, {TierReport, 500_000}, {TierPremium, 100_000}, {TierComposed, 50_000},
	{TierPro, 20_000}, {TierStandard, 10_000}, {TierMicro, 1},
}

// TierOf derives the tier label of a price in atomic units.
func TierOf(price uint64) Tier {
	if price == 0 {
		return TierFree
	}
	for _, t := range tierFloor {
		if price >= t.price {
			return t.tier
		}
	}
	return TierMicro
}

// maxToolName is the longest name every model API we know of accepts for a tool.
const maxToolName = 64

// ToolName is the MCP tool name of an entry: its ID with every character outside
// [a-zA-Z0-9_-] replaced by "_" ("fr.tva" → "fr_tva"), because several model APIs accept only
// ^[a-zA-Z0-9_-]{1,64}$ for tool names and agents hand our list straight to them. A name that
// would be longer ends with a hash of the ID instead, so it stays unique.
func (e *Entry) ToolName() string {
	name := strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' {
			return c
		}
		return '_'
	}, e.ID)
	if len(name) > maxToolName {
		sum := sha256.Sum256([]byte(e.ID))
		suffix := "_" + hex.EncodeToString(sum[:4])
		name = name[:maxToolName-len(suffix)] + suffix
	}
	return name
}
