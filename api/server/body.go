package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/internal/netlimit"
)

// The server streams request bodies (fasthttp StreamRequestBody): without it fasthttp
// allocates a buffer of the announced Content-Length before the first body byte arrives, so a
// few hundred connections announcing 512 KB and sending nothing would hold hundreds of MB.
// A body is read here, as its bytes arrive, bounded by max_body_bytes and body_read_timeout.

// hdrBodyRefused marks a request whose announced body is over the limit. headerReceived sets
// it after deleting any copy the client sent, so only the server can set it.
var hdrBodyRefused = []byte("X-Peage-Body-Refused")

// headerReceived runs once a request's headers are read, before any body byte. A body
// announced over the limit is refused unread: fasthttp is told there is no body (nothing is
// read, nothing allocated), the handler answers 413 and the connection closes, since the
// announced bytes would otherwise be read as the next request.
func (s *Server) headerReceived(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	h.DelBytes(hdrBodyRefused)
	cl := h.ContentLength()
	if cl == 0 || cl == -2 {
		// No body follows (fasthttp reads none without Content-Length or Transfer-Encoding),
		// so no deadline for one: setting it updated the connection's timer on every request.
		return fasthttp.RequestConfig{}
	}
	if cl > s.cfg.MaxBodyBytes {
		h.SetBytesKV(hdrBodyRefused, strconv.AppendInt(nil, int64(cl), 10))
		h.SetContentLength(0)
		h.SetConnectionClose()
		// No "100 Continue" either: the client is told 413 before it sends anything.
		h.Del("Expect")
	}
	return fasthttp.RequestConfig{ReadTimeout: s.cfg.BodyReadTimeout}
}

// readBody reads the request's body from its stream into the request, so handlers and
// PostBody see it as before. Chunked bodies have no announced length: they are cut at the limit.
// refused is headerReceived's mark on a body announced over the limit.
func (s *Server) readBody(ctx *fasthttp.RequestCtx, refused bool) error {
	if refused {
		return apierr.TooLarge("request body larger than %d bytes", s.cfg.MaxBodyBytes)
	}
	st := ctx.RequestBodyStream()
	if st == nil {
		return nil
	}
	var buf bytes.Buffer
	if cl := ctx.Request.Header.ContentLength(); cl > 0 && cl <= 8<<10 {
		buf.Grow(cl) // already read with the headers: no waiting on the client
	}
	n, err := buf.ReadFrom(io.LimitReader(st, int64(s.cfg.MaxBodyBytes)+1))
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return apierr.BadRequest("the request body did not arrive within %s", s.cfg.BodyReadTimeout)
		}
		return apierr.BadRequest("the request body could not be read: %s", err.Error())
	}
	if n > int64(s.cfg.MaxBodyBytes) {
		return apierr.TooLarge("request body larger than %d bytes", s.cfg.MaxBodyBytes)
	}
	ctx.Request.SetBodyRaw(buf.Bytes())
	return nil
}

// requestBegins marks the connection as in a request, which no newcomer closes to make room
// (netlimit), until its answer is written, and reads the request's body; a request with a
// payment or a key may use the connections kept for those. False: the request is refused (503),
// since requests without either hold all they may. An endpoint whose JSON-RPC body carries the
// payment (MCP, A2A) has its body read before it is refused, to tell.
func (s *Server) requestBegins(ctx *fasthttp.RequestCtx, e *catalog.Entry, in *edgeHeaders) (bool, error) {
	c, ok := ctx.Conn().(interface{ Busy(withKey bool) bool })
	if !ok || c.Busy(in.withKey()) {
		return true, s.readBody(ctx, in.bodyRefused)
	}
	if e == nil || e.PaymentInBody == "" || s.readBody(ctx, in.bodyRefused) != nil {
		return false, nil
	}
	return bytes.Contains(ctx.PostBody(), []byte(strconv.Quote(e.PaymentInBody))) && c.Busy(true), nil
}

// edgeHeaders are the request headers the edge reads itself, found in one pass over them:
// fasthttp's Peek normalises the name and scans every header for each one looked up, and a
// 402 looked up eight, each costing about what this pass costs for all (a client sends half
// a dozen headers or more). Each is its first value, as Peek's.
type edgeHeaders struct {
	origin, requestID, offerFormat []byte
	payment, xPayment, proxyKey    []byte // PAYMENT-SIGNATURE, X-PAYMENT, X-Proxy-Key
	forwarded                      bool   // an X-Forwarded-For: the client may be behind a proxy
	bodyRefused                    bool   // headerReceived's mark (hdrBodyRefused)
}

func readEdgeHeaders(h *fasthttp.RequestHeader) edgeHeaders {
	var in edgeHeaders
	for k, v := range h.All() { // names are canonical: the server normalises them as it reads
		var at *[]byte
		switch string(k) {
		case "Origin":
			at = &in.origin
		case "X-Request-Id":
			at = &in.requestID
		case paywall.HeaderOfferFormat:
			at = &in.offerFormat
		case "Payment-Signature":
			at = &in.payment
		case "X-Payment":
			at = &in.xPayment
		case "X-Proxy-Key":
			at = &in.proxyKey
		case "X-Forwarded-For":
			in.forwarded = true
		case "X-Peage-Body-Refused":
			in.bodyRefused = true
		}
		if at != nil && *at == nil {
			*at = v
		}
	}
	return in
}

// withKey reports whether the request carries a payment or a proxy key.
func (in *edgeHeaders) withKey() bool {
	return len(in.payment) > 0 || len(in.xPayment) > 0 || len(in.proxyKey) > 0
}

// connRefusal is the whole answer to a connection over a bound: it is written before the
// request is read, so it names no request id.
func connRefusal(r netlimit.Refusal) []byte {
	e := apierr.Busy(time.Second, "too many open connections from this client; close some and retry")
	status := "429 Too Many Requests"
	if r == netlimit.TooManyInAll {
		e = &apierr.Error{Code: apierr.CodeUnavailable, RetryAfter: time.Second, Message: "the server is at its connection limit; retry shortly"}
		status = "503 Service Unavailable"
	}
	body, _ := json.Marshal(apierr.BodyOf(e))
	return fmt.Appendf(nil, "HTTP/1.1 %s\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", status, len(body), body)
}
