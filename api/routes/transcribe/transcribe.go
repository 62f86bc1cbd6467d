// Package transcribe serves /v1/transcribe: the transcript of a YouTube video page with
// sentence-level timestamps. The platform's own captions come first (api/upstream/youtube);
// when the video has none, or the caption URL answers 200 with an empty body (the PO-token
// failure), the audio is downloaded (yt-dlp) and sent to the configured speech recogniser
// (api/upstream/speech). `source` says which path answered. Without captions and without a
// recogniser the call is a 502 saying so, not charged. Other platforms are refused (400): the
// audio downloader is only ever pointed at YouTube, whose address the appliance knows.
package transcribe

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream/speech"
	"github.com/peage/appliance/api/upstream/youtube"
)

var errNotYouTube = errors.New("must be a YouTube video page (youtube.com/watch?v=…, youtu.be/…, /shorts/…); other platforms are not supported")

// Recogniser is the speech-recognition endpoint.
type Recogniser interface {
	Ready() error
	Transcribe(ctx context.Context, name string, audio []byte) (*speech.Transcript, error)
}

// Downloader fetches a video's audio track.
type Downloader interface {
	Audio(ctx context.Context, videoID string) (name string, audio []byte, err error)
}

// Routes holds the handler.
type Routes struct {
	yt   *youtube.Client
	asr  Recogniser // nil or unready: no speech path
	down Downloader // nil: no speech path
}

// With builds the route; asr and down may be nil.
func With(yt *youtube.Client, asr Recogniser, down Downloader) *Routes {
	return &Routes{yt: yt, asr: asr, down: down}
}

// Bind attaches the handler: captions need no key, so it is always ready. The catalog's
// video_url format is narrowed to the pages this route reads, so another platform is a 400
// naming url before any 402.
func (r *Routes) Bind(c *catalog.Catalog) error {
	if err := c.RefineFormat("video_url", func(s string) error {
		if _, ok := youtube.VideoID(s); !ok {
			return errNotYouTube
		}
		return nil
	}); err != nil {
		return err
	}
	return c.Bind("transcribe", r.transcribe, nil)
}

// Segment is one sentence with its time span, in seconds.
type Segment struct {
	Start float64 `json:"start"`
	End   float64 `json:"end"`
	Text  string  `json:"text"`
}

// Answer is the answer of /v1/transcribe.
type Answer struct {
	URL             string    `json:"url"`
	Platform        string    `json:"platform"`
	VideoID         string    `json:"video_id"`
	Language        string    `json:"language"`
	DurationSeconds float64   `json:"duration_seconds"`
	Source          string    `json:"source"` // "captions" or "speech_recognition"
	CaptionKind     string    `json:"caption_kind,omitempty"`
	CaptionsProblem string    `json:"captions_problem,omitempty"` // why captions were not used
	Transcript      string    `json:"transcript"`
	Segments        []Segment `json:"segments"`
}

// sentenceEnd reports whether text closes a sentence.
func sentenceEnd(text string) bool {
	t := strings.TrimRight(strings.TrimSpace(text), `"')]»”’`)
	return strings.HasSuffix(t, ".") || strings.HasSuffix(t, "?") || strings.HasSuffix(t, "!") || strings.HasSuffix(t, "…") ||
		strings.HasSuffix(t, "。") || strings.HasSuffix(t, "？") || strings.HasSuffix(t, "！")
}

// maxSentence bounds a sentence of unpunctuated (automatic) captions, in seconds.
const maxSentence = 20.0

// Sentences merges timed fragments into sentences: a sentence ends at closing punctuation, or
// after maxSentence seconds when the text has none.
func Sentences(parts []Segment) []Segment {
	var out []Segment
	var cur *Segment
	for _, p := range parts {
		text := strings.Join(strings.Fields(p.Text), " ")
		if text == "" {
			continue
		}
		if cur == nil {
			out = append(out, Segment{Start: p.Start, End: p.End, Text: text})
			cur = &out[len(out)-1]
		} else {
			cur.Text += " " + text
			cur.End = max(cur.End, p.End)
		}
		if sentenceEnd(text) || cur.End-cur.Start >= maxSentence {
			cur = nil
		}
	}
	for i := range out {
		out[i].Start, out[i].End = round(out[i].Start), round(out[i].End)
	}
	return out
}

