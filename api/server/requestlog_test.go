package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/internal/obs/obstest"
)

// requestLevels maps the status of each request line in the log to the line's level.
func requestLevels(t *testing.T, log *obstest.LogSink) map[float64]string {
	t.Helper()
	out := map[float64]string{}
	dec := json.NewDecoder(bytes.NewReader(log.Bytes()))
	for {
		var rec map[string]any
		if err := dec.Decode(&rec); err == io.EOF {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		if rec["msg"] == "request" {
			out[rec[obs.KeyStatus].(float64)] = rec["level"].(string)
		}
	}
}

// TestRefusedRequestsAreDebugLines: the operator's log at info level holds the requests that
// did work or failed; a 402 challenge, a 400 and a 404, which any client can ask for at the
// edge's full rate, are debug lines.
func TestRefusedRequestsAreDebugLines(t *testing.T) {
	cat, _ := catalog.Default(catalog.DefaultNames())
	tva := cat.ByPath("/v1/fr/tva")
	answer := func(context.Context, *catalog.Request) (any, error) { return map[string]any{}, nil }
	_ = cat.Bind(tva.ID, answer, nil)
	_ = cat.Bind(cat.ByPath("/free/kyb").ID, answer, nil)
	var sink obstest.LogSink
	log := slog.New(slog.NewJSONHandler(&sink, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := apitest.Start(t, cat, apitest.Options{Logger: log})
	for path, want := range map[string]int{
		"/v1/fr/tva?siren=542065479": http.StatusPaymentRequired,
		"/v1/fr/tva?siren=123456789": http.StatusBadRequest,
		"/v1/nope":                   http.StatusNotFound,
		"/free/kyb?siren=542065479":  http.StatusOK,
	} {
		resp, err := h.Client.Get(h.BaseURL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("%s: %d, want %d", path, resp.StatusCode, want)
		}
	}
	levels := requestLevels(t, &sink)
	for status, want := range map[float64]string{402: "DEBUG", 400: "DEBUG", 404: "DEBUG", 200: "INFO"} {
		if levels[status] != want {
			t.Errorf("request line of a %v: level %q, want %q (all: %v)", status, levels[status], want, levels)
		}
	}
}
