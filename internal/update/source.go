package update

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"unicode"
)

// LatestName is the manifest a release channel publishes for this platform; the binary is
// the manifest's File beside it.
func LatestName() string { return LatestNameFor(runtime.GOOS, runtime.GOARCH) }

// LatestNameFor is the channel's latest manifest for a platform.
func LatestNameFor(goos, goarch string) string { return "latest-" + goos + "-" + goarch + ".manifest" }

// Fetch reads the channel's latest manifest from source (an https URL or a directory, e.g. a
// USB stick), verifies it, and returns the release with its binary: beside the manifest for
// a directory, downloaded under the store root (as a temporary file CleanTemps removes) for a
// URL. The binary is fetched only after the manifest verifies, and checked against it.
func Fetch(ctx context.Context, source string, keys []PublicKey, s Store, client *http.Client) (*Release, error) {
	if !strings.HasPrefix(source, "https://") && !strings.HasPrefix(source, "http://") {
		return Verify(filepath.Join(source, LatestName()), "", keys)
	}
	if client == nil {
		client = http.DefaultClient
	}
	base := strings.TrimSuffix(source, "/") + "/"
	body, err := get(ctx, client, base+LatestName(), 64<<10)
	if err != nil {
		return nil, err
	}
	sig, err := get(ctx, client, base+LatestName()+".sig", 1<<10)
	if err != nil {
		return nil, err
	}
	rel, err := verifyBytes(body, sig, keys)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(s.Root, 0o755); err != nil {
		return nil, err
	}
	tmp := filepath.Join(s.Root, "download"+tempMark+randomSuffix())
	if err := download(ctx, client, base+rel.Manifest.File, tmp, &rel.Manifest); err != nil {
		os.Remove(tmp)
		return nil, err
	}
	rel.Binary, rel.Download = tmp, true
	return rel, nil
}

func get(ctx context.Context, c *http.Client, url string, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, limit))
}

func download(ctx context.Context, c *http.Client, url, path string, m *Manifest) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := checkContent(io.TeeReader(resp.Body, f), m); err != nil {
		return err
	}
	return f.Close()
}

// CompareVersions orders version strings by their runs of digits as numbers and the rest as
// text ("v0.10.0" > "v0.9.3"); it is how `update run` refuses a downgrade.
func CompareVersions(a, b string) int {
	for a != "" && b != "" {
		ra, rb := nextRun(a), nextRun(b)
		if c := compareRun(ra, rb); c != 0 {
			return c
		}
		a, b = a[len(ra):], b[len(rb):]
	}
	switch {
	case a == b:
		return 0
	case a == "":
		return -1
	}
	return 1
}

func nextRun(s string) string {
	digit := unicode.IsDigit(rune(s[0]))
	i := 1
	for i < len(s) && unicode.IsDigit(rune(s[i])) == digit {
		i++
	}
	return s[:i]
}

func compareRun(a, b string) int {
	if unicode.IsDigit(rune(a[0])) && unicode.IsDigit(rune(b[0])) {
		a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
		if len(a) != len(b) {
			return len(a) - len(b)
		}
	}
	return strings.Compare(a, b)
}
