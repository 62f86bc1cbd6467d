package a2a

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// A2A v0.3 (specification/json/a2a.json at v0.3.0), which most deployed clients still speak:
// Google's ADK, @a2a-js/sdk 0.3.x, the Python a2a-sdk 0.3.x. Its methods carry the same
// operations as v1.0's under other names, and its objects the same fields with a "kind"
// discriminator and lower-case enums. The endpoint keeps every task in its v1.0 form and
// translates at the edge, so both versions run the one task machinery and read each other's
// tasks.

// ProtocolVersion03 is the legacy version served beside ProtocolVersion (its A2A-Version
// header's value and its interface's protocolVersion in the card).
const ProtocolVersion03 = "0.3"

// states03 names v1.0's task states as v0.3 does.
var states03 = map[string]string{
	"TASK_STATE_SUBMITTED":     "submitted",
	stateWorking:               "working",
	stateInputRequired:         "input-required",
	stateCompleted:             "completed",
	stateCanceled:              "canceled",
	stateFailed:                "failed",
	"TASK_STATE_REJECTED":      "rejected",
	"TASK_STATE_AUTH_REQUIRED": "auth-required",
	"TASK_STATE_UNSPECIFIED":   "unknown",
	"":                         "unknown",
}

var roles03 = map[string]string{roleAgent: "agent", "ROLE_USER": "user"}

// part03 is a v0.3 Part: a TextPart, FilePart or DataPart told apart by kind.
type part03 struct {
	Kind     string          `json:"kind"`
	Text     *string         `json:"text,omitempty"`
	File     *file03         `json:"file,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`
	Metadata map[string]any  `json:"metadata,omitempty"`
}

// file03 is a FilePart's file: its bytes (base64) or its URI.
type file03 struct {
	Bytes    string `json:"bytes,omitempty"`
	URI      string `json:"uri,omitempty"`
	Name     string `json:"name,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
}

type message03 struct {
	Kind             string         `json:"kind"`
	MessageID        string         `json:"messageId"`
	ContextID        string         `json:"contextId,omitempty"`
	TaskID           string         `json:"taskId,omitempty"`
	Role             string         `json:"role"`
	Parts            []part03       `json:"parts"`
	Metadata         map[string]any `json:"metadata,omitempty"`
	Extensions       []string       `json:"extensions,omitempty"`
	ReferenceTaskIDs []string       `json:"referenceTaskIds,omitempty"`
}

type status03 struct {
	State     string     `json:"state"`
	Message   *message03 `json:"message,omitempty"`
	Timestamp string     `json:"timestamp,omitempty"`
}

type artifact03 struct {
	ArtifactID  string         `json:"artifactId"`
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Parts       []part03       `json:"parts"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

type task03 struct {
	Kind      string         `json:"kind"`
	ID        string         `json:"id"`
	ContextID string         `json:"contextId"`
	Status    status03       `json:"status"`
	Artifacts []artifact03   `json:"artifacts,omitempty"`
	History   []message03    `json:"history,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// sendParams03 are message/send's params (MessageSendParams).
type sendParams03 struct {
	Message       *message03 `json:"message"`
	Configuration *struct {
		HistoryLength *int `json:"historyLength"`
	} `json:"configuration"`
}

// fromMessage03 reads a client's v0.3 message as the v1.0 message the endpoint handles.
func fromMessage03(m *message03) (*Message, error) {
	role := "ROLE_USER"
	if m.Role == "agent" {
		role = roleAgent
	}
	out := &Message{MessageID: m.MessageID, ContextID: m.ContextID, TaskID: m.TaskID, Role: role,
		Metadata: m.Metadata, Extensions: m.Extensions, ReferenceTaskIDs: m.ReferenceTaskIDs}
	for i, p := range m.Parts {
		part, err := fromPart03(p)
		if err != nil {
			return nil, fmt.Errorf("params.message.parts[%d]: %w", i, err)
		}
		out.Parts = append(out.Parts, part)
	}
	return out, nil
}

func fromPart03(p part03) (Part, error) {
	out := Part{Metadata: p.Metadata}
	switch {
	case p.Kind == "text" && p.Text != nil:
		out.Text = *p.Text
	case p.Kind == "data" && len(p.Data) > 0:
		out.Data, out.MediaType = p.Data, "application/json"
	case p.Kind == "file" && p.File != nil && p.File.URI != "":
		out.URL, out.Filename, out.MediaType = p.File.URI, p.File.Name, p.File.MimeType
	case p.Kind == "file" && p.File != nil:
		raw, err := base64.StdEncoding.DecodeString(p.File.Bytes)
		if err != nil {
			return Part{}, fmt.Errorf("file.bytes is not base64: %w", err)
		}
		out.Raw, out.Filename, out.MediaType = raw, p.File.Name, p.File.MimeType
	default:
		return Part{}, fmt.Errorf("a part must be {\"kind\": \"text\", \"text\"}, {\"kind\": \"data\", \"data\"} or {\"kind\": \"file\", \"file\"}")
	}
	return out, nil
}

// toTask03 is a task in its v0.3 form.
func toTask03(t Task) task03 {
	out := task03{Kind: "task", ID: t.ID, ContextID: t.ContextID, Metadata: t.Metadata,
		Status: status03{State: states03[t.Status.State], Timestamp: t.Status.Timestamp}}
	if t.Status.Message != nil {
		m := toMessage03(*t.Status.Message)
		out.Status.Message = &m
	}
	for _, a := range t.Artifacts {
		out.Artifacts = append(out.Artifacts, artifact03{ArtifactID: a.ArtifactID, Name: a.Name, Description: a.Description,
			Parts: toParts03(a.Parts), Metadata: a.Metadata})
	}
	for _, m := range t.History {
		out.History = append(out.History, toMessage03(m))
	}
	return out
}

func toMessage03(m Message) message03 {
	role, ok := roles03[m.Role]
	if !ok {
		role = "user"
	}
	return message03{Kind: "message", MessageID: m.MessageID, ContextID: m.ContextID, TaskID: m.TaskID, Role: role,
		Parts: toParts03(m.Parts), Metadata: m.Metadata, Extensions: m.Extensions, ReferenceTaskIDs: m.ReferenceTaskIDs}
}

func toParts03(parts []Part) []part03 {
	out := make([]part03, 0, len(parts))
	for _, p := range parts {
		out = append(out, toPart03(p))
	}
	return out
}

// toPart03 maps a v1.0 part to v0.3's kinds. A v0.3 data part holds a JSON object only, so
// other JSON (an array, a number) goes as a file of its bytes: the same bytes either way,
// which the receipt's delivery statement binds.
func toPart03(p Part) part03 {
	switch {
	case len(p.Data) > 0 && isObject(p.Data):
		return part03{Kind: "data", Data: p.Data, Metadata: p.Metadata}
	case len(p.Data) > 0:
		return part03{Kind: "file", File: &file03{Bytes: base64.StdEncoding.EncodeToString(p.Data), Name: p.Filename, MimeType: "application/json"}, Metadata: p.Metadata}
	case p.URL != "":
		return part03{Kind: "file", File: &file03{URI: p.URL, Name: p.Filename, MimeType: p.MediaType}, Metadata: p.Metadata}
	case p.Raw != nil:
		return part03{Kind: "file", File: &file03{Bytes: base64.StdEncoding.EncodeToString(p.Raw), Name: p.Filename, MimeType: p.MediaType}, Metadata: p.Metadata}
	}
	text := p.Text
	return part03{Kind: "text", Text: &text, Metadata: p.Metadata}
}

func isObject(b json.RawMessage) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}
