// Package a2a serves the catalog to A2A agents, v1.0 and v0.3 on the same endpoint: the agent
// card at /.well-known/agent-card.json and its JSON-RPC endpoint, paid through the a2a-x402
// v0.2 extension's standalone flow. A message whose data part is {"route", "params"} creates
// a task; the call runs the very same sequence as an HTTP call (params → availability → x402
// gate → handler), so bad parameters fail the task before any payment, an unpaid paid route
// puts it in input-required with the HTTP 402's PaymentRequired in its status message, the
// message carrying the signed payment runs it through the same gate and ledger, and a failed
// call charges nothing. v0.3's methods (message/send, tasks/get, tasks/cancel) run the same
// operations as v1.0's, their objects translated at the edge (v03.go).
package a2a

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/render"
)

// Invoker runs one call through the paid-call sequence (the server implements it).
type Invoker interface {
	Invoke(ctx context.Context, e *catalog.Entry, raw map[string]any, req *catalog.Request) (*catalog.Raw, map[string]string, error)
}

// Challenger renders an entry's PaymentRequired as the HTTP 402 carries it (the server's
// memoised challenges).
type Challenger interface {
	PaymentRequiredObject(e *catalog.Entry, payErr error) (map[string]any, error)
}

// The a2a-x402 v0.2 metadata keys (spec section 7) and payment statuses.
const (
	MetaStatus   = "x402.payment.status"
	MetaRequired = "x402.payment.required"
	MetaPayload  = "x402.payment.payload"
	MetaReceipts = "x402.payment.receipts"
	MetaError    = "x402.payment.error"

	statusRequired  = "payment-required"
	statusRejected  = "payment-rejected"
	statusCompleted = "payment-completed"
	statusFailed    = "payment-failed"
)

// Options bound the task store; zero values take the defaults.
type Options struct {
	BaseURL  string // the appliance's public address, named in the card
	MaxTasks int
	MaxBytes int // the tasks' stored answers, in all
	TaskTTL  time.Duration
	Now      func() time.Time
}

// Endpoint is the A2A card and JSON-RPC endpoint.
type Endpoint struct {
	cat     *catalog.Catalog
	invoker Invoker
	chal    Challenger
	card    []byte
	tasks   *store
	// routes maps every name a message may give a route by (its ID, its MCP tool name) to
	// its entry; a path is looked up in the catalog.
	routes map[string]*catalog.Entry
}

// path is where the JSON-RPC binding is served (the catalog's "a2a" entry).
const path = "/a2a"

// New renders the card once (prices and routes are fixed for the process) and indexes the
// routes a message may name.
func New(cat *catalog.Catalog, inv Invoker, chal Challenger, opt Options) *Endpoint {
	if opt.MaxTasks <= 0 {
		opt.MaxTasks = defaultMaxTasks
	}
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = defaultMaxBytes
	}
	if opt.TaskTTL <= 0 {
		opt.TaskTTL = defaultTaskTTL
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	card, _ := json.Marshal(Card(cat, opt.BaseURL, path))
	ep := &Endpoint{cat: cat, invoker: inv, chal: chal, card: card,
		tasks: newStore(opt.MaxTasks, opt.MaxBytes, opt.TaskTTL, opt.Now), routes: map[string]*catalog.Entry{}}
	for _, e := range cat.Entries() {
		if render.IsTool(e) {
			ep.routes[e.ID] = e
			ep.routes[e.ToolName()] = e
		}
	}
	return ep
}

// Bind attaches the card and the endpoint to their entries: the card is served only where
// the endpoint it names is.
func (ep *Endpoint) Bind(c *catalog.Catalog) error {
	card := &catalog.Raw{ContentType: "application/json", Body: ep.card}
	if err := c.Bind("well-known.agent-card.json", func(context.Context, *catalog.Request) (any, error) { return card, nil }, nil); err != nil {
		return err
	}
	return c.Bind("a2a", ep.handle, nil)
}

