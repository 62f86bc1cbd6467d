package a2a_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/api/a2a"
	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/routes/fr"
	"github.com/peage/appliance/api/upstream"
)

// startUnpaid serves fr.tva (offline) with the verifying gate but no facilitator: enough for
// every path that never reaches a settlement.
func startUnpaid(t *testing.T) *apitest.Harness {
	t.Helper()
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	specs, err := upstream.Resolve(upstream.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	french, err := fr.With(fr.Parts{Upstreams: specs})
	if err != nil {
		t.Fatal(err)
	}
	if err := french.Bind(cat); err != nil {
		t.Fatal(err)
	}
	return serveUnpaid(t, cat)
}

// serveUnpaid serves cat and its A2A endpoint with the verifying gate but no facilitator.
func serveUnpaid(t *testing.T, cat *catalog.Catalog) *apitest.Harness {
	t.Helper()
	pay := paywall.DefaultConfig()
	pay.PayTo = apitest.TestPayTo
	h := apitest.Start(t, cat, apitest.Options{Gate: paywall.New(pay, paywall.DefaultPolicy(), nil, paywall.GateOptions{}), Pay: pay})
	if err := a2a.New(cat, h.Server, h.Server, a2a.Options{BaseURL: h.BaseURL}).Bind(cat); err != nil {
		t.Fatal(err)
	}
	return h
}

type rpcAnswer struct {
	Result json.RawMessage
	Error  *struct {
		Code    int
		Message string
	}
}

func rpc(t *testing.T, h *apitest.Harness, hdr map[string]string, body string) rpcAnswer {
	t.Helper()
	req, _ := http.NewRequest("POST", h.BaseURL+"/a2a", bytes.NewReader([]byte(body)))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := h.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var a rpcAnswer
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &a) != nil {
		t.Fatalf("POST /a2a %s = %d %s", body, resp.StatusCode, b)
	}
	return a
}

// send sends one message and returns the task of the answer.
func send(t *testing.T, h *apitest.Harness, message map[string]any) map[string]any {
	t.Helper()
	message["messageId"], message["role"] = "m-1", "ROLE_USER"
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": map[string]any{"message": message}})
	a := rpc(t, h, nil, string(body))
	if a.Error != nil {
		t.Fatalf("SendMessage: %+v", a.Error)
	}
	task, _ := apitest.At(apitest.Decode(t, a.Result), "task").(map[string]any)
	if task == nil {
		t.Fatalf("SendMessage answered %s", a.Result)
	}
	return task
}

func dataPart(route string, params map[string]any) []any {
	return []any{map[string]any{"data": map[string]any{"route": route, "params": params}, "mediaType": "application/json"}}
}

