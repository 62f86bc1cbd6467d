package us_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/routes/us"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/llm/llmtest"
	"github.com/peage/appliance/api/upstream/secedgar"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

// startBrief is start with a model: the recorded SEC answers and the chat-completions
// fixture server.
func startBrief(t *testing.T, gate *apitest.RecordingGate) (*apitest.Harness, *llmtest.Server) {
	t.Helper()
	data, files := upstreamtest.New(t), upstreamtest.New(t)
	expectRecorded(t, data, map[string]http.Handler{
		"/submissions/CIK0000320193.json":           fixture(t, "submissions_CIK0000320193.json"),
		"/api/xbrl/companyfacts/CIK0000320193.json": fixture(t, "companyfacts_CIK0000320193.json.gz"),
	})
	expectRecorded(t, files, map[string]http.Handler{"/files/company_tickers.json": fixture(t, "company_tickers.json.gz")})
	specs := map[string]upstream.Spec{secedgar.Name: data.Spec(t, secedgar.Name), secedgar.FilesName: files.Spec(t, secedgar.FilesName)}
	for name, s := range specs {
		s.Timeout = 30 * time.Second
		specs[name] = s
	}
	pool := httpc.NewPool(specs, httpc.Options{Contact: contact, Logger: quiet})
	srv := llmtest.New(t, llmtest.Config())
	r, err := us.With(us.Parts{Pool: pool, Model: srv.Client(t, llmtest.Config())})
	if err != nil {
		t.Fatal(err)
	}
	return apitest.StartFamily(t, catalog.DefaultNames(), r, apitest.Options{Gate: gate}), srv
}

func postBrief(t *testing.T, h *apitest.Harness, params map[string]any) (int, map[string]any, string) {
	b, _ := json.Marshal(params)
	resp, err := h.Client.Post(h.BaseURL+"/v1/us/brief", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	return resp.StatusCode, m, string(body)
}

func TestBriefCitesFilings(t *testing.T) {
	gate := &apitest.RecordingGate{}
	h, srv := startBrief(t, gate)
	// The first call only captures the fact sheet (its answer cites a source that is not
	// listed, so it fails verification); the second states a figure of that sheet.
	srv.Push(llmtest.JSON(t, map[string]any{"summary": "Apple filed its reports.", "key_points": []any{
		map[string]any{"text": "Apple filed its annual report.", "sources": []int{99}}}}))
	st, _, body := postBrief(t, h, map[string]any{"ticker": "AAPL"})
	if st != 502 || !strings.Contains(body, "citation_rate 0.00") {
		t.Fatalf("unlisted source: %d %s", st, body)
	}
	sheet := srv.Bodies()[0]["messages"].([]any)[1].(map[string]any)["content"].(string)
	line := ""
	for _, l := range strings.Split(sheet, "\n") {
		if strings.HasPrefix(l, "revenue FY") {
			line = l
			break
		}
	}
	if line == "" || !strings.Contains(sheet, "[1] ") {
		t.Fatalf("fact sheet without revenue or sources:\n%s", sheet)
	}
	billions := strings.Fields(strings.SplitN(line, "= ", 2)[1])[0]
	src, _ := strconv.Atoi(strings.Trim(line[strings.LastIndex(line, "["):], "[]"))
	srv.Push(
		llmtest.JSON(t, map[string]any{"summary": "Apple's latest annual report.", "key_points": []any{
			map[string]any{"text": "Revenue was " + billions + " billion USD.", "sources": []int{src}},
			map[string]any{"text": "The company filed periodic reports.", "sources": []int{1}}}}),
		llmtest.JSON(t, map[string]any{"summary": "Apple.", "key_points": []any{
			map[string]any{"text": "Revenue was 999.99 billion USD.", "sources": []int{src}}}}),
	)
	st, m, body := postBrief(t, h, map[string]any{"ticker": "AAPL"})
	if st != 200 {
		t.Fatalf("%d %s", st, body)
	}
	v := m["verification"].(map[string]any)
	if v["citation_rate"] != 1.0 || v["passe"] != true || len(m["sources"].([]any)) == 0 || len(m["metrics"].(map[string]any)["revenue"].([]any)) == 0 {
		t.Errorf("brief %s", body)
	}
	first := m["sources"].([]any)[0].(map[string]any)
	if !strings.HasPrefix(first["url"].(string), "https://www.sec.gov/Archives/edgar/data/320193/") {
		t.Errorf("source %v", first)
	}
	// A figure not on the fact sheet fails verification: no brief, nothing charged.
	st, _, body = postBrief(t, h, map[string]any{"ticker": "AAPL"})
	if st != 502 || !strings.Contains(body, "999.99") {
		t.Errorf("invented figure: %d %s", st, body)
	}
	if c, w := gate.Counts(); c != 1 || w != 2 {
		t.Errorf("charged %d waived %d", c, w)
	}
}