type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// JSON-RPC's codes and A2A's own (specification section 5.4).
const (
	errParse             = -32700
	errInvalidRequest    = -32600
	errMethodNotFound    = -32601
	errInvalidParams     = -32602
	errTaskNotFound      = -32001
	errTaskNotCancelable = -32002
	errPushNotSupported  = -32003
	errUnsupported       = -32004
	errNoExtendedCard    = -32007
	errVersion           = -32009
)

func (ep *Endpoint) handle(ctx context.Context, req *catalog.Request) (any, error) {
	var rpc rpcRequest
	if err := json.Unmarshal(req.Body, &rpc); err != nil {
		return reply(rpcResponse{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{errParse, "the body must be one JSON-RPC 2.0 request"}}, nil), nil
	}
	if rpc.JSONRPC != "2.0" || rpc.Method == "" {
		return reply(rpcResponse{JSONRPC: "2.0", ID: orNull(rpc.ID), Error: &rpcError{errInvalidRequest, "not a JSON-RPC 2.0 request"}}, nil), nil
	}
	if len(rpc.ID) == 0 { // a notification: A2A defines none, so there is nothing to do
		return &catalog.Raw{Status: http.StatusAccepted, ContentType: "application/json"}, nil
	}
	var result any
	var rerr *rpcError
	version, known := methods[rpc.Method]
	asked := majorMinor(req.Header.Get("A2A-Version"))
	switch {
	case asked != "" && asked != ProtocolVersion && asked != ProtocolVersion03:
		rerr = &rpcError{errVersion, "A2A version " + req.Header.Get("A2A-Version") + " is not supported; this endpoint speaks " + ProtocolVersion + " and " + ProtocolVersion03}
	case !known || (asked != "" && asked != version):
		rerr = &rpcError{errMethodNotFound, notServed(rpc.Method, asked)}
	case version == ProtocolVersion03:
		result, rerr = ep.dispatch03(ctx, req, rpc)
	default:
		result, rerr = ep.dispatch(ctx, req, rpc)
	}
	// The extension is activated by naming it (spec section 8, in v0.3's X-A2A-Extensions
	// there); the answer says it was.
	var hdr map[string]string
	for _, name := range []string{"A2A-Extensions", "X-A2A-Extensions"} {
		if strings.Contains(req.Header.Get(name), ExtensionX402) {
			hdr = map[string]string{name: ExtensionX402}
		}
	}
	return reply(rpcResponse{JSONRPC: "2.0", ID: rpc.ID, Result: result, Error: rerr}, hdr), nil
}

func reply(r rpcResponse, hdr map[string]string) *catalog.Raw {
	b, _ := json.Marshal(r)
	return &catalog.Raw{ContentType: "application/json", Header: hdr, Body: b}
}

func orNull(id json.RawMessage) json.RawMessage {
	if len(id) == 0 {
		return json.RawMessage("null")
	}
	return id
}

// methods names each JSON-RPC method with the A2A version it belongs to: without an
// A2A-Version header, the method's name tells the version (v0.3's never sent one).
var methods = map[string]string{
	"SendMessage": ProtocolVersion, "GetTask": ProtocolVersion, "CancelTask": ProtocolVersion,
	"SendStreamingMessage": ProtocolVersion, "SubscribeToTask": ProtocolVersion, "GetExtendedAgentCard": ProtocolVersion,
	"CreateTaskPushNotificationConfig": ProtocolVersion, "GetTaskPushNotificationConfig": ProtocolVersion,
	"ListTaskPushNotificationConfigs": ProtocolVersion, "DeleteTaskPushNotificationConfig": ProtocolVersion,

	"message/send": ProtocolVersion03, "tasks/get": ProtocolVersion03, "tasks/cancel": ProtocolVersion03,
	"message/stream": ProtocolVersion03, "tasks/resubscribe": ProtocolVersion03, "agent/getAuthenticatedExtendedCard": ProtocolVersion03,
	"tasks/pushNotificationConfig/set": ProtocolVersion03, "tasks/pushNotificationConfig/get": ProtocolVersion03,
	"tasks/pushNotificationConfig/list": ProtocolVersion03, "tasks/pushNotificationConfig/delete": ProtocolVersion03,
}

