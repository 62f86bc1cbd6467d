package transcribe_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/routes/transcribe"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/speech"
	"github.com/peage/appliance/api/upstream/upstreamtest"
	"github.com/peage/appliance/api/upstream/youtube"
	"github.com/peage/appliance/internal/obs"
)

var quiet = obs.Discard()

func file(name string) string {
	return filepath.Join("..", "..", "upstream", "youtube", "testdata", name)
}

const video = "GJLlxj_dtq8"

// recorded declares the watch page, the player and the timedtext request of the recorded
// video; the timedtext query is the one of the chosen track's baseUrl in the recorded player
// answer (English, manual), without &fmt=srv3. caption is the timedtext answer.
func recorded(t *testing.T, srv *upstreamtest.Server, caption http.Handler) {
	srv.Expect("/watch", upstreamtest.Query("v", video), upstreamtest.File(t, file("watch_"+video+".html.gz")))
	srv.Expect("/youtubei/v1/player", upstreamtest.Query("key", "AIzaSyAO_FJ2SlqU8Q4STEHLGCilw_Y9_11qcW8"), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		client := body["context"].(map[string]any)["client"].(map[string]any)
		if r.Method != http.MethodPost || body["videoId"] != video || client["clientName"] != "ANDROID" {
			t.Errorf("player request %s %v", r.Method, body)
		}
		upstreamtest.File(t, file("player_"+video+".json")).ServeHTTP(w, r)
	}))
	b, err := os.ReadFile(file("player_" + video + ".json"))
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Captions struct {
			R struct {
				Tracks []struct {
					BaseURL, LanguageCode, Kind string
				} `json:"captionTracks"`
			} `json:"playerCaptionsTracklistRenderer"`
		} `json:"captions"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	for _, tr := range p.Captions.R.Tracks {
		if tr.LanguageCode == "en" && tr.Kind == "" {
			u, _ := url.Parse(strings.Replace(tr.BaseURL, "&fmt=srv3", "", 1))
			srv.Expect(u.Path, u.Query(), caption)
			return
		}
	}
	t.Fatal("the recorded player has no manual English track")
}

func start(t *testing.T, srv *upstreamtest.Server, asr transcribe.Recogniser) (*apitest.Harness, *apitest.RecordingGate) {
	return startWith(t, srv, asr, nil)
}

// startWith is start with a downloader of the audio (nil: none, as without yt-dlp).
func startWith(t *testing.T, srv *upstreamtest.Server, asr transcribe.Recogniser, down transcribe.Downloader) (*apitest.Harness, *apitest.RecordingGate) {
	t.Helper()
	h, err := httpc.NewPool(map[string]upstream.Spec{youtube.Name: srv.Spec(t, youtube.Name)}, httpc.Options{Logger: quiet}).Client(youtube.Name)
	if err != nil {
		t.Fatal(err)
	}
	gate := &apitest.RecordingGate{}
	return apitest.StartFamily(t, catalog.DefaultNames(), transcribe.With(youtube.New(h), asr, down), apitest.Options{Gate: gate}), gate
}

func get(t *testing.T, h *apitest.Harness, target string) (int, map[string]any) {
	t.Helper()
	resp, err := h.Client.Get(h.BaseURL + "/v1/transcribe?url=" + url.QueryEscape(target))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s", b)
	}
	return resp.StatusCode, m
}

func TestCaptions(t *testing.T) {
	srv := upstreamtest.New(t)
	recorded(t, srv, upstreamtest.Body(200, "text/xml", mustRead(t, file("timedtext.xml"))))
	h, gate := start(t, srv, nil)
	status, m := get(t, h, "https://www.youtube.com/watch?v="+video)
	if status != 200 {
		t.Fatalf("status %d %v", status, m)
	}
	if m["source"] != "captions" || m["caption_kind"] != "manual" || m["language"] != "en" || m["duration_seconds"] != 316.0 || m["platform"] != "youtube" {
		t.Errorf("answer %v", m)
	}
	want := "Hey, this is just a test this is not the original transcript just something shorter, I made up for testing"
	if m["transcript"] != want {
		t.Errorf("transcript %q", m["transcript"])
	}
	segs := m["segments"].([]any)
	if len(segs) != 1 || segs[0].(map[string]any)["start"] != 0.0 || segs[0].(map[string]any)["end"] != 8.939 {
		t.Errorf("segments %v", segs)
	}
	if c, w := gate.Counts(); c != 1 || w != 0 {
		t.Errorf("charged %d waived %d", c, w)
	}
}

func TestEmptyCaptionBodyWithoutRecogniserIs502(t *testing.T) {
	srv := upstreamtest.New(t)
	recorded(t, srv, upstreamtest.Body(200, "text/xml", nil)) // the PO-token failure: 200, empty body
	unready := speech.New(nil, upstream.Spec{BaseURL: speech.DefaultBaseURL})
	h, gate := start(t, srv, unready)
	status, m := get(t, h, "https://youtu.be/"+video)
	if status != 502 {
		t.Fatalf("status %d %v", status, m)
	}
	msg := m["error"].(map[string]any)["message"].(string)
	if !strings.Contains(msg, "no speech recogniser is configured") || !strings.Contains(msg, "empty body") {
		t.Errorf("message %q", msg)
	}
	if c, w := gate.Counts(); c != 0 || w != 1 {
		t.Errorf("charged %d waived %d", c, w)
	}
}

// TestNotAYouTubePageIs400 runs behind the challenge-only gate: another platform, a malformed
// id or another host is a 400 naming url before any 402; a YouTube page is the challenge.
func TestNotAYouTubePageIs400(t *testing.T) {
	srv := upstreamtest.New(t)
	yh, err := httpc.NewPool(map[string]upstream.Spec{youtube.Name: srv.Spec(t, youtube.Name)}, httpc.Options{Logger: quiet}).Client(youtube.Name)
	if err != nil {
		t.Fatal(err)
	}
	h := apitest.StartFamily(t, catalog.DefaultNames(), transcribe.With(youtube.New(yh), nil, nil), apitest.Options{Gate: paywall.ChallengeOnly{}})
	for _, u := range []string{"https://vimeo.com/123", "https://www.youtube.com/watch?v=short", "http://169.254.169.254/watch?v=" + video, "https://www.youtube.com/channel/UC123"} {
		status, m := get(t, h, u)
		if status != 400 || apitest.At(m, "error", "param") != "url" {
			t.Errorf("%s: %d %v", u, status, m)
		}
	}
	for _, u := range []string{"https://www.youtube.com/watch?v=" + video, "https://youtu.be/" + video, "https://www.youtube.com/shorts/" + video} {
		if status, m := get(t, h, u); status != 402 {
			t.Errorf("%s: %d %v, want the 402 challenge", u, status, m)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d upstream requests", n)
	}
}

func TestSentences(t *testing.T) {
	got := transcribe.Sentences([]transcribe.Segment{
		{Start: 0, End: 1.5, Text: "Hello there."}, {Start: 1.5, End: 3, Text: "How are"}, {Start: 3, End: 4, Text: "you?"},
		{Start: 4, End: 30, Text: "no punctuation at all"}, {Start: 30, End: 31, Text: "next"},
	})
	want := []transcribe.Segment{{0, 1.5, "Hello there."}, {1.5, 4, "How are you?"}, {4, 30, "no punctuation at all"}, {30, 31, "next"}}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: %v, want %v", i, got[i], want[i])
		}
	}
}

func mustRead(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// audioFile stands in for yt-dlp (a local binary, not an upstream): it hands over fixed bytes
// and records which video was asked for.
type audioFile struct {
	asked []string
	audio []byte
}

func (a *audioFile) Audio(_ context.Context, id string) (string, []byte, error) {
	a.asked = append(a.asked, id)
	return id + ".mp3", a.audio, nil
}

// TestEmptyCaptionBodyFallsBackToSpeechRecognition replays the PO-token failure (200, empty
// caption body), then the recorded verbose_json answer of api.openai.com
// (api/upstream/speech/testdata/PROVENANCE) to the multipart upload of the downloaded audio.
func TestEmptyCaptionBodyFallsBackToSpeechRecognition(t *testing.T) {
	srv := upstreamtest.New(t)
	recorded(t, srv, upstreamtest.Body(200, "text/xml", nil))
	asrSrv := upstreamtest.New(t)
	down := &audioFile{audio: []byte("recorded audio bytes")}
	rec := upstreamtest.File(t, filepath.Join("..", "..", "upstream", "speech", "testdata", "transcription_verbose_json.json"))
	asrSrv.Expect("/v1/audio/transcriptions", nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseMultipartForm(speech.MaxAudioBytes); err != nil {
			t.Errorf("multipart: %v", err)
		}
		if r.Method != http.MethodPost || r.FormValue("response_format") != "verbose_json" || r.FormValue("model") != speech.Model {
			t.Errorf("request %s %v", r.Method, r.MultipartForm.Value)
		}
		if _, fh, err := r.FormFile("file"); err != nil || fh.Filename != video+".mp3" || fh.Size != int64(len(down.audio)) {
			t.Errorf("file %v %v", fh, err)
		}
		rec.ServeHTTP(w, r)
	}))
	spec := asrSrv.Spec(t, speech.Name)
	spec.Key = "sk-test"
	hs, gate := startWith(t, srv, speech.New(asrSrv.Client(t, speech.Name), spec), down)

	status, m := get(t, hs, "https://www.youtube.com/watch?v="+video)
	if status != 200 {
		t.Fatalf("status %d %v", status, m)
	}
	if m["source"] != "speech_recognition" || m["language"] != "english" || m["duration_seconds"] != 10.039999961853027 {
		t.Errorf("answer %v", m)
	}
	if p, _ := m["captions_problem"].(string); !strings.Contains(p, "empty") {
		t.Errorf("captions_problem %q", p)
	}
	wantText := "My thought, I have nobody by a beauty and will as you t'ward. Mr. Rochester is sub, and that so don't find simpus, And devoted abode, to hath might in a"
	if m["transcript"] != wantText {
		t.Errorf("transcript %q", m["transcript"])
	}
	// Whisper's three segments become two sentences: the first ends with a full stop, the
	// other two are one unfinished sentence.
	segs, _ := m["segments"].([]any)
	want := []map[string]any{
		{"start": 0.0, "end": 4.08, "text": "My thought, I have nobody by a beauty and will as you t'ward."},
		{"start": 4.08, "end": 9.96, "text": "Mr. Rochester is sub, and that so don't find simpus, And devoted abode, to hath might in a"},
	}
	if len(segs) != len(want) {
		t.Fatalf("segments %v", segs)
	}
	for i, w := range want {
		s := segs[i].(map[string]any)
		for k, v := range w {
			if s[k] != v {
				t.Errorf("segment %d %s = %v, want %v", i, k, s[k], v)
			}
		}
	}
	if len(down.asked) != 1 || down.asked[0] != video {
		t.Errorf("audio asked for %v", down.asked)
	}
	if c, w := gate.Counts(); c != 1 || w != 0 {
		t.Errorf("charged %d waived %d", c, w)
	}
}