// TestProtocolErrors: what is not a call gets the JSON-RPC error A2A names for it, in v1.0
// and v0.3; an A2A-Version header chooses the version, whose methods alone are served.
func TestProtocolErrors(t *testing.T) {
	h := startUnpaid(t)
	for _, c := range []struct {
		name string
		hdr  map[string]string
		body string
		code int
	}{
		{"not JSON", nil, `{`, -32700},
		{"not JSON-RPC", nil, `{"id":1,"method":"SendMessage"}`, -32600},
		{"no message", nil, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}`, -32602},
		{"unknown method", nil, `{"jsonrpc":"2.0","id":1,"method":"tasks/list","params":{}}`, -32601},
		{"unknown task", nil, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"nope"}}`, -32001},
		{"payment for an unknown task", nil, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","taskId":"nope","parts":[{"text":"pay"}]}}}`, -32001},
		{"streaming", nil, `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{}}`, -32004},
		{"push notifications", nil, `{"jsonrpc":"2.0","id":1,"method":"CreateTaskPushNotificationConfig","params":{}}`, -32003},
		{"another version", map[string]string{"A2A-Version": "2.0"}, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"nope"}}`, -32009},
		{"a 1.0 method asked as 0.3", map[string]string{"A2A-Version": "0.3"}, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"nope"}}`, -32601},
		{"a 0.3 method asked as 1.0", map[string]string{"A2A-Version": "1.0"}, `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"nope"}}`, -32601},
		{"0.3: no message", nil, `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{}}`, -32602},
		{"0.3: a part without kind", nil, `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"text":"hi"}]}}}`, -32602},
		{"0.3: unknown task", map[string]string{"A2A-Version": "0.3.0"}, `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"nope"}}`, -32001},
		{"0.3: cancel an unknown task", nil, `{"jsonrpc":"2.0","id":1,"method":"tasks/cancel","params":{"id":"nope"}}`, -32001},
		{"0.3: streaming", nil, `{"jsonrpc":"2.0","id":1,"method":"message/stream","params":{}}`, -32004},
		{"0.3: resubscribe", nil, `{"jsonrpc":"2.0","id":1,"method":"tasks/resubscribe","params":{"id":"nope"}}`, -32004},
		{"0.3: push notifications", nil, `{"jsonrpc":"2.0","id":1,"method":"tasks/pushNotificationConfig/set","params":{}}`, -32003},
		{"0.3: extended card", nil, `{"jsonrpc":"2.0","id":1,"method":"agent/getAuthenticatedExtendedCard"}`, -32007},
	} {
		t.Run(c.name, func(t *testing.T) {
			if a := rpc(t, h, c.hdr, c.body); a.Error == nil || a.Error.Code != c.code {
				t.Fatalf("= %+v %s, want error %d", a.Error, a.Result, c.code)
			}
		})
	}
}

