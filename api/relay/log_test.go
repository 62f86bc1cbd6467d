package relay_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/relay"
	"github.com/peage/appliance/internal/fleet/box"
	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/internal/obs/obstest"
)

// logLines is a JSON log written by several goroutines.
type logLines struct{ obstest.LogSink }

// find waits (up to 10 s) for a line with msg whose keys hold the values of want.
func (l *logLines) find(t *testing.T, msg string, want map[string]any) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		lines := bytes.Split(l.Bytes(), []byte("\n"))
		for _, line := range lines {
			var rec map[string]any
			if json.Unmarshal(line, &rec) != nil || rec["msg"] != msg {
				continue
			}
			match := true
			for k, v := range want {
				if rec[k] != v {
					match = false
				}
			}
			if match {
				return rec
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q log line with %v in:\n%s", msg, want, l.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLogsNameTheBox: for a relayed call, the gateway's request line names the box that
// served it beside the route and status, and the box logs the call under its name; a 503
// that no box served names none.
func TestLogsNameTheBox(t *testing.T) {
	gwLog, boxLog := &logLines{}, &logLines{}
	gate := &apitest.RecordingGate{}
	g := startGatewayWith(t, apitest.Options{Gate: gate, Logger: slog.New(slog.NewJSONHandler(gwLog, nil))})
	creds, err := g.hub.Enrol("a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := box.Start(t.Context(), box.Config{Credentials: creds, Routes: relay.BoxRoutes(boxCatalog(t)),
		Heartbeat: 100 * time.Millisecond, ProgressEvery: 100 * time.Millisecond, Logger: slog.New(slog.NewJSONHandler(boxLog, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	g.waitServing(relay.RouteName("fr.tva"), 1)

	if status, _, body := g.get(tvaPath, url.Values{"siren": {"542065479"}}); status != http.StatusOK {
		t.Fatalf("fr.tva: %d %s", status, body)
	}
	gwLog.find(t, "request", map[string]any{obs.KeyRoute: "fr.tva", obs.KeyStatus: float64(http.StatusOK), obs.KeyBox: "a"})
	boxLog.find(t, "call", map[string]any{obs.KeyBox: "a", obs.KeyRoute: relay.RouteName("fr.tva"), obs.KeyStatus: "ok"})

	if status, _, body := g.get("/v1/unblock", url.Values{"url": {"https://example.com/"}}); status != http.StatusServiceUnavailable {
		t.Fatalf("unblock with no box: %d %s", status, body)
	}
	if rec := gwLog.find(t, "request", map[string]any{obs.KeyRoute: "unblock", obs.KeyStatus: float64(http.StatusServiceUnavailable)}); rec[obs.KeyBox] != nil {
		t.Errorf("the 503 no box served logs box %v", rec[obs.KeyBox])
	}
}
