// Package server is the fasthttp edge of the API: it routes by the catalog, decodes and
// validates parameters, refuses what cannot succeed before any 402, hands paid calls to the
// paywall gate, and maps every error to HTTP exactly once. It is the only package of api that
// imports fasthttp; handlers see a catalog.Request, never the transport.
package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/clientid"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/internal/caller"
	"github.com/peage/appliance/internal/netlimit"
	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/internal/ratelimit"
	"github.com/peage/appliance/internal/receipt"
	"github.com/peage/appliance/settle/x402"
)

// Config is the public listener's configuration.
type Config struct {
	Addr           string        `toml:"addr"`             // listen address
	BaseURL        string        `toml:"base_url"`         // public address used in URLs handed out
	MaxBodyBytes   int           `toml:"max_body_bytes"`   // larger request bodies answer 413 unread
	MaxHeaderBytes int           `toml:"max_header_bytes"` // larger request headers answer 431
	ReadTimeout    time.Duration `toml:"read_timeout"`
	WriteTimeout   time.Duration `toml:"write_timeout"`
	IdleTimeout    time.Duration `toml:"idle_timeout"`
	// TrustedProxies are the proxies in front of the appliance (addresses or CIDR prefixes):
	// X-Forwarded-For is read, from the right, only through them.
	TrustedProxies []string `toml:"trusted_proxies"`
	// ClientIPv6Prefix is the prefix length that identifies one IPv6 client.
	ClientIPv6Prefix int `toml:"client_ipv6_prefix"`
	// FreePerMinute and FreeBurst are each client's token bucket for calls served free (free
	// routes, free first calls); 0 per minute turns the limit off. Paid calls never use it.
	FreePerMinute int `toml:"free_per_minute"`
	FreeBurst     int `toml:"free_burst"`
	// FreeMaxClients caps the clients whose free-call buckets are remembered.
	FreeMaxClients int `toml:"free_max_clients"`
	// A client is an IPv4 address or an IPv6 /64, as the TCP peer (behind a reverse proxy,
	// the proxy is one client: raise the per-client bounds or set them to 0). At max_conns a
	// new connection closes the one idle the longest (no request yet, or between requests);
	// only when every connection is in a request does it get 503.
	MaxConns          int `toml:"max_conns"`            // open connections in all
	MaxConnsPerClient int `toml:"max_conns_per_client"` // open connections per client; more get 429
	MaxConnsPer56     int `toml:"max_conns_per_56"`     // open connections per IPv6 /56 (a home's delegation); more get 429
	MaxConnsPer48     int `toml:"max_conns_per_48"`     // open connections per IPv6 /48 (a site's); more get 429
	// ConnsReservedForPaid is the part of max_conns that requests without a payment or key
	// may not hold: past max_conns minus it they get 503, paid calls go on.
	ConnsReservedForPaid int           `toml:"conns_reserved_for_paid"`
	BodyReadTimeout      time.Duration `toml:"body_read_timeout"` // a request body must arrive within this after its headers
	// MCPAllowedOrigins are the browser origins (scheme://host[:port]; "*" for all) that may
	// call /mcp besides the box's own base_url and loopback pages: the MCP transport refuses
	// any other Origin with 403, against DNS rebinding. Clients that are not browsers send none.
	MCPAllowedOrigins []string `toml:"mcp_allowed_origins"`
}

// DefaultConfig serves loopback; production sets Addr and BaseURL.
func DefaultConfig() Config {
	return Config{
		Addr: "127.0.0.1:8402", BaseURL: "http://127.0.0.1:8402",
		MaxBodyBytes: 512 << 10, MaxHeaderBytes: 16 << 10,
		ReadTimeout: 30 * time.Second, WriteTimeout: 200 * time.Second, IdleTimeout: 120 * time.Second,
		TrustedProxies: []string{}, ClientIPv6Prefix: clientid.DefaultIPv6Prefix,
		FreePerMinute: 20, FreeBurst: 5, FreeMaxClients: 50_000,
		MaxConns: 4096, MaxConnsPerClient: 128, MaxConnsPer56: 256, MaxConnsPer48: 512, ConnsReservedForPaid: 512,
		BodyReadTimeout: 30 * time.Second,
	}
}