// majorMinor is an A2A-Version header's version without its patch number, which the
// specification says never counts ("1" is read as 1.0); "" when the header is absent.
func majorMinor(v string) string {
	v = strings.TrimSpace(v)
	if v == "" {
		return ""
	}
	parts := strings.SplitN(v, ".", 3)
	if len(parts) == 1 {
		return parts[0] + ".0"
	}
	return parts[0] + "." + parts[1]
}

// notServed is MethodNotFound's message: the methods of the version asked for, or of both.
func notServed(method, version string) string {
	switch version {
	case ProtocolVersion:
		return "method " + method + " is not an A2A 1.0 method served here; this endpoint offers SendMessage, GetTask and CancelTask"
	case ProtocolVersion03:
		return "method " + method + " is not an A2A 0.3 method served here; this endpoint offers message/send, tasks/get and tasks/cancel"
	}
	return "method " + method + " is not served; this endpoint offers SendMessage, GetTask and CancelTask (A2A 1.0) and message/send, tasks/get and tasks/cancel (A2A 0.3)"
}

func (ep *Endpoint) dispatch(ctx context.Context, req *catalog.Request, rpc rpcRequest) (any, *rpcError) {
	switch rpc.Method {
	case "SendMessage":
		var p sendParams
		if err := json.Unmarshal(rpc.Params, &p); err != nil || p.Message == nil {
			return nil, &rpcError{errInvalidParams, "SendMessage needs params.message"}
		}
		var history *int
		if p.Configuration != nil {
			history = p.Configuration.HistoryLength
		}
		task, rerr := ep.sendMessage(ctx, req, p.Message, history)
		if rerr != nil {
			return nil, rerr
		}
		return map[string]any{"task": task}, nil
	case "GetTask":
		return result(ep.getTask(rpc))
	case "CancelTask":
		return result(ep.cancelTask(rpc))
	case "SendStreamingMessage", "SubscribeToTask":
		return nil, &rpcError{errUnsupported, "streaming is not offered: use SendMessage (the answer carries the task)"}
	case "CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig":
		return nil, &rpcError{errPushNotSupported, "push notifications are not offered"}
	case "GetExtendedAgentCard":
		return nil, &rpcError{errNoExtendedCard, "there is no extended agent card"}
	}
	return nil, &rpcError{errMethodNotFound, notServed(rpc.Method, ProtocolVersion)}
}

// dispatch03 serves v0.3's methods with the same operations, in v0.3's shapes: a message is
// read as its v1.0 form, and a task is answered in v0.3's (message/send's result is the task
// itself, not wrapped).
func (ep *Endpoint) dispatch03(ctx context.Context, req *catalog.Request, rpc rpcRequest) (any, *rpcError) {
	switch rpc.Method {
	case "message/send":
		var p sendParams03
		if err := json.Unmarshal(rpc.Params, &p); err != nil || p.Message == nil {
			return nil, &rpcError{errInvalidParams, "message/send needs params.message"}
		}
		m, err := fromMessage03(p.Message)
		if err != nil {
			return nil, &rpcError{errInvalidParams, err.Error()}
		}
		var history *int
		if p.Configuration != nil {
			history = p.Configuration.HistoryLength
		}
		return result03(ep.sendMessage(ctx, req, m, history))
	case "tasks/get":
		return result03(ep.getTask(rpc))
	case "tasks/cancel":
		return result03(ep.cancelTask(rpc))
	case "message/stream", "tasks/resubscribe":
		return nil, &rpcError{errUnsupported, "streaming is not offered: use message/send (the answer carries the task)"}
	case "tasks/pushNotificationConfig/set", "tasks/pushNotificationConfig/get", "tasks/pushNotificationConfig/list", "tasks/pushNotificationConfig/delete":
		return nil, &rpcError{errPushNotSupported, "push notifications are not offered"}
	case "agent/getAuthenticatedExtendedCard":
		return nil, &rpcError{errNoExtendedCard, "there is no authenticated extended card"}
	}
	return nil, &rpcError{errMethodNotFound, notServed(rpc.Method, ProtocolVersion03)}
}

