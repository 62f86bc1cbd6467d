package speech_test

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/peage/appliance/api/upstream/speech"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

// Fixture is the recorded verbose_json answer of api.openai.com (testdata/PROVENANCE).
var Fixture = filepath.Join("testdata", "transcription_verbose_json.json")

// ServeRecorded makes srv answer the recorded transcription to the request Transcribe sends,
// after checking the multipart form: model, verbose_json, segment timestamps and the file.
func ServeRecorded(t *testing.T, srv *upstreamtest.Server, wantAuth, wantFile string, wantAudio []byte) {
	t.Helper()
	rec := upstreamtest.File(t, Fixture)
	srv.Expect("/v1/audio/transcriptions", nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			t.Errorf("method %s", r.Method)
		}
		if err := r.ParseMultipartForm(speech.MaxAudioBytes); err != nil {
			t.Errorf("multipart: %v", err)
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		for k, v := range map[string]string{"model": speech.Model, "response_format": "verbose_json", "timestamp_granularities[]": "segment"} {
			if got := r.FormValue(k); got != v {
				t.Errorf("field %s = %q, want %q", k, got, v)
			}
		}
		f, fh, err := r.FormFile("file")
		if err != nil {
			t.Errorf("file: %v", err)
		} else {
			defer f.Close()
			buf := make([]byte, len(wantAudio)+1)
			n, _ := f.Read(buf)
			if fh.Filename != wantFile || string(buf[:n]) != string(wantAudio) {
				t.Errorf("file %q with %d bytes, want %q with %d", fh.Filename, n, wantFile, len(wantAudio))
			}
		}
		if got := r.Header.Get("Authorization"); got != wantAuth {
			t.Errorf("authorization %q", got)
		}
		rec.ServeHTTP(w, r)
	}))
}

func TestTranscribeDecodesTheRecordedAnswer(t *testing.T) {
	srv := upstreamtest.New(t)
	audio := []byte("ID3 fake audio bytes")
	ServeRecorded(t, srv, "Bearer sk-test", "audio.mp3", audio)
	spec := srv.Spec(t, speech.Name)
	spec.Key = "sk-test"
	c := speech.New(srv.Client(t, speech.Name), spec)
	if err := c.Ready(); err != nil {
		t.Fatal(err)
	}
	got, err := c.Transcribe(context.Background(), "audio.mp3", audio)
	if err != nil {
		t.Fatal(err)
	}
	if got.Language != "english" || got.Duration != 10.039999961853027 {
		t.Errorf("language %q duration %v", got.Language, got.Duration)
	}
	if got.Text != "My thought, I have nobody by a beauty and will as you t'ward. Mr. Rochester is sub, and that so don't find simpus, And devoted abode, to hath might in a" {
		t.Errorf("text %q", got.Text)
	}
	want := []speech.Segment{
		{Start: 0, End: 4.079999923706055, Text: " My thought, I have nobody by a beauty and will as you t'ward."},
		{Start: 4.079999923706055, End: 7.480000019073486, Text: " Mr. Rochester is sub, and that so don't find simpus,"},
		{Start: 7.480000019073486, End: 9.960000038146973, Text: " And devoted abode, to hath might in a"},
	}
	if len(got.Segments) != len(want) {
		t.Fatalf("segments %v", got.Segments)
	}
	for i := range want {
		if got.Segments[i] != want[i] {
			t.Errorf("segment %d: %+v, want %+v", i, got.Segments[i], want[i])
		}
	}
}

func TestTranscribeRefusesAudioOverTheLimit(t *testing.T) {
	srv := upstreamtest.New(t)
	c := speech.New(srv.Client(t, speech.Name), srv.Spec(t, speech.Name))
	if _, err := c.Transcribe(context.Background(), "audio.mp3", make([]byte, speech.MaxAudioBytes+1)); err == nil {
		t.Fatal("no error for an oversized upload")
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d upstream requests", n)
	}
}
