// Package relay carries a catalog call from the gateway to a box of the fleet and its answer
// back. On the gateway, each relayable entry is bound to a handler that sends the call (entry
// ID, validated args, the request's copy) through the fleet dispatcher; the gateway's server
// runs around it unchanged (400s, 402s, the gate, settlement, the ledger), so a call is
// verified before it leaves and settled only once a box has answered. On the box, each entry
// the box can serve runs its family's real handler behind the box's micro endpoint.
package relay

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
)

// HeaderBox names the box that served a relayed answer.
const HeaderBox = catalog.HeaderBox

// RouteName is the fleet route name of a catalog entry: its ID with '.' as '_' (a subject
// token admits no '.'). Bind refuses two entries that would share a name.
func RouteName(id string) string { return strings.ReplaceAll(strings.ToLower(id), ".", "_") }

// Relayable reports whether an entry's work can run on a box: a paid route whose result
// leaves nothing behind. A route that creates something (a page, an inbox, proxy
// credentials) needs the gateway's own state and to be revoked there; it stays local.
func Relayable(e *catalog.Entry) bool { return e.Kind == catalog.Paid && !e.Creates }

// call is what the gateway sends a box: the entry, its validated args and the request's copy.
// Payment headers stay on the gateway: the box has no use for the payer's signature.
type call struct {
	Route    string       `json:"route"`
	Args     catalog.Args `json:"args"`
	Method   string       `json:"method,omitempty"`
	Path     string       `json:"path,omitempty"`
	PathID   string       `json:"path_id,omitempty"`
	Query    [][2]string  `json:"query,omitempty"`
	Header   http.Header  `json:"header,omitempty"`
	Body     []byte       `json:"body,omitempty"`
	ClientIP string       `json:"client_ip,omitempty"`
	Free     bool         `json:"free,omitempty"`
	Payer    string       `json:"payer,omitempty"`
	BaseURL  string       `json:"base_url,omitempty"`
}

// privateHeaders never leave the gateway.
var privateHeaders = []string{"Payment-Signature", "X-Payment", "Authorization", "Cookie", "Proxy-Authorization"}

func callOf(req *catalog.Request) call {
	c := call{Route: req.Route.ID, Args: req.Args, Method: req.Method, Path: req.Path, PathID: req.PathID,
		Query: req.Query, Body: req.Body, ClientIP: req.ClientIP, Free: req.Free, Payer: req.Payer, BaseURL: req.BaseURL}
	if len(req.Header) > 0 {
		h := req.Header.Clone()
		for _, name := range privateHeaders {
			h.Del(name)
		}
		c.Header = h
	}
	return c
}

// answerMeta heads an answer frame; the body follows it unencoded, so a screenshot crosses
// without base64.
type answerMeta struct {
	Status      int               `json:"status,omitempty"`
	ContentType string            `json:"content_type,omitempty"`
	Header      map[string]string `json:"header,omitempty"`
	Error       *routeError       `json:"error,omitempty"`
}

// routeError is the route's own failure on the box (a 404 of the upstream, a 502), kept with
// its code so the gateway answers what a single box would have.
type routeError struct {
	Code         apierr.Code `json:"code"`
	Message      string      `json:"message"`
	Param        string      `json:"param,omitempty"`
	Upstream     string      `json:"upstream,omitempty"`
	RetryAfterMS int64       `json:"retry_after_ms,omitempty"`
}

// An answer frame: the meta's length (4 bytes, big-endian), the meta as JSON, the body.
func encodeAnswer(m answerMeta, body []byte) ([]byte, error) {
	meta, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 4, 4+len(meta)+len(body))
	binary.BigEndian.PutUint32(out, uint32(len(meta)))
	out = append(out, meta...)
	return append(out, body...), nil
}

var errFrame = errors.New("malformed answer frame")

func decodeAnswer(frame []byte) (answerMeta, []byte, error) {
	var m answerMeta
	if len(frame) < 4 {
		return m, nil, errFrame
	}
	n := binary.BigEndian.Uint32(frame)
	if uint64(n) > uint64(len(frame)-4) {
		return m, nil, errFrame
	}
	if err := json.Unmarshal(frame[4:4+n], &m); err != nil {
		return m, nil, fmt.Errorf("%w: %v", errFrame, err)
	}
	if m.Error == nil && (m.Status < 200 || m.Status > 599) {
		return m, nil, fmt.Errorf("%w: status %d", errFrame, m.Status)
	}
	return m, frame[4+n:], nil
}

func errorFrame(err error) ([]byte, error) {
	ae := apierr.From(err)
	return encodeAnswer(answerMeta{Error: &routeError{Code: ae.Code, Message: ae.Message, Param: ae.Param,
		Upstream: ae.Upstream, RetryAfterMS: ae.RetryAfter.Milliseconds()}}, nil)
}

func (e *routeError) apiError() *apierr.Error {
	return &apierr.Error{Code: e.Code, Message: e.Message, Param: e.Param, Upstream: e.Upstream,
		RetryAfter: time.Duration(e.RetryAfterMS) * time.Millisecond}
}

// decodeCall reads a call with its numbers as json.Number, so that entry.Decode gets back
// the same integers it validated on the gateway.
func decodeCall(data []byte) (call, map[string]any, error) {
	var c struct {
		call
		Args map[string]any `json:"args"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&c); err != nil {
		return call{}, nil, fmt.Errorf("relay: call: %w", err)
	}
	return c.call, c.Args, nil
}