func result(t Task, rerr *rpcError) (any, *rpcError) {
	if rerr != nil {
		return nil, rerr
	}
	return t, nil
}

func result03(t Task, rerr *rpcError) (any, *rpcError) {
	if rerr != nil {
		return nil, rerr
	}
	return toTask03(t), nil
}

// sendMessage handles a message and trims the task's history to the client's historyLength.
func (ep *Endpoint) sendMessage(ctx context.Context, req *catalog.Request, m *Message, history *int) (Task, *rpcError) {
	task, rerr := ep.send(ctx, req, m)
	if rerr != nil {
		return Task{}, rerr
	}
	return withHistory(task, history), nil
}

// getTask reads a task (GetTask, tasks/get: the same params in both versions).
func (ep *Endpoint) getTask(rpc rpcRequest) (Task, *rpcError) {
	var p taskParams
	if err := json.Unmarshal(rpc.Params, &p); err != nil || p.ID == "" {
		return Task{}, &rpcError{errInvalidParams, rpc.Method + " needs params.id"}
	}
	task, ok := ep.tasks.get(p.ID)
	if !ok {
		return Task{}, &rpcError{errTaskNotFound, "task " + p.ID + " is unknown or expired"}
	}
	return withHistory(task, p.HistoryLength), nil
}

// cancelTask cancels a task waiting for its payment (CancelTask, tasks/cancel).
func (ep *Endpoint) cancelTask(rpc rpcRequest) (Task, *rpcError) {
	var p taskParams
	if err := json.Unmarshal(rpc.Params, &p); err != nil || p.ID == "" {
		return Task{}, &rpcError{errInvalidParams, rpc.Method + " needs params.id"}
	}
	return ep.end(p.ID, stateCanceled, "the client canceled the task", nil)
}

// withHistory trims the task's history to the client's historyLength (0 drops it).
func withHistory(t Task, n *int) Task {
	if n != nil && *n >= 0 && len(t.History) > *n {
		t.History = t.History[len(t.History)-*n:]
	}
	return t
}

// send handles a message: a new call, or the payment (or refusal) of a task's call.
func (ep *Endpoint) send(ctx context.Context, outer *catalog.Request, m *Message) (Task, *rpcError) {
	if m.TaskID != "" {
		return ep.pay(ctx, outer, m)
	}
	t := &task{Task: Task{ID: newID(), ContextID: m.ContextID}}
	if t.ContextID == "" {
		t.ContextID = newID()
	}
	request := *m
	request.TaskID, request.ContextID = t.ID, t.ContextID
	t.History = []Message{request}
	e, params, fault := ep.call(m)
	if fault != nil {
		t.Status = ep.failed(t, fault, nil)
		ep.tasks.put(t, 0)
		return t.Task, nil
	}
	t.entry, t.params = e, params
	out, hdr, err := ep.invoke(ctx, e, params, outer, http.Header{})
	next, size := ep.outcome(t, out, hdr, err, false)
	t.Task = next
	ep.tasks.put(t, size)
	return next, nil
}

// call reads the route and its params from the message's data part.
func (ep *Endpoint) call(m *Message) (*catalog.Entry, map[string]any, *apierr.Error) {
	for _, p := range m.Parts {
		if len(p.Data) == 0 {
			continue
		}
		var c struct {
			Route  string         `json:"route"`
			Params map[string]any `json:"params"`
		}
		dec := json.NewDecoder(strings.NewReader(string(p.Data)))
		dec.UseNumber() // params keep their numbers' text, as a query string would
		if err := dec.Decode(&c); err != nil || c.Route == "" {
			return nil, nil, apierr.BadParam("route", "the data part must be {\"route\": \"<route id or path>\", \"params\": {...}}")
		}
		e := ep.routes[c.Route]
		if e == nil {
			if byPath := ep.cat.ByPath(c.Route); byPath != nil && render.IsTool(byPath) {
				e = byPath
			}
		}
		if e == nil {
			return nil, nil, apierr.BadParam("route", "unknown route %q: name a route by its id (fr.tva) or path (/v1/fr/tva), as the card's skills list them", c.Route)
		}
		if c.Params == nil {
			c.Params = map[string]any{}
		}
		return e, c.Params, nil
	}
	return nil, nil, apierr.BadParam("route", "the message has no data part: send {\"route\": \"<route id or path>\", \"params\": {...}} as a data part")
}

