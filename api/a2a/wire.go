package a2a

import "encoding/json"

// The A2A v1.0 objects in their JSON form (specification/a2a.proto mapped by ProtoJSON: camel
// case names, enums by their full names, bytes in base64), as far as this endpoint reads and
// writes them.

// Task states and roles, as ProtoJSON names the enums' values.
const (
	stateWorking       = "TASK_STATE_WORKING"
	stateCompleted     = "TASK_STATE_COMPLETED"
	stateFailed        = "TASK_STATE_FAILED"
	stateCanceled      = "TASK_STATE_CANCELED"
	stateInputRequired = "TASK_STATE_INPUT_REQUIRED"

	roleAgent = "ROLE_AGENT"
)

// terminal reports whether a task in this state takes no more messages.
func terminal(state string) bool {
	return state == stateCompleted || state == stateFailed || state == stateCanceled
}

// Part is one piece of a message or an artifact: exactly one of text, raw, url or data.
type Part struct {
	Text      string          `json:"text,omitempty"`
	Raw       []byte          `json:"raw,omitempty"`
	URL       string          `json:"url,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	Metadata  map[string]any  `json:"metadata,omitempty"`
	Filename  string          `json:"filename,omitempty"`
	MediaType string          `json:"mediaType,omitempty"`
}

// Message is one turn of a conversation.
type Message struct {
	MessageID        string         `json:"messageId"`
	ContextID        string         `json:"contextId,omitempty"`
	TaskID           string         `json:"taskId,omitempty"`
	Role             string         `json:"role"`
	Parts            []Part         `json:"parts"`
	Metadata         map[string]any `json:"metadata,omitempty"`
	Extensions       []string       `json:"extensions,omitempty"`
	ReferenceTaskIDs []string       `json:"referenceTaskIds,omitempty"`
}

// TaskStatus is a task's state, with the agent's message about it.
type TaskStatus struct {
	State     string   `json:"state"`
	Message   *Message `json:"message,omitempty"`
	Timestamp string   `json:"timestamp,omitempty"`
}

// Artifact is an output of a task.
type Artifact struct {
	ArtifactID  string         `json:"artifactId"`
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Parts       []Part         `json:"parts"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// Task is the unit of work a message creates.
type Task struct {
	ID        string         `json:"id"`
	ContextID string         `json:"contextId"`
	Status    TaskStatus     `json:"status"`
	Artifacts []Artifact     `json:"artifacts,omitempty"`
	History   []Message      `json:"history,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// sendParams are SendMessage's params (SendMessageRequest).
type sendParams struct {
	Message       *Message `json:"message"`
	Configuration *struct {
		HistoryLength *int `json:"historyLength"`
	} `json:"configuration"`
}

// taskParams are GetTask's and CancelTask's params.
type taskParams struct {
	ID            string `json:"id"`
	HistoryLength *int   `json:"historyLength"`
}