// Constant response headers, in canonical form so fasthttp need not normalise them per request.
var (
	hdrRequestID       = []byte("X-Request-Id")
	hdrAllowOrigin     = []byte("Access-Control-Allow-Origin")
	hdrExposeHeaders   = []byte("Access-Control-Expose-Headers")
	hdrPaymentRequired = []byte("Payment-Required")
	hdrVary            = []byte("Vary")
	valAnyOrigin       = []byte("*")
	valOrigin          = []byte("Origin")
	valExposeHeaders   = []byte(x402.ExposeHeadersValue + ", X-Request-Id, Retry-After")
)

// SettleBudget is what a paid call may spend verifying and settling beyond its route's deadline
// (an endpoint that runs calls inside its own, such as /a2a, must outlast both).
const SettleBudget = 90 * time.Second

// Cache keeps encoded results per route and canonical args for the entry's CacheTTL.
type Cache interface {
	Get(key string) ([]byte, bool)
	Set(key string, val []byte, ttl time.Duration)
}

// Server serves the catalog.
type Server struct {
	cfg        Config
	cat        *catalog.Catalog
	gate       paywall.Gate
	challenges *paywall.Challenges
	cache      Cache
	log        *slog.Logger
	metrics    *metrics
	srv        *fasthttp.Server
	clients    *clientid.Resolver
	free       *ratelimit.Limiter // calls served free, per client
	conns      *netlimit.Limiter
	// base ends when the server shuts down: every call's work runs under it, so shutting
	// down stops running handlers (their calls fail, uncharged) instead of waiting on them.
	base     context.Context
	shutdown context.CancelFunc
}

// Options are the server's collaborators; nil ones get safe defaults.
type Options struct {
	Gate    paywall.Gate // defaults to paywall.ChallengeOnly
	Pay     paywall.Config
	Cache   Cache
	Logger  *slog.Logger
	Metrics *obs.Registry
	// Receipts signs the offers of every 402 (the gate signs the receipts); nil leaves them out.
	Receipts *receipt.Keyring
}

// New builds a server over a catalog whose handlers are bound.
func New(cfg Config, cat *catalog.Catalog, opt Options) *Server {
	if opt.Gate == nil {
		opt.Gate = paywall.ChallengeOnly{}
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	if opt.Metrics == nil {
		opt.Metrics = &obs.Registry{}
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	clients, err := clientid.New(cfg.TrustedProxies, cfg.ClientIPv6Prefix)
	if err != nil {
		// The configuration is validated at load; trusting no proxy is the safe fallback.
		opt.Logger.Error("api.trusted_proxies or api.client_ipv6_prefix ignored", slog.String(obs.KeyErr, err.Error()))
		clients, _ = clientid.New(nil, 0)
	}
	s := &Server{
		cfg: cfg, cat: cat, gate: opt.Gate, cache: opt.Cache, log: opt.Logger,
		challenges: paywall.NewChallenges(opt.Pay, cat, cfg.BaseURL),
		metrics:    newMetrics(opt.Metrics),
		clients:    clients,
		free:       ratelimit.New(ratelimit.Config{PerMinute: cfg.FreePerMinute, Burst: cfg.FreeBurst, MaxClients: cfg.FreeMaxClients}, nil),
		conns: netlimit.New(netlimit.Config{Max: cfg.MaxConns, PerClient: cfg.MaxConnsPerClient,
			Per56: cfg.MaxConnsPer56, Per48: cfg.MaxConnsPer48, Reserve: cfg.ConnsReservedForPaid}),
	}
	s.base, s.shutdown = context.WithCancel(context.Background())
	if opt.Receipts != nil {
		s.challenges.SignOffers(opt.Receipts, nil)
	}
	s.srv = &fasthttp.Server{
		Handler:                      s.handle,
		ErrorHandler:                 s.transportError,
		HeaderReceived:               s.headerReceived,
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
		Name:                         "peage",
		MaxRequestBodySize:           cfg.MaxBodyBytes,
		ReadBufferSize:               cfg.MaxHeaderBytes,
		// A 402 (a PAYMENT-REQUIRED header of up to 3 KB and the legacy body) goes out in one
		// write: with fasthttp's 4 KB buffer it took two syscalls, half the 402 path's CPU.
		WriteBufferSize:               WriteBufferSize,
		ReadTimeout:                   cfg.ReadTimeout,
		WriteTimeout:                  cfg.WriteTimeout,
		IdleTimeout:                   cfg.IdleTimeout,
		DisableHeaderNamesNormalizing: false,
		NoDefaultContentType:          true,
		CloseOnShutdown:               true,
		Logger:                        fasthttpLogger{s: opt.Logger},
	}
	return s
}

// WriteBufferSize holds a whole 402 answer (paywall.MaxChallengeHeader, the legacy body and the
// other headers).
const WriteBufferSize = 8 << 10

// Conns reports the listener's connection counts (netlimit).
func (s *Server) Conns() netlimit.Stats { return s.conns.Stats() }

// Challenges exposes the memoised 402 renderings (MCP uses them too).
func (s *Server) Challenges() *paywall.Challenges { return s.challenges }

// Serve answers on ln until ctx ends, then shuts down gracefully.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	ln = &netlimit.Listener{Listener: ln, Limiter: s.conns, Refuse: connRefusal}
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		s.shutdown()
		shut, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return s.srv.ShutdownWithContext(shut)
	}
}