// TestTaskLifecycleWithoutSettlement: an unknown route fails its task naming "route"; a
// refused payment leaves the task waiting for one, with the renewed requirements and the
// reason; the client's rejection fails it (as x402's A2A transport says), after which it
// takes no more messages; GetTask reads it. CancelTask cancels a task waiting for payment.
func TestTaskLifecycleWithoutSettlement(t *testing.T) {
	h := startUnpaid(t)

	task := send(t, h, map[string]any{"parts": dataPart("fr.nope", nil)})
	if apitest.At(task, "status", "state") != "TASK_STATE_FAILED" || apitest.At(task, "status", "message", "parts", 1, "data", "error", "param") != "route" {
		t.Errorf("unknown route: %s", jsonText(task))
	}

	task = send(t, h, map[string]any{"parts": dataPart("/v1/fr/tva", map[string]any{"siren": "303265045"})})
	id := task["id"].(string)
	if apitest.At(task, "status", "state") != "TASK_STATE_INPUT_REQUIRED" || apitest.At(task, "status", "message", "metadata", a2a.MetaRequired, "accepts", 0, "amount") != "5000" {
		t.Fatalf("call by path: %s", jsonText(task))
	}

	refused := send(t, h, map[string]any{"taskId": id, "parts": []any{map[string]any{"text": "pay"}},
		"metadata": map[string]any{a2a.MetaStatus: "payment-submitted", a2a.MetaPayload: map[string]any{"x402Version": 2, "payload": map[string]any{"signature": "0x00"}}}})
	meta := apitest.At(refused, "status", "message", "metadata")
	if apitest.At(refused, "status", "state") != "TASK_STATE_INPUT_REQUIRED" || apitest.At(meta, a2a.MetaStatus) != "payment-failed" ||
		apitest.At(meta, a2a.MetaError) == nil || apitest.At(meta, a2a.MetaRequired, "accepts", 0, "amount") != "5000" {
		t.Errorf("refused payment: %s", jsonText(refused))
	}

	rejected := send(t, h, map[string]any{"taskId": id, "parts": []any{map[string]any{"text": "no"}}, "metadata": map[string]any{a2a.MetaStatus: "payment-rejected"}})
	if apitest.At(rejected, "status", "state") != "TASK_STATE_FAILED" || apitest.At(rejected, "status", "message", "metadata", a2a.MetaStatus) != "payment-rejected" {
		t.Errorf("rejected payment: %s", jsonText(rejected))
	}
	again := rpc(t, h, nil, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","taskId":"`+id+`","parts":[{"text":"pay"}]}}}`)
	if again.Error == nil || again.Error.Code != -32004 {
		t.Errorf("message to a failed task: %+v", again.Error)
	}

	got := rpc(t, h, nil, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"`+id+`","historyLength":0}}`)
	if got.Error != nil || apitest.At(apitest.Decode(t, got.Result), "status", "state") != "TASK_STATE_FAILED" || apitest.At(apitest.Decode(t, got.Result), "history") != nil {
		t.Errorf("GetTask: %+v %s", got.Error, got.Result)
	}

	waiting := send(t, h, map[string]any{"parts": dataPart("fr_tva", map[string]any{"siren": "303265045"})})
	canceled := rpc(t, h, nil, `{"jsonrpc":"2.0","id":1,"method":"CancelTask","params":{"id":"`+waiting["id"].(string)+`"}}`)
	if canceled.Error != nil || apitest.At(apitest.Decode(t, canceled.Result), "status", "state") != "TASK_STATE_CANCELED" {
		t.Errorf("CancelTask: %+v %s", canceled.Error, canceled.Result)
	}
	if again := rpc(t, h, nil, `{"jsonrpc":"2.0","id":1,"method":"CancelTask","params":{"id":"`+waiting["id"].(string)+`"}}`); again.Error == nil || again.Error.Code != -32002 {
		t.Errorf("CancelTask of a canceled task: %+v", again.Error)
	}
}

// send03 sends one v0.3 message (message/send, activating x402 through X-A2A-Extensions)
// and returns the task of the answer.
func send03(t *testing.T, h *apitest.Harness, message map[string]any) map[string]any {
	t.Helper()
	message["kind"], message["messageId"], message["role"] = "message", "m-1", "user"
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": map[string]any{"message": message}})
	a := rpc(t, h, map[string]string{"X-A2A-Extensions": a2a.ExtensionX402}, string(body))
	if a.Error != nil {
		t.Fatalf("message/send: %+v", a.Error)
	}
	task, _ := apitest.Decode(t, a.Result).(map[string]any)
	if task == nil || task["kind"] != "task" {
		t.Fatalf("message/send answered %s", a.Result)
	}
	return task
}

func dataPart03(route string, params map[string]any) []any {
	return []any{map[string]any{"kind": "data", "data": map[string]any{"route": route, "params": params}}}
}

// TestV03TaskLifecycleWithoutSettlement: a v0.3 client's calls take the same course as a
// v1.0 client's, answered in v0.3's shapes (kind discriminators, lower-case states and
// roles): a bad parameter fails the task naming it, before any requirement; a paid route asks
// for payment with the HTTP 402's requirements; a refused payment renews them; tasks/get and
// tasks/cancel read and cancel the task, which GetTask (v1.0) reads too, since both versions
// share one store.
func TestV03TaskLifecycleWithoutSettlement(t *testing.T) {
	h := startUnpaid(t)

	bad := send03(t, h, map[string]any{"parts": dataPart03("fr.tva", map[string]any{"siren": "12"})})
	if apitest.At(bad, "status", "state") != "failed" || apitest.At(bad, "status", "message", "parts", 1, "kind") != "data" ||
		apitest.At(bad, "status", "message", "parts", 1, "data", "error", "param") != "siren" || apitest.At(bad, "status", "message", "metadata") != nil {
		t.Errorf("bad parameter: %s", jsonText(bad))
	}

	task := send03(t, h, map[string]any{"parts": dataPart03("fr.tva", map[string]any{"siren": "303265045"})})
	id := task["id"].(string)
	status := apitest.At(task, "status", "message")
	if apitest.At(task, "status", "state") != "input-required" || apitest.At(status, "kind") != "message" || apitest.At(status, "role") != "agent" ||
		apitest.At(status, "parts", 0, "kind") != "text" || apitest.At(status, "metadata", a2a.MetaStatus) != "payment-required" ||
		apitest.At(status, "metadata", a2a.MetaRequired, "accepts", 0, "amount") != "5000" {
		t.Fatalf("paid route: %s", jsonText(task))
	}

	refused := send03(t, h, map[string]any{"taskId": id, "parts": []any{map[string]any{"kind": "text", "text": "pay"}},
		"metadata": map[string]any{a2a.MetaStatus: "payment-submitted", a2a.MetaPayload: map[string]any{"x402Version": 2, "payload": map[string]any{"signature": "0x00"}}}})
	meta := apitest.At(refused, "status", "message", "metadata")
	if apitest.At(refused, "status", "state") != "input-required" || apitest.At(meta, a2a.MetaStatus) != "payment-failed" ||
		apitest.At(meta, a2a.MetaError) == nil || apitest.At(meta, a2a.MetaRequired, "accepts", 0, "amount") != "5000" {
		t.Errorf("refused payment: %s", jsonText(refused))
	}

	got := rpc(t, h, nil, `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"`+id+`"}}`)
	history := apitest.At(apitest.Decode(t, got.Result), "history", 0)
	if got.Error != nil || apitest.At(apitest.Decode(t, got.Result), "status", "state") != "input-required" ||
		apitest.At(history, "kind") != "message" || apitest.At(history, "role") != "user" || apitest.At(history, "parts", 0, "kind") != "data" ||
		apitest.At(history, "parts", 0, "data", "route") != "fr.tva" {
		t.Errorf("tasks/get: %+v %s", got.Error, got.Result)
	}
	v1 := rpc(t, h, nil, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"`+id+`"}}`)
	if v1.Error != nil || apitest.At(apitest.Decode(t, v1.Result), "status", "state") != "TASK_STATE_INPUT_REQUIRED" ||
		apitest.At(apitest.Decode(t, v1.Result), "history", 0, "role") != "ROLE_USER" {
		t.Errorf("GetTask of a v0.3 task: %+v %s", v1.Error, v1.Result)
	}

	canceled := rpc(t, h, nil, `{"jsonrpc":"2.0","id":1,"method":"tasks/cancel","params":{"id":"`+id+`"}}`)
	if canceled.Error != nil || apitest.At(apitest.Decode(t, canceled.Result), "status", "state") != "canceled" ||
		apitest.At(apitest.Decode(t, canceled.Result), "kind") != "task" {
		t.Errorf("tasks/cancel: %+v %s", canceled.Error, canceled.Result)
	}
	if again := rpc(t, h, nil, `{"jsonrpc":"2.0","id":1,"method":"tasks/cancel","params":{"id":"`+id+`"}}`); again.Error == nil || again.Error.Code != -32002 {
		t.Errorf("tasks/cancel of a canceled task: %+v", again.Error)
	}
}