// pay handles a message about an existing task: its payment, or the client's refusal to pay.
func (ep *Endpoint) pay(ctx context.Context, outer *catalog.Request, m *Message) (Task, *rpcError) {
	if m.Metadata[MetaStatus] == statusRejected { // x402's A2A transport: the task fails
		return ep.end(m.TaskID, stateFailed, "the client rejected the payment requirements", map[string]any{MetaStatus: statusRejected, MetaReceipts: []any{}})
	}
	t, fault := ep.tasks.claim(m.TaskID)
	switch fault {
	case claimUnknown:
		return Task{}, &rpcError{errTaskNotFound, "task " + m.TaskID + " is unknown or expired; send the call again"}
	case claimBusy:
		return Task{}, &rpcError{errUnsupported, "task " + m.TaskID + " is running its paid call"}
	case claimTerminal:
		return Task{}, &rpcError{errUnsupported, "task " + m.TaskID + " is finished; send a new message for a new call"}
	}
	// A message without a payload is answered with the requirements again.
	payload := m.Metadata[MetaPayload]
	var out *catalog.Raw
	var hdr map[string]string
	header := http.Header{}
	err := paywall.PaymentObjectHeader(payload, "message.metadata[\""+MetaPayload+"\"]", header)
	if err == nil {
		out, hdr, err = ep.invoke(ctx, t.entry, t.params, outer, header)
	}
	next, size := ep.outcome(t, out, hdr, err, payload != nil)
	ep.tasks.release(t, next, size)
	return next, nil
}

// invoke is the one place the endpoint runs a call through the server's paid-call sequence.
func (ep *Endpoint) invoke(ctx context.Context, e *catalog.Entry, params map[string]any, outer *catalog.Request, header http.Header) (*catalog.Raw, map[string]string, error) {
	req := &catalog.Request{Method: e.Method, Path: e.Path, Header: header, ClientIP: outer.ClientIP, BaseURL: outer.BaseURL}
	return ep.invoker.Invoke(ctx, e, params, req)
}

// outcome is the task after its call: completed with the answer, input-required with the
// payment requirements, or failed; and the bytes it holds.
func (ep *Endpoint) outcome(t *task, out *catalog.Raw, hdr map[string]string, err error, paying bool) (Task, int) {
	next := t.Task
	if err == nil {
		var meta map[string]any
		if paying {
			// The receipt is the PAYMENT-RESPONSE header's content, whole: whatever the gate
			// puts there (a batch channel's state, a signed receipt) reaches the client.
			receipts := []any{}
			if r := paywall.MCPPaymentResponse(hdr); r != nil {
				receipts = append(receipts, r)
			}
			meta = map[string]any{MetaStatus: statusCompleted, MetaReceipts: receipts}
		}
		next.Status = status(stateCompleted, t, []Part{{Text: "Done: the answer of " + t.entry.ID + " is the task's artifact."}}, meta)
		next.Artifacts = []Artifact{{ArtifactID: newID(), Name: t.entry.ID, Parts: []Part{answerPart(out)}}}
		return next, len(out.Body)
	}
	ae := apierr.From(err)
	if ae.Code == apierr.CodePayment {
		obj, cerr := ep.chal.PaymentRequiredObject(t.entry, err)
		if cerr == nil {
			meta := map[string]any{MetaStatus: statusRequired, MetaRequired: obj}
			text := "Payment is required: sign one of x402.payment.required's accepts and send it as x402.payment.payload in a message with this taskId."
			if paying {
				meta[MetaStatus], meta[MetaError] = statusFailed, paymentError(obj)
				text = "The payment was refused (" + paymentError(obj) + "); nothing was charged. Sign the renewed requirements and send them again."
			}
			next.Status = status(stateInputRequired, t, []Part{{Text: text}}, meta)
			return next, 0
		}
		ae = apierr.From(cerr)
	}
	var meta map[string]any
	if paying { // a payment was presented and, the call having failed, released: nothing settled
		meta = map[string]any{MetaStatus: statusFailed, MetaError: string(ae.Code), MetaReceipts: []any{}}
	}
	next.Status = ep.failed(t, ae, meta)
	return next, 0
}