func round(f float64) float64 { return math.Round(f*1000) / 1000 }

func joined(segs []Segment) string {
	texts := make([]string, len(segs))
	for i, s := range segs {
		texts[i] = s.Text
	}
	return strings.Join(texts, " ")
}

func (r *Routes) transcribe(ctx context.Context, req *catalog.Request) (any, error) {
	raw := req.Args.Str("url")
	id, ok := youtube.VideoID(raw)
	if !ok {
		return nil, apierr.BadParam("url", "url %s", errNotYouTube) // refused by the format already; kept for direct callers
	}
	ans := Answer{URL: raw, Platform: "youtube", VideoID: id}
	caps, err := r.yt.Captions(ctx, id)
	switch {
	case err == nil:
		parts := make([]Segment, len(caps.Cues))
		for i, c := range caps.Cues {
			parts[i] = Segment{Start: c.Start, End: c.Start + c.Dur, Text: c.Text}
		}
		ans.Source, ans.CaptionKind, ans.Language, ans.DurationSeconds = "captions", caps.Kind, caps.Language, caps.Duration
		ans.Segments = Sentences(parts)
		ans.Transcript = joined(ans.Segments)
		return ans, nil
	case errors.Is(err, youtube.ErrUnplayable):
		return nil, apierr.NotFound("the video %s cannot be played (%v)", id, err)
	case errors.Is(err, youtube.ErrNoCaptions), errors.Is(err, youtube.ErrEmptyCaptions):
		ans.CaptionsProblem = err.Error()
	default:
		return nil, err
	}
	if r.asr == nil || r.asr.Ready() != nil || r.down == nil {
		return nil, apierr.Upstream(speech.Name, err, "the video has no usable captions (%v) and no speech recogniser is configured; nothing was charged", err)
	}
	name, audio, derr := r.down.Audio(ctx, id)
	if derr != nil {
		return nil, apierr.Upstream("youtube", derr, "the video has no usable captions and its audio could not be downloaded; nothing was charged")
	}
	t, terr := r.asr.Transcribe(ctx, name, audio)
	if terr != nil {
		return nil, terr
	}
	parts := make([]Segment, len(t.Segments))
	for i, s := range t.Segments {
		parts[i] = Segment{Start: s.Start, End: s.End, Text: s.Text}
	}
	ans.Source, ans.Language, ans.DurationSeconds = "speech_recognition", t.Language, t.Duration
	ans.Segments = Sentences(parts)
	ans.Transcript = joined(ans.Segments)
	if len(ans.Segments) == 0 {
		ans.Transcript = strings.TrimSpace(t.Text)
	}
	return ans, nil
}

// YTDLP downloads audio with a yt-dlp binary (a current one, with its JavaScript runtime and
// ffmpeg: see ops), as low-bitrate mono mp3 under the recogniser's upload limit.
type YTDLP struct {
	Binary string // path of yt-dlp
	Base   string // the YouTube base URL the video is fetched from
}

// FindYTDLP returns a downloader when yt-dlp is installed with ffmpeg (its audio extraction
// runs ffmpeg: without it every download would fail), nil otherwise.
func FindYTDLP(base string) *YTDLP {
	p, err := exec.LookPath("yt-dlp")
	if err != nil {
		return nil
	}
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		return nil
	}
	return &YTDLP{Binary: p, Base: base}
}

// Audio runs yt-dlp in a temporary directory.
func (y *YTDLP) Audio(ctx context.Context, id string) (string, []byte, error) {
	dir, err := os.MkdirTemp("", "peage-audio-")
	if err != nil {
		return "", nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "audio.%(ext)s")
	cmd := exec.CommandContext(ctx, y.Binary, "--no-playlist", "--quiet", "-f", "bestaudio", "-x", "--audio-format", "mp3",
		"--postprocessor-args", "ffmpeg:-ac 1 -ar 16000 -b:a 32k", "--max-filesize", fmt.Sprint(speech.MaxAudioBytes), "-o", out,
		strings.TrimRight(y.Base, "/")+"/watch?v="+id)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", nil, fmt.Errorf("yt-dlp: %w: %s", err, strings.TrimSpace(string(b)))
	}
	b, err := os.ReadFile(filepath.Join(dir, "audio.mp3"))
	return "audio.mp3", b, err
}