// TestBrowserPreflightAllowsTheA2AHeaders: the SDK sends A2A-Version on every call (and
// A2A-Extensions to activate x402; v0.3's SDK X-A2A-Extensions), so a browser agent's
// preflight must allow them.
func TestBrowserPreflightAllowsTheA2AHeaders(t *testing.T) {
	h := startUnpaid(t)
	resp := h.Preflight(t, "POST", "/a2a", "a2a-version,a2a-extensions,x-a2a-extensions,content-type")
	allowed := strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers"))
	for _, name := range []string{"a2a-version", "a2a-extensions", "x-a2a-extensions", "content-type"} {
		if !strings.Contains(allowed, name) {
			t.Errorf("preflight %d allows %q, not %s", resp.StatusCode, allowed, name)
		}
	}
}

// TestArtifactCarriesTheBodyDelivered: a task's artifact holds the body exactly as the route
// delivered it, the bytes a receipt's delivery statement binds: as a data part when JSON
// carries those bytes unchanged, else as raw bytes (JSON with white space or HTML characters,
// which re-encoding would compact or escape); in v0.3, whose data part holds an object only,
// other JSON (an array) is a file of its bytes.
func TestArtifactCarriesTheBodyDelivered(t *testing.T) {
	bodies := map[string]*catalog.Raw{
		"compact": {ContentType: "application/json", Body: []byte(`{"a":"b","n":[1,2]}`)},
		"pretty":  {ContentType: "application/json", Body: []byte("{\n  \"a\": \"<b> & c\",\n  \"n\": [1, 2]\n}\n")},
		"text":    {ContentType: "text/plain; charset=utf-8", Body: []byte("plain <text>\n")},
		"array":   {ContentType: "application/json", Body: []byte(`[{"a":1},2]`)},
	}
	var entries []catalog.Entry
	for name, raw := range bodies {
		entries = append(entries, catalog.Entry{Method: "GET", Path: "/free/test/" + name, Summary: name, Kind: catalog.Free, Timeout: time.Second,
			Handler: func(context.Context, *catalog.Request) (any, error) { return raw, nil }})
	}
	def, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.New(append(entries, *def.Entry("well-known.agent-card.json"), *def.Entry("a2a")))
	if err != nil {
		t.Fatal(err)
	}
	h := serveUnpaid(t, cat)
	for name, raw := range bodies {
		t.Run(name, func(t *testing.T) {
			body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": map[string]any{"message": map[string]any{
				"messageId": "m-1", "role": "ROLE_USER", "parts": dataPart("free.test."+name, map[string]any{})}}})
			a := rpc(t, h, nil, string(body))
			var res struct {
				Task struct {
					Artifacts []struct {
						Parts []struct {
							Data      json.RawMessage `json:"data"`
							Raw       []byte          `json:"raw"`
							Text      *string         `json:"text"`
							MediaType string          `json:"mediaType"`
						} `json:"parts"`
					} `json:"artifacts"`
				} `json:"task"`
			}
			if a.Error != nil || json.Unmarshal(a.Result, &res) != nil || len(res.Task.Artifacts) != 1 || len(res.Task.Artifacts[0].Parts) != 1 {
				t.Fatalf("SendMessage: %s %+v", a.Result, a.Error)
			}
			p := res.Task.Artifacts[0].Parts[0]
			var got []byte
			switch {
			case p.Text != nil:
				got = []byte(*p.Text)
			case p.Raw != nil:
				got = p.Raw
			default:
				got = p.Data
			}
			if !bytes.Equal(got, raw.Body) || !strings.HasPrefix(p.MediaType, strings.Split(raw.ContentType, ";")[0]) {
				t.Errorf("artifact %q (%s), delivered %q (%s)", got, p.MediaType, raw.Body, raw.ContentType)
			}
		})
		t.Run(name+" in v0.3", func(t *testing.T) {
			body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": map[string]any{"message": map[string]any{
				"kind": "message", "messageId": "m-1", "role": "user", "parts": dataPart03("free.test."+name, map[string]any{})}}})
			a := rpc(t, h, nil, string(body))
			var task struct {
				Artifacts []struct {
					Parts []struct {
						Kind string          `json:"kind"`
						Data json.RawMessage `json:"data"`
						Text *string         `json:"text"`
						File *struct {
							Bytes    []byte `json:"bytes"`
							MimeType string `json:"mimeType"`
						} `json:"file"`
					} `json:"parts"`
				} `json:"artifacts"`
			}
			if a.Error != nil || json.Unmarshal(a.Result, &task) != nil || len(task.Artifacts) != 1 || len(task.Artifacts[0].Parts) != 1 {
				t.Fatalf("message/send: %s %+v", a.Result, a.Error)
			}
			p := task.Artifacts[0].Parts[0]
			var got []byte
			switch {
			case p.Kind == "text" && p.Text != nil:
				got = []byte(*p.Text)
			case p.Kind == "file" && p.File != nil && strings.HasPrefix(raw.ContentType, p.File.MimeType):
				got = p.File.Bytes
			case p.Kind == "data" && bytes.HasPrefix(p.Data, []byte("{")): // v0.3's DataPart.data is an object
				got = p.Data
			}
			if !bytes.Equal(got, raw.Body) {
				t.Errorf("artifact %s, delivered %q (%s)", a.Result, raw.Body, raw.ContentType)
			}
		})
	}
}