// transportError answers requests fasthttp could not parse, in the one error shape.
func (s *Server) transportError(ctx *fasthttp.RequestCtx, err error) {
	e := apierr.BadRequest("the request could not be read: %s", err.Error())
	var small *fasthttp.ErrSmallBuffer
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		e = apierr.TooLarge("request body larger than %d bytes", s.cfg.MaxBodyBytes)
	case errors.As(err, &small):
		e = &apierr.Error{Code: apierr.CodeHeaderTooBig, Message: fmt.Sprintf("request headers larger than %d bytes", s.cfg.MaxHeaderBytes)}
	}
	closeUnread(ctx)
	s.writeError(ctx, e, nil, nil)
}

// closeUnread ends the connection after this answer, whose request was not read whole: the
// connection lingers on close (netlimit's LingerUnread) so the client reads the answer
// instead of a reset.
func closeUnread(ctx *fasthttp.RequestCtx) {
	ctx.SetConnectionClose()
	if c, ok := ctx.Conn().(interface{ LingerUnread() }); ok {
		c.LingerUnread()
	}
}

func (s *Server) handle(ctx *fasthttp.RequestCtx) {
	start := ctx.Time() // fasthttp's clock read as the handler is called
	in := readEdgeHeaders(&ctx.Request.Header)
	var idBuf [32]byte
	reqID := requestID(in.requestID, idBuf[:0]) // a string only for a line logged
	h := &ctx.Response.Header
	h.SetCanonical(hdrRequestID, reqID)
	cors(ctx, in.origin)

	method, path := methodName(ctx.Method()), s.pathName(ctx.Path())
	e, pathID, err := s.cat.Lookup(method, path)
	routeID := "unknown"
	if e != nil {
		routeID = e.ID
	}
	var status int
	defer func() {
		// The last net: a panic anywhere in this request (the gate's own included) answers 500
		// in the one error shape; fasthttp would let it end the process.
		if v := recover(); v != nil {
			ctx.Response.Reset()
			ctx.Response.Header.SetCanonical(hdrRequestID, reqID)
			cors(ctx, in.origin)
			status = s.writeError(ctx, s.panicked(routeID, v), nil, nil)
			varyOrigin(ctx, status)
			s.metrics.observe(routeID, status, time.Since(start))
		}
	}()
	if began, berr := s.requestBegins(ctx, e, &in); !began {
		closeUnread(ctx)
		status = s.writeError(ctx, &apierr.Error{Code: apierr.CodeUnavailable, RetryAfter: time.Second,
			Message: "the server keeps its remaining connections for paid calls; retry shortly"}, e, in.offerFormat)
	} else if berr != nil {
		// The rest of the body (if any) is unread: the connection cannot carry another request.
		closeUnread(ctx)
		status = s.writeError(ctx, berr, nil, nil)
	} else {
		status = s.serve(ctx, e, method, path, pathID, err, &in)
	}
	varyOrigin(ctx, status)
	s.metrics.observe(routeID, status, time.Since(start))
	level := requestLogLevel(status)
	if !s.log.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{slog.String(obs.KeyRequestID, string(reqID)), slog.String(obs.KeyRoute, routeID),
		slog.Int(obs.KeyStatus, status), slog.Int64(obs.KeyDuration, time.Since(start).Milliseconds())}
	if box := h.Peek(catalog.HeaderBox); len(box) > 0 {
		// A fleet gateway's relayed call: the box that served it, or whose failure it reports.
		attrs = append(attrs, slog.String(obs.KeyBox, string(box)))
	}
	s.log.LogAttrs(ctx, level, "request", attrs...)
}