// failed is a failed task's status: the error's text and its JSON body (the HTTP answer's).
func (ep *Endpoint) failed(t *task, ae *apierr.Error, meta map[string]any) TaskStatus {
	body, _ := json.Marshal(apierr.BodyOf(ae))
	text := fmt.Sprintf("The call failed (%d %s): %s; nothing was charged.", ae.Status(), ae.Code, ae.Message)
	if ae.Param != "" {
		text = fmt.Sprintf("The call failed (%d %s, parameter %s): %s; nothing was charged.", ae.Status(), ae.Code, ae.Param, ae.Message)
	}
	return status(stateFailed, t, []Part{{Text: text}, {Data: body, MediaType: "application/json"}}, meta)
}

// end puts a task that waits for its payment in a final state: canceled, or failed when its
// client rejects the payment.
func (ep *Endpoint) end(id, state, why string, meta map[string]any) (Task, *rpcError) {
	t, fault := ep.tasks.claim(id)
	switch fault {
	case claimUnknown:
		return Task{}, &rpcError{errTaskNotFound, "task " + id + " is unknown or expired"}
	case claimBusy, claimTerminal:
		return Task{}, &rpcError{errTaskNotCancelable, "task " + id + " is running or finished"}
	}
	next := t.Task
	next.Status = status(state, t, []Part{{Text: why + "; nothing was charged."}}, meta)
	ep.tasks.release(t, next, t.size)
	return next, nil
}

// paymentError is the short reason of a renewed PaymentRequired (its error field up to the
// first colon), for x402.payment.error.
func paymentError(obj map[string]any) string {
	reason, _ := obj["error"].(string)
	code, _, _ := strings.Cut(reason, ":")
	if code == "" {
		return "payment_refused"
	}
	return code
}

func status(state string, t *task, parts []Part, meta map[string]any) TaskStatus {
	if len(meta) == 0 {
		meta = nil
	}
	return TaskStatus{State: state, Timestamp: time.Now().UTC().Format(time.RFC3339Nano), Message: &Message{
		MessageID: newID(), ContextID: t.ContextID, TaskID: t.ID, Role: roleAgent, Parts: parts, Metadata: meta,
	}}
}

// answerPart carries a route's answer: JSON as a data part, text as text, anything else
// (PNG, PDF) as raw bytes with its media type.
func answerPart(out *catalog.Raw) Part {
	switch {
	case strings.HasPrefix(out.ContentType, "application/json") && encodesAsIs(out.Body):
		return Part{Data: json.RawMessage(out.Body), MediaType: "application/json"}
	case strings.HasPrefix(out.ContentType, "text/"):
		return Part{Text: string(out.Body), MediaType: out.ContentType}
	}
	return Part{Raw: out.Body, MediaType: out.ContentType}
}

// encodesAsIs reports whether body is JSON that the task's encoding carries byte for byte: a
// data part is compacted and HTML-escaped, and the artifact must be the body delivered, which
// the receipt's delivery statement binds by its SHA-256. Other JSON goes as raw bytes.
func encodesAsIs(body []byte) bool {
	b, err := json.Marshal(json.RawMessage(body))
	return err == nil && bytes.Equal(b, body)
}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40 // a version 4 UUID, the form A2A's examples use
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
