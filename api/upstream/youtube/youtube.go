// Package youtube reads a video's own captions: the watch page gives the InnerTube API key,
// the InnerTube player (with the ANDROID client context, whose caption URLs still answer
// without a player-generated PO token) lists the caption tracks, and the timedtext URL of the
// chosen track gives the cues (XML <text start dur>).
//
// Since mid-2025 the WEB client's caption URLs answer HTTP 200 with an empty body unless a PO
// token is attached; an empty body from any client is ErrEmptyCaptions, which the route
// treats as "no captions, try speech recognition", never as an empty transcript.
package youtube

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
)

// Name is the registry name.
const Name = "youtube"

// Errors that are answers, not failures.
var (
	ErrNoCaptions    = errors.New("the video has no captions")
	ErrEmptyCaptions = errors.New("the caption URL answered 200 with an empty body (a PO token is required)")
	ErrUnplayable    = errors.New("the video is not playable")
)

// innertubeContext is the client the player is asked as (see the package comment).
var innertubeContext = map[string]any{"client": map[string]any{"clientName": "ANDROID", "clientVersion": "20.10.38"}}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{11}$`)

// VideoID extracts the id of a YouTube video page URL (watch?v=, youtu.be/, shorts/, embed/,
// live/); ok is false for any other URL.
func VideoID(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return "", false
	}
	host := strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
	host = strings.TrimPrefix(host, "m.")
	var id string
	switch host {
	case "youtube.com", "music.youtube.com":
		if u.Path == "/watch" {
			id = u.Query().Get("v")
		} else if p := strings.Split(strings.Trim(u.Path, "/"), "/"); len(p) == 2 && (p[0] == "shorts" || p[0] == "embed" || p[0] == "live") {
			id = p[1]
		}
	case "youtu.be":
		id = strings.Trim(u.Path, "/")
	}
	return id, idPattern.MatchString(id)
}

// Client calls YouTube through the registry's client.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

// Cue is one caption cue, in seconds.
type Cue struct {
	Start, Dur float64
	Text       string
}

// Captions are a track's cues.
type Captions struct {
	VideoID  string
	Language string
	Kind     string // "manual" or "auto"
	Duration float64
	Cues     []Cue
}

type track struct {
	BaseURL      string `json:"baseUrl"`
	LanguageCode string `json:"languageCode"`
	Kind         string `json:"kind"`
}

type player struct {
	PlayabilityStatus struct {
		Status string `json:"status"`
		Reason string `json:"reason"`
	} `json:"playabilityStatus"`
	Captions *struct {
		Renderer struct {
			Tracks []track `json:"captionTracks"`
		} `json:"playerCaptionsTracklistRenderer"`
	} `json:"captions"`
	VideoDetails struct {
		LengthSeconds string `json:"lengthSeconds"`
	} `json:"videoDetails"`
}

var apiKey = regexp.MustCompile(`"INNERTUBE_API_KEY":\s*"([a-zA-Z0-9_-]+)"`)

// pick prefers a manual track in the language of the automatic one (the spoken language),
// then the automatic track, then the first.
func pick(tracks []track) track {
	var asr *track
	for i := range tracks {
		if tracks[i].Kind == "asr" {
			asr = &tracks[i]
			break
		}
	}
	if asr != nil {
		for _, t := range tracks {
			if t.Kind != "asr" && t.LanguageCode == asr.LanguageCode {
				return t
			}
		}
		return *asr
	}
	return tracks[0]
}

type timedtext struct {
	Texts []struct {
		Start string `xml:"start,attr"`
		Dur   string `xml:"dur,attr"`
		Text  string `xml:",chardata"`
	} `xml:"text"`
}

var tagRe = regexp.MustCompile(`<[^>]*>`)

// Captions reads the captions of video id.
func (c *Client) Captions(ctx context.Context, id string) (*Captions, error) {
	page, err := c.h.Do(ctx, http.MethodGet, "/watch", url.Values{"v": {id}}, nil)
	if err != nil {
		return nil, err
	}
	m := apiKey.FindSubmatch(page.Body)
	if m == nil {
		return nil, upstream.BadAnswer(Name, "GET /watch", page.Status, "INNERTUBE_API_KEY", errors.New("no InnerTube key in the watch page (consent page or block)"))
	}
	body, _ := json.Marshal(map[string]any{"context": innertubeContext, "videoId": id})
	r, err := c.h.Send(ctx, httpc.Call{Method: http.MethodPost, Path: "/youtubei/v1/player", Query: url.Values{"key": {string(m[1])}}, Body: body})
	if err != nil {
		return nil, err
	}
	var p player
	if err := json.Unmarshal(r.Body, &p); err != nil {
		return nil, upstream.BadAnswer(Name, "POST /youtubei/v1/player", r.Status, httpc.FieldOf(err), err)
	}
	if s := p.PlayabilityStatus.Status; s != "OK" {
		return nil, fmt.Errorf("%w: %s %s", ErrUnplayable, s, p.PlayabilityStatus.Reason)
	}
	if p.Captions == nil || len(p.Captions.Renderer.Tracks) == 0 {
		return nil, ErrNoCaptions
	}
	t := pick(p.Captions.Renderer.Tracks)
	tu, err := url.Parse(strings.Replace(t.BaseURL, "&fmt=srv3", "", 1))
	if err != nil {
		return nil, upstream.BadAnswer(Name, "POST /youtubei/v1/player", r.Status, "captions.captionTracks.baseUrl", err)
	}
	cr, err := c.h.Do(ctx, http.MethodGet, tu.Path, tu.Query(), nil)
	if err != nil {
		return nil, err
	}
	if len(strings.TrimSpace(string(cr.Body))) == 0 {
		return nil, ErrEmptyCaptions
	}
	var tt timedtext
	if err := xml.Unmarshal(cr.Body, &tt); err != nil {
		return nil, upstream.BadAnswer(Name, "GET "+tu.Path, cr.Status, "transcript", err)
	}
	out := &Captions{VideoID: id, Language: t.LanguageCode, Kind: map[bool]string{true: "auto", false: "manual"}[t.Kind == "asr"]}
	out.Duration, _ = strconv.ParseFloat(p.VideoDetails.LengthSeconds, 64)
	for _, x := range tt.Texts {
		text := strings.TrimSpace(tagRe.ReplaceAllString(html.UnescapeString(x.Text), ""))
		if text == "" {
			continue
		}
		start, _ := strconv.ParseFloat(x.Start, 64)
		dur, _ := strconv.ParseFloat(x.Dur, 64)
		out.Cues = append(out.Cues, Cue{Start: start, Dur: dur, Text: text})
	}
	if len(out.Cues) == 0 {
		return nil, ErrEmptyCaptions
	}
	return out, nil
}