// methodName is the request's method as a string, without a copy for the usual ones.
func methodName(m []byte) string {
	switch string(m) {
	case fasthttp.MethodGet:
		return fasthttp.MethodGet
	case fasthttp.MethodPost:
		return fasthttp.MethodPost
	case fasthttp.MethodHead:
		return fasthttp.MethodHead
	case fasthttp.MethodOptions:
		return fasthttp.MethodOptions
	}
	return string(m)
}

// pathName is the request's path as a string: a route's own when it is one, without a copy.
func (s *Server) pathName(p []byte) string {
	if e := s.cat.ByPath(string(p)); e != nil {
		return e.Path
	}
	return string(p)
}

// requestLogLevel keeps the operator's log for work done and failures: a request refused
// before any work (a 402 challenge, a bad parameter, an unknown path, the free-call limit) is
// a debug line. Every client's first call and every crawler's probe is a 402, and at the
// edge's rate an info line each would write a disk-bound log file for anyone who asks; the
// metrics count them by route and status either way.
func requestLogLevel(status int) slog.Level {
	if status >= 400 && status < 500 {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

// cors lets browser scripts of any origin read the answer and its payment headers. Only a
// request that names its Origin gets them: a browser always sends Origin on a cross-origin
// request, and an agent's client has no use for about 150 bytes on every answer (docs/bazaar.md).
func cors(ctx *fasthttp.RequestCtx, origin []byte) {
	if len(origin) == 0 {
		return
	}
	h := &ctx.Response.Header
	h.SetCanonical(hdrAllowOrigin, valAnyOrigin)
	h.SetCanonical(hdrExposeHeaders, valExposeHeaders)
}

// varyOrigin tells caches that the answer depends on Origin (the CORS headers come only with
// it), on every answer a cache may store: a status cacheable by default (RFC 9111 4.2.2) or one
// whose freshness is explicit. A 402, 400 or 503 without either is never stored, and is the
// answer sent most often without Origin.
func varyOrigin(ctx *fasthttp.RequestCtx, status int) {
	h := &ctx.Response.Header
	if !cacheableByDefault[status] && len(h.Peek("Cache-Control")) == 0 && len(h.Peek("Expires")) == 0 {
		return
	}
	h.AddBytesKV(hdrVary, valOrigin)
}

// cacheableByDefault are the statuses a cache may store without explicit freshness (RFC 9111
// 4.2.2, heuristically cacheable).
var cacheableByDefault = map[int]bool{200: true, 203: true, 204: true, 206: true, 300: true, 301: true, 308: true,
	404: true, 405: true, 410: true, 414: true, 501: true}

// serve runs one HTTP request through the paid-call sequence and returns the status written.
func (s *Server) serve(ctx *fasthttp.RequestCtx, e *catalog.Entry, method, path, pathID string, lookupErr error, in *edgeHeaders) int {
	if lookupErr != nil {
		return s.writeError(ctx, lookupErr, e, in.offerFormat)
	}
	if ctx.IsOptions() {
		ctx.Response.Header.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
		ctx.Response.Header.Set("Access-Control-Allow-Headers", "Content-Type, PAYMENT-SIGNATURE, X-PAYMENT, X-Offer-Receipt-Format, X-Proxy-Key, Mcp-Session-Id, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, A2A-Version, A2A-Extensions, X-A2A-Extensions")
		ctx.Response.Header.Set("Access-Control-Max-Age", "86400")
		ctx.SetStatusCode(http.StatusNoContent)
		return http.StatusNoContent
	}
	raw, err := rawParams(ctx, e)
	if err != nil {
		return s.writeError(ctx, err, e, in.offerFormat)
	}
	// fasthttp tells no handler that its client went away; shutdown reaches the work
	// through the server's base context.
	res, hdr, err := s.Invoke(context.Background(), e, raw, s.request(ctx, e, method, path, pathID, in))
	for k, v := range hdr {
		ctx.Response.Header.Set(k, v)
	}
	if err != nil {
		return s.writeError(ctx, err, e, in.offerFormat)
	}
	return s.writeResult(ctx, res)
}

// Invoke runs the paid-call sequence for one call, whatever transport carried it (HTTP or an
// MCP tools/call): validate (400) → available (503) → gate (402, verify, work, settle).
// req carries the transport's copy of the call; Invoke fills in Args. ctx bounds the whole
// call, verification and settlement included; the work also stops when the server shuts
// down. Its error is the *apierr.Error the client sees, mapped once (errorOf) whatever layer
// failed.
func (s *Server) Invoke(ctx context.Context, e *catalog.Entry, raw map[string]any, req *catalog.Request) (res *catalog.Raw, hdr map[string]string, err error) {
	// One deferred function, around a body with many returns: the compiler inlines it at this
	// one return, where invoke's returns would each have run the defer machinery.
	defer func() {
		// A panic in the gate answers this call only (an MCP tools/call gets its error result).
		if v := recover(); v != nil {
			res, hdr, err = nil, nil, s.panicked(e.ID, v)
		}
		if err != nil {
			err = errorOf(err)
		}
	}()
	return s.invoke(ctx, e, raw, req)
}

func (s *Server) invoke(ctx context.Context, e *catalog.Entry, raw map[string]any, req *catalog.Request) (*catalog.Raw, map[string]string, error) {
	args, err := e.Decode(raw)
	if err != nil && !paywall.ColdProbe(e, raw, req) {
		return nil, nil, err
	}
	if e.Handler == nil {
		return nil, nil, apierr.Unavailable("%s is listed but not available on this appliance yet", e.Path)
	}
	if e.Ready != nil {
		if err := e.Ready(); err != nil {
			return nil, nil, &apierr.Error{Code: apierr.CodeUnavailable, Message: e.Path + " is not available right now: " + err.Error(), Cause: err}
		}
	}
	if err != nil { // a cold probe of a route that can serve: the challenge describes its input
		return nil, nil, paywall.PaymentRequired("")
	}
	req.Route, req.Args = e, args
	// Whether the call is served free, and what that spends, is the paywall's to decide
	// (paywall/free.go): the gate's for a paid route, ServeFree's for a free one.
	call := paywall.NewCall(e, req, s.challenges.ResourceURL(e), freeBucket{s})
	work := func(c context.Context) (out any, err error) {
		req.Copy() // the handler may keep what it reads beyond the transport's call
		defer func() {
			// A handler's panic is its call's failure: the gate sees an error, so the payment
			// is released (or the free call given back), never charged.
			if v := recover(); v != nil {
				out, err = nil, s.panicked(e.ID, v)
			}
		}()
		if req.Free {
			c = upstream.WithFree(c) // paid calls keep precedence at the upstreams
		}
		c, cancel := context.WithTimeout(c, e.Timeout)
		defer cancel()
		// Shutting down cancels the work, not the gate's settlement of work already done.
		defer context.AfterFunc(s.base, cancel)()
		defer func() {
			if err != nil && s.base.Err() != nil {
				err = &apierr.Error{Code: apierr.CodeUnavailable, RetryAfter: time.Second, Cause: err,
					Message: "the server is shutting down; the call was stopped and nothing was charged, retry"}
			}
		}()
		// The gate has set the payer by now, once its payment is verified.
		c = caller.With(c, caller.ID{Client: req.ClientIP, Payer: req.Payer})
		return s.run(c, e, req, call.Key)
	}
	var out any
	var hdr map[string]string
	switch e.Kind {
	case catalog.Paid:
		if call.Key != "" { // verification and settlement ahead: bound them too
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, e.Timeout+SettleBudget)
			defer cancel()
		}
		out, hdr, err = s.gate.Charge(ctx, call, work)
	case catalog.Free:
		out, err = paywall.ServeFree(ctx, call, work)
	default: // the service's discovery documents
		out, err = work(ctx)
	}
	if err != nil {
		return nil, hdr, err
	}
	res, ok := out.(*catalog.Raw)
	if !ok {
		return nil, hdr, fmt.Errorf("gate returned %T, not the work's result", out)
	}
	return res, hdr, nil
}

// panicked logs a recovered panic with its stack and returns the error that answers it: one
// faulty call costs a 500, never the process.
func (s *Server) panicked(route string, v any) *apierr.Error {
	s.log.Error("panic recovered", slog.String(obs.KeyRoute, route), slog.String(obs.KeyErr, fmt.Sprint(v)),
		slog.String(obs.KeyStack, string(debug.Stack())))
	return &apierr.Error{Code: apierr.CodeInternal, Message: "internal error; nothing was charged"}
}

// run is the work of a call: the cached answer if fresh, else the handler's, encoded once so
// it can be cached and replayed byte for byte.
func (s *Server) run(ctx context.Context, e *catalog.Entry, req *catalog.Request, key string) (any, error) {
	cacheable := s.cache != nil && e.CacheTTL > 0
	if cacheable {
		if b, ok := s.cache.Get(key); ok {
			var r catalog.Raw
			if json.Unmarshal(b, &r) == nil {
				s.metrics.cache.Inc(e.ID, "hit")
				return &r, nil
			}
		}
		s.metrics.cache.Inc(e.ID, "miss")
	}
	out, err := e.Handler(ctx, req)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	res, err := encode(e, out)
	if err != nil {
		return nil, err
	}
	if cacheable && res.Status == http.StatusOK {
		if b, err := json.Marshal(cachedCopy(res)); err == nil {
			s.cache.Set(key, b, e.CacheTTL)
		}
	}
	return res, nil
}

// cachedCopy is what the cache keeps of a result: a fleet gateway's answer without the box
// that served it, since a hit is the gateway's own work (the box runs nothing for it), so
// neither the answer nor the ledger credits that box again.
func cachedCopy(res *catalog.Raw) *catalog.Raw {
	if _, relayed := res.Header[catalog.HeaderBox]; !relayed {
		return res
	}
	c := *res
	c.Header = make(map[string]string, len(res.Header)-1)
	for k, v := range res.Header {
		if k != catalog.HeaderBox {
			c.Header[k] = v
		}
	}
	return &c
}

// revoker is a handler result with a side effect to undo when its payment fails.
type revoker interface {
	Revoke(context.Context) error
}

func encode(e *catalog.Entry, out any) (*catalog.Raw, error) {
	res, err := encodeValue(e, out)
	if err == nil {
		if r, ok := out.(revoker); ok {
			res.OnRevoke = r.Revoke
		}
	}
	return res, err
}

func encodeValue(e *catalog.Entry, out any) (*catalog.Raw, error) {
	if raw, ok := out.(*catalog.Raw); ok {
		st := raw.Status
		if st == 0 {
			st = http.StatusOK
		}
		ct := raw.ContentType
		if ct == "" {
			ct = e.MediaType()
		}
		return &catalog.Raw{Status: st, ContentType: ct, Header: raw.Header, Body: raw.Body}, nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode result of %s: %w", e.ID, err)
	}
	return &catalog.Raw{Status: http.StatusOK, ContentType: "application/json", Body: b}, nil
}

func (s *Server) writeResult(ctx *fasthttp.RequestCtx, r *catalog.Raw) int {
	for k, v := range r.Header {
		ctx.Response.Header.Set(k, v)
	}
	ctx.SetContentType(r.ContentType)
	ctx.SetStatusCode(r.Status)
	if !ctx.IsHead() {
		ctx.SetBody(r.Body)
	}
	return r.Status
}

// writeError maps err to its status and body once. A payment error answers the 402 challenge:
// the v2 PAYMENT-REQUIRED header and the legacy v1 form as the body, its offers signed in the
// format the request's X-Offer-Receipt-Format asks for (offerFormat).
func (s *Server) writeError(ctx *fasthttp.RequestCtx, err error, e *catalog.Entry, offerFormat []byte) int {
	ae := errorOf(err)
	status := ae.Status()
	if ae.Code == apierr.CodePayment && e != nil {
		ch, cerr := s.challenges.ForErrorIn(e, err, paywall.ParseOfferFormat(string(offerFormat)))
		if cerr == nil {
			ctx.Response.Header.SetCanonical(hdrPaymentRequired, ch.HeaderBytes)
			ctx.SetContentType("application/json")
			ctx.SetStatusCode(http.StatusPaymentRequired)
			ctx.Response.SetBodyRaw(ch.Body) // memoised, never written to: no copy
			return http.StatusPaymentRequired
		}
		ae, status = apierr.From(cerr), http.StatusInternalServerError
	}
	if status >= 500 && ae.Code == apierr.CodeInternal {
		s.log.Error("internal error", slog.String(obs.KeyErr, err.Error()), slog.String(obs.KeyRequestID, string(ctx.Response.Header.Peek("X-Request-Id"))))
	}
	for k, v := range ae.Header {
		ctx.Response.Header.Set(k, v)
	}
	if ae.RetryAfter > 0 {
		ctx.Response.Header.Set("Retry-After", strconv.Itoa(int((ae.RetryAfter+time.Second-1)/time.Second)))
	}
	body, _ := json.Marshal(apierr.BodyOf(ae))
	ctx.SetContentType("application/json")
	ctx.SetStatusCode(status)
	ctx.SetBody(body)
	return status
}

// rawParams gathers the parameters of a call: query text, overlaid by a JSON object body.
func rawParams(ctx *fasthttp.RequestCtx, e *catalog.Entry) (map[string]any, error) {
	raw := map[string]any{}
	for k, v := range ctx.QueryArgs().All() {
		addParam(raw, paramKey(e, k), string(v))
	}
	if e.AnyMethod || !ctx.IsPost() {
		return raw, nil
	}
	body := bytes.TrimSpace(ctx.PostBody())
	if len(body) == 0 {
		return raw, nil
	}
	// curl -d sends JSON labelled as a form; a body that opens an object is JSON whatever its label.
	ct := string(ctx.Request.Header.ContentType())
	if strings.HasPrefix(ct, "application/x-www-form-urlencoded") && body[0] != '{' {
		for k, v := range ctx.PostArgs().All() {
			addParam(raw, paramKey(e, k), string(v))
		}
		return raw, nil
	}
	if e.Kind == catalog.Discovery {
		return raw, nil // /mcp reads its own JSON-RPC body
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, apierr.BadRequest("the body must be a JSON object with the route's parameters")
	}
	for k, v := range obj {
		raw[k] = v
	}
	return raw, nil
}

// paramKey is a form or query key as a string: the entry's own name of the parameter when it
// is one, without a copy.
func paramKey(e *catalog.Entry, k []byte) string {
	for i := range e.Params {
		if e.Params[i].Name == string(k) {
			return e.Params[i].Name
		}
	}
	return string(k)
}

// addParam adds a form or query value; a key given again keeps every value, in order, for
// the catalog to read as a list's items (or refuse for a parameter that is not a list).
func addParam(raw map[string]any, k, v string) {
	switch prev := raw[k].(type) {
	case nil:
		raw[k] = v
	case string:
		raw[k] = catalog.Repeated{prev, v}
	case catalog.Repeated:
		raw[k] = append(prev, v)
	}
}

// request is the call as its handler and the gate see it. Its headers, query and body stay in
// fasthttp's request until the work copies them: the 402 of an unpaid call, the path every
// client's first call and every crawler's probe takes, copies none. A call with a payment or
// a key copies them at once, since its gate may read them from goroutines of its own.
func (s *Server) request(ctx *fasthttp.RequestCtx, e *catalog.Entry, method, path, pathID string, in *edgeHeaders) *catalog.Request {
	r := &inPlace{Request: catalog.Request{Route: e, Method: method, Path: path, PathID: pathID, ClientIP: s.clientIP(ctx, in), BaseURL: s.cfg.BaseURL},
		ctx: ctx, payment: in.payment, xPayment: in.xPayment}
	r.ReadInPlace(r)
	if in.withKey() {
		r.Copy()
	}
	return &r.Request
}

// inPlace is a call's request read where fasthttp holds it, valid while its handler runs, with
// the payment headers the edge has read already (the call's key and the gate look them up).
type inPlace struct {
	catalog.Request
	ctx               *fasthttp.RequestCtx
	payment, xPayment []byte
}

func (c *inPlace) Peek(name string) []byte {
	switch {
	case strings.EqualFold(name, x402.HeaderPaymentSignature):
		return c.payment
	case strings.EqualFold(name, x402.HeaderXPayment):
		return c.xPayment
	}
	return c.ctx.Request.Header.Peek(name)
}

func (c *inPlace) CopyTo(r *catalog.Request) {
	ctx := c.ctx
	r.Header = make(http.Header, ctx.Request.Header.Len())
	for k, v := range ctx.Request.Header.All() {
		r.Header.Add(string(k), string(v))
	}
	if args := ctx.QueryArgs(); args.Len() > 0 {
		r.Query = make([][2]string, 0, args.Len())
		for k, v := range args.All() {
			r.Query = append(r.Query, [2]string{string(k), string(v)})
		}
	}
	if body := ctx.PostBody(); len(body) > 0 {
		r.Body = bytes.Clone(body)
	}
}

// clientIP is the client's identity: its address, or its IPv6 prefix, behind trusted proxies.
func (s *Server) clientIP(ctx *fasthttp.RequestCtx, in *edgeHeaders) string {
	peer, _ := netip.AddrFromSlice(ctx.RemoteIP())
	if !in.forwarded {
		return s.clients.Identify(peer, nil)
	}
	vs := ctx.Request.Header.PeekAll("X-Forwarded-For")
	forwarded := make([]string, len(vs))
	for i, v := range vs {
		forwarded[i] = string(v)
	}
	return s.clients.Identify(peer, forwarded)
}

// freeBucket is the server's per-client token bucket of calls served free, as the paywall
// spends it.
type freeBucket struct{ s *Server }

// Take spends one of the client's free-call tokens, or refuses the call with 429.
func (b freeBucket) Take(client string) error {
	ok, wait := b.s.free.Take(client)
	if ok {
		return nil
	}
	return &apierr.Error{Code: apierr.CodeLimitExceeded, RetryAfter: wait,
		Message: fmt.Sprintf("free calls are limited to %d a minute per client (bursts of %d); retry after Retry-After seconds. Paid calls are not limited",
			b.s.cfg.FreePerMinute, max(b.s.cfg.FreeBurst, 1))}
}

func (b freeBucket) Refund(client string) { b.s.free.Refund(client) }

// requestID keeps a sane client-supplied X-Request-Id (given), or names the request: a random
// per-process prefix and a counter, unique without a random read per request. It is appended
// to buf, or is the request's own header (valid while the handler runs).
func requestID(given, buf []byte) []byte {
	if len(given) > 0 && len(given) <= 64 && isToken(given) {
		return given
	}
	buf = append(buf, idPrefix...)
	return strconv.AppendUint(buf, idCounter.Add(1), 36)
}

var (
	idPrefix  = newIDPrefix()
	idCounter atomic.Uint64
)

func newIDPrefix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:]) + "-"
}

