// Package speech is the speech-recognition connector: an OpenAI-compatible transcription
// endpoint (POST /v1/audio/transcriptions, multipart), which OpenAI, several hosted providers
// and a self-hosted whisper server (whisper.cpp with --inference-path) all answer. It asks for
// verbose_json with segment timestamps.
package speech

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
)

// Name is the registry name.
const Name = "speech"

// DefaultBaseURL is OpenAI's; another base URL is a self-hosted or hosted compatible server.
const DefaultBaseURL = "https://api.openai.com"

// MaxAudioBytes is the upload limit of the OpenAI API.
const MaxAudioBytes = 25 << 20

// Model asked for; servers that host one model ignore it.
const Model = "whisper-1"

// Client calls the endpoint.
type Client struct {
	h     *httpc.Client
	key   string
	ready error
}

// New builds the client: ready once a key is set or the base URL points elsewhere than
// OpenAI (a self-hosted server needs no key).
func New(h *httpc.Client, spec upstream.Spec) *Client {
	c := &Client{h: h, key: spec.Key}
	if spec.Key == "" && spec.BaseURL == DefaultBaseURL {
		c.ready = fmt.Errorf("speech: %w (set upstream.override.speech.key, or base_url to a self-hosted OpenAI-compatible server)", upstream.ErrNotConfigured)
	}
	return c
}

// Ready is nil when a recogniser is configured.
func (c *Client) Ready() error { return c.ready }

// Segment is one timed segment, in seconds.
type Segment struct {
	Start float64 `json:"start"`
	End   float64 `json:"end"`
	Text  string  `json:"text"`
}

// Transcript is the verbose_json answer.
type Transcript struct {
	Language string    `json:"language"`
	Duration float64   `json:"duration"`
	Text     string    `json:"text"`
	Segments []Segment `json:"segments"`
}

// Transcribe uploads audio (name gives its format by extension, e.g. audio.mp3).
func (c *Client) Transcribe(ctx context.Context, name string, audio []byte) (*Transcript, error) {
	if len(audio) > MaxAudioBytes {
		return nil, fmt.Errorf("speech: audio of %d bytes is over the %d-byte upload limit", len(audio), MaxAudioBytes)
	}
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	for k, v := range map[string]string{"model": Model, "response_format": "verbose_json", "timestamp_granularities[]": "segment"} {
		if err := w.WriteField(k, v); err != nil {
			return nil, err
		}
	}
	fw, err := w.CreateFormFile("file", name)
	if err != nil {
		return nil, err
	}
	if _, err := fw.Write(audio); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	hdr := http.Header{}
	if c.key != "" {
		hdr.Set("Authorization", "Bearer "+c.key)
	}
	r, err := c.h.Send(ctx, httpc.Call{Method: http.MethodPost, Path: "/v1/audio/transcriptions", Body: body.Bytes(),
		ContentType: w.FormDataContentType(), Header: hdr})
	if err != nil {
		return nil, err
	}
	var t Transcript
	if err := json.Unmarshal(r.Body, &t); err != nil {
		return nil, upstream.BadAnswer(Name, "POST /v1/audio/transcriptions", r.Status, httpc.FieldOf(err), err)
	}
	return &t, nil
}
