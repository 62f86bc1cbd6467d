package transcribe

import (
	"github.com/peage/appliance/api/family"
	"github.com/peage/appliance/api/upstream/speech"
	"github.com/peage/appliance/api/upstream/youtube"
)

// New builds /v1/transcribe: YouTube captions always; speech recognition when a recogniser
// is configured and yt-dlp is installed.
func New(d family.Deps) (*Routes, error) {
	yh, err := d.Pool.Client(youtube.Name)
	if err != nil {
		return nil, err
	}
	sh, err := d.Pool.Client(speech.Name)
	if err != nil {
		return nil, err
	}
	var down Downloader
	if y := FindYTDLP(d.Upstreams[youtube.Name].BaseURL); y != nil {
		down = y
	}
	return With(youtube.New(yh), speech.New(sh, d.Upstreams[speech.Name]), down), nil
}
