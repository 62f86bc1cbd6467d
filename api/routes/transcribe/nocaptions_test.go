package transcribe_test

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/speech"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

// recordedPlayer declares the watch page and the InnerTube player request of video id, the
// player answering the recorded file player (api/upstream/youtube/testdata/PROVENANCE; the
// watch page is the recorded one of GJLlxj_dtq8, as youtube-transcript-api's own tests serve
// it for every video). No caption request is declared: one would fail the test.
func recordedPlayer(t *testing.T, srv *upstreamtest.Server, id, player string) {
	srv.Expect("/watch", upstreamtest.Query("v", id), upstreamtest.File(t, file("watch_"+video+".html.gz")))
	srv.Expect("/youtubei/v1/player", upstreamtest.Query("key", "AIzaSyAO_FJ2SlqU8Q4STEHLGCilw_Y9_11qcW8"), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		if r.Method != http.MethodPost || body["videoId"] != id {
			t.Errorf("player request %s %v", r.Method, body)
		}
		upstreamtest.File(t, file(player)).ServeHTTP(w, r)
	}))
}

// noCaptions is the recorded player answer of dsMFmonKDD4, a playable video whose captions
// are disabled (no "captions" key).
const noCaptions = "dsMFmonKDD4"

func TestNoCaptionsWithoutRecogniserIs502(t *testing.T) {
	srv := upstreamtest.New(t)
	recordedPlayer(t, srv, noCaptions, "player_dsMFmonKDD4_no_captions.json.gz")
	h, gate := start(t, srv, speech.New(nil, upstream.Spec{BaseURL: speech.DefaultBaseURL}))
	status, m := get(t, h, "https://www.youtube.com/watch?v="+noCaptions)
	if status != 502 {
		t.Fatalf("status %d %v", status, m)
	}
	if msg := m["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "the video has no captions") || !strings.Contains(msg, "no speech recogniser is configured") {
		t.Errorf("message %q", msg)
	}
	if c, w := gate.Counts(); c != 0 || w != 1 {
		t.Errorf("charged %d waived %d", c, w)
	}
}

// TestNoCaptionsFallsBackToSpeechRecognition: the recorded player answer without captions,
// then the real yt-dlp on a local video page and the recogniser's recorded answer.
func TestNoCaptionsFallsBackToSpeechRecognition(t *testing.T) {
	srv := upstreamtest.New(t)
	recordedPlayer(t, srv, noCaptions, "player_dsMFmonKDD4_no_captions.json.gz")
	site := videoSite(t, noCaptions, tone(t))
	asrSrv := upstreamtest.New(t)
	asrSrv.Expect("/v1/audio/transcriptions", nil, upstreamtest.File(t, filepath.Join("..", "..", "upstream", "speech", "testdata", "transcription_verbose_json.json")))
	spec := asrSrv.Spec(t, speech.Name)
	spec.Key = "sk-test"
	h, gate := startWith(t, srv, speech.New(asrSrv.Client(t, speech.Name), spec), ytdlp(t, site.URL))
	status, m := get(t, h, "https://youtu.be/"+noCaptions)
	if status != 200 || m["source"] != "speech_recognition" || m["video_id"] != noCaptions || m["captions_problem"] != "the video has no captions" {
		t.Fatalf("status %d %v", status, m)
	}
	if segs, _ := m["segments"].([]any); len(segs) != 2 {
		t.Errorf("segments %v", m["segments"])
	}
	if n := len(asrSrv.Requests()); n != 1 {
		t.Errorf("%d recogniser requests", n)
	}
	if c, w := gate.Counts(); c != 1 || w != 0 {
		t.Errorf("charged %d waived %d", c, w)
	}
}

// TestUnavailableVideoIs404: the recorded player answer of an unavailable video (status ERROR)
// is a 404 naming YouTube's reason; no caption or audio is fetched, nothing is charged.
func TestUnavailableVideoIs404(t *testing.T) {
	srv := upstreamtest.New(t)
	const id = "abcdefghijk"
	recordedPlayer(t, srv, id, "player_video_unavailable.json")
	down := &audioFile{}
	h, gate := startWith(t, srv, nil, down)
	status, m := get(t, h, "https://www.youtube.com/watch?v="+id)
	if status != 404 || !strings.Contains(m["error"].(map[string]any)["message"].(string), "This video is unavailable") {
		t.Fatalf("status %d %v", status, m)
	}
	if len(down.asked) != 0 {
		t.Errorf("audio asked for %v", down.asked)
	}
	if c, w := gate.Counts(); c != 0 || w != 1 {
		t.Errorf("charged %d waived %d", c, w)
	}
}
