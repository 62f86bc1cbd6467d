package transcribe_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/api/routes/transcribe"
	"github.com/peage/appliance/api/upstream/speech"
	"github.com/peage/appliance/api/upstream/upstreamtest"
	"github.com/peage/appliance/internal/testenv"
)

// ytdlp returns the installed downloader pointed at base; yt-dlp and ffmpeg are installed by
// ops/setup.d/media.sh, and the speech path is not tested without them.
func ytdlp(t *testing.T, base string) *transcribe.YTDLP {
	t.Helper()
	testenv.Needs(t, testenv.Media)
	y := transcribe.FindYTDLP(base)
	if y == nil {
		t.Fatal("yt-dlp or ffmpeg is not installed: run ops/setup.sh (ops/setup.d/media.sh)")
	}
	return y
}

// tone makes a real AAC recording (2 s of a 440 Hz tone, stereo 44.1 kHz) with ffmpeg.
func tone(t *testing.T) []byte {
	testenv.Needs(t, testenv.Media)
	t.Helper()
	out := filepath.Join(t.TempDir(), "tone.m4a")
	cmd := exec.Command("ffmpeg", "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=2", "-ac", "2", "-ar", "44100", "-c:a", "aac", "-f", "mp4", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// videoSite is a local video page: /watch?v=<id> is an HTML page whose <audio> element points
// at the recording, which yt-dlp finds with its generic extractor (the YouTube extractor only
// knows youtube.com); another video is a 404. Any other path fails the test.
func videoSite(t *testing.T, id string, media []byte) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/watch", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("v") != id { // a video the site does not have
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!DOCTYPE html><html><head><title>A tone</title></head><body><audio controls src="/media/tone.m4a" type="audio/mp4"></audio></body></html>`))
	})
	mux.HandleFunc("/media/tone.m4a", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "audio/mp4")
		http.ServeContent(w, r, "tone.m4a", time.Time{}, bytes.NewReader(media))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("unexpected request %s %s", r.Method, r.URL)
		http.NotFound(w, r)
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// probe reads an audio file's codec, channels and sample rate with ffprobe.
func probe(t *testing.T, audio []byte) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "probe")
	if err := os.WriteFile(f, audio, 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := exec.Command("ffprobe", "-v", "error", "-show_entries", "stream=codec_name,channels,sample_rate", "-of", "compact=p=0:nk=0", f).CombinedOutput()
	if err != nil {
		t.Fatalf("ffprobe: %v: %s", err, b)
	}
	return strings.TrimSpace(string(b))
}

const wantAudio = "codec_name=mp3|sample_rate=16000|channels=1"

// TestYTDLPAudio runs the installed yt-dlp against a local video page: the audio comes back as
// the low-bitrate mono mp3 the recogniser is sent; a page without media is an error.
func TestYTDLPAudio(t *testing.T) {
	site := videoSite(t, video, tone(t))
	name, audio, err := ytdlp(t, site.URL).Audio(context.Background(), video)
	if err != nil {
		t.Fatal(err)
	}
	if name != "audio.mp3" || len(audio) == 0 || len(audio) > speech.MaxAudioBytes {
		t.Fatalf("%s: %d bytes", name, len(audio))
	}
	if got := probe(t, audio); got != wantAudio {
		t.Errorf("audio %q, want %q", got, wantAudio)
	}
	if _, _, err := ytdlp(t, site.URL).Audio(context.Background(), "AAAAAAAAAAA"); err == nil || !strings.Contains(err.Error(), "yt-dlp") {
		t.Errorf("a video the site does not have: %v", err)
	}
}

// TestSpeechRecognitionOverYTDLP is the whole speech path with the real downloader: empty
// caption body (the PO-token failure), yt-dlp fetches the audio from the video page, the
// recogniser receives that mp3 and answers its recorded verbose_json.
func TestSpeechRecognitionOverYTDLP(t *testing.T) {
	srv := upstreamtest.New(t)
	recorded(t, srv, upstreamtest.Body(200, "text/xml", nil))
	site := videoSite(t, video, tone(t))
	asrSrv := upstreamtest.New(t)
	rec := upstreamtest.File(t, filepath.Join("..", "..", "upstream", "speech", "testdata", "transcription_verbose_json.json"))
	var sent string
	asrSrv.Expect("/v1/audio/transcriptions", nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseMultipartForm(speech.MaxAudioBytes); err != nil {
			t.Errorf("multipart: %v", err)
		}
		f, fh, err := r.FormFile("file")
		if err != nil {
			t.Fatalf("file: %v", err)
		}
		defer f.Close()
		b, err := io.ReadAll(f)
		if err != nil {
			t.Errorf("read: %v", err)
		}
		if fh.Filename != "audio.mp3" {
			t.Errorf("file name %q", fh.Filename)
		}
		sent = probe(t, b)
		rec.ServeHTTP(w, r)
	}))
	spec := asrSrv.Spec(t, speech.Name)
	spec.Key = "sk-test"
	h, gate := startWith(t, srv, speech.New(asrSrv.Client(t, speech.Name), spec), ytdlp(t, site.URL))
	status, m := get(t, h, "https://www.youtube.com/watch?v="+video)
	if status != 200 || m["source"] != "speech_recognition" || m["language"] != "english" {
		t.Fatalf("status %d %v", status, m)
	}
	if sent != wantAudio {
		t.Errorf("the recogniser was sent %q, want %q", sent, wantAudio)
	}
	if c, w := gate.Counts(); c != 1 || w != 0 {
		t.Errorf("charged %d waived %d", c, w)
	}
}

// TestAudioDownloadFailureIs502 points the downloader at a site without the video: a 502
// saying the audio could not be downloaded, the recogniser never called, nothing charged.
func TestAudioDownloadFailureIs502(t *testing.T) {
	srv := upstreamtest.New(t)
	recorded(t, srv, upstreamtest.Body(200, "text/xml", nil))
	empty := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(empty.Close)
	asrSrv := upstreamtest.New(t) // answers 404 to anything: it must not be asked
	spec := asrSrv.Spec(t, speech.Name)
	spec.Key = "sk-test"
	h, gate := startWith(t, srv, speech.New(asrSrv.Client(t, speech.Name), spec), ytdlp(t, empty.URL))
	status, m := get(t, h, "https://www.youtube.com/watch?v="+video)
	if status != 502 || !strings.Contains(m["error"].(map[string]any)["message"].(string), "audio could not be downloaded") {
		t.Fatalf("status %d %v", status, m)
	}
	if n := len(asrSrv.Requests()); n != 0 {
		t.Errorf("%d recogniser requests", n)
	}
	if c, w := gate.Counts(); c != 0 || w != 1 {
		t.Errorf("charged %d waived %d", c, w)
	}
}