func isToken(b []byte) bool {
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// fasthttpLogger sends fasthttp's own connection-level messages to slog at debug level: they
// are about misbehaving clients, already answered, not about the appliance.
type fasthttpLogger struct{ s *slog.Logger }

func (l fasthttpLogger) Printf(format string, args ...any) {
	l.s.Debug("transport", slog.String(obs.KeyDetail, fmt.Sprintf(format, args...)))
}

// ChallengeObject is the decoded v2 PaymentRequired of e, for transports that carry it as
// JSON rather than as a header (MCP).
func (s *Server) ChallengeObject(e *catalog.Entry, payErr error) (map[string]any, error) {
	ch, err := s.challenges.ForMCPError(e, payErr)
	if err != nil {
		return nil, err
	}
	raw, err := base64.StdEncoding.DecodeString(ch.Header)
	if err != nil {
		return nil, err
	}
	var obj map[string]any
	return obj, json.Unmarshal(raw, &obj)
}

// PaymentRequiredObject is the decoded v2 PaymentRequired of e as the HTTP 402 carries it (its
// Bazaar declaration describes the HTTP call), with the alternatives that HTTP sends in the
// legacy body, for transports that carry it as JSON and whose call is the route's own (A2A).
func (s *Server) PaymentRequiredObject(e *catalog.Entry, payErr error) (map[string]any, error) {
	ch, err := s.challenges.ForObjectError(e, payErr)
	if err != nil {
		return nil, err
	}
	raw, err := base64.StdEncoding.DecodeString(ch.Header)
	if err != nil {
		return nil, err
	}
	var obj map[string]any
	return obj, json.Unmarshal(raw, &obj)
}
