package search_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/peage/appliance/api/upstream/search"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestSearXNGWebDecodesTheRecordedAnswer(t *testing.T) {
	tests := []struct {
		name     string
		q        search.Query
		language string
	}{
		{"no language", search.Query{Q: "openclaw latest features"}, "all"},
		{"language and country", search.Query{Q: "openclaw latest features", HL: "EN", GL: "us"}, "en-US"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := upstreamtest.New(t)
			srv.Expect("/search", upstreamtest.Query("q", tt.q.Q, "format", "json", "categories", "general", "language", tt.language, "pageno", "1"),
				upstreamtest.File(t, filepath.Join("testdata", "searxng_openclaw_latest_features.json")))
			got, err := search.NewSearXNG(srv.Client(t, search.SearXNGName)).Web(context.Background(), tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if got.Provider != search.SearXNGName || len(got.Organic) != 1 {
				t.Fatalf("answer %+v", got)
			}
			want := search.Organic{Position: 1, Title: "OpenClaw — Personal AI Assistant", URL: "https://openclaw.ai/",
				Snippet: "The AI that actually does things. Clears your inbox, sends emails, manages your calendar, checks you in for flights. All from WhatsApp, Telegram, or any chat ..."}
			if got.Organic[0] != want {
				t.Errorf("result %+v, want %+v", got.Organic[0], want)
			}
			// number_of_results is 0 although a result is listed: the results are what counts.
			if len(got.Related) != 8 || got.Related[0] != "How do i open clawdbot" || got.Related[7] != "Openclaw latest features reddit" {
				t.Errorf("related %q", got.Related)
			}
			if got.AnswerBox != nil || got.KnowledgeGraph != nil {
				t.Errorf("answer box %+v, knowledge graph %+v: the recording has neither", got.AnswerBox, got.KnowledgeGraph)
			}
		})
	}
}
