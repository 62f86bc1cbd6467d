// Package esma is the connector of ESMA's interim MiCA registers: five CSV files (authorised
// CASPs, EMT and ART issuers, white papers of other crypto-assets, non-compliant entities)
// that ESMA republishes about weekly, with no API. The files are downloaded once a day, kept
// on disk under the state directory and in memory; concurrent callers share one refresh, and
// a refresh that fails keeps serving the previous copy with its date.
package esma

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
)

// Name is the registry name of the upstream.
const Name = "esma"

// Folder is where ESMA publishes the files; its name stays "2024-12" while the content is
// refreshed (research: upstreams-geo.md §20). The host is the registry's base URL.
const Folder = "/sites/default/files/2024-12/"

// TTL is how long a copy is trusted before a refresh; retryStale the pause after a failed one.
const (
	TTL        = 24 * time.Hour
	retryStale = 10 * time.Minute
)

// asOfFile records, beside the cached files, when they were downloaded.
const asOfFile = "as_of"

// Snapshot is one consistent download of the five registers.
type Snapshot struct {
	AsOf    time.Time // when the files were downloaded
	Entries []Entry
}

// Client serves the registers.
type Client struct {
	h   *httpc.Client
	dir string // "" keeps the copy in memory only
	now func() time.Time

	mu      sync.Mutex
	snap    *Snapshot
	checked time.Time // last successful refresh, or the time a failed one is retried from
	loading chan struct{}
}

// New builds the connector over the esma client; dir is where the files are cached, now the
// clock (nil is time.Now).
func New(h *httpc.Client, dir string, now func() time.Time) *Client {
	if now == nil {
		now = time.Now
	}
	return &Client{h: h, dir: dir, now: now}
}

// Ready is nil: the registers are public.
func (c *Client) Ready() error { return c.h.Ready() }

// Snapshot returns the registers, downloading them when the copy is older than a day. A copy
// on disk from a previous run is used first. When a download fails, the last copy is served
// (its AsOf says how old it is); with no copy at all the error is returned.
func (c *Client) Snapshot(ctx context.Context) (*Snapshot, error) {
	for {
		c.mu.Lock()
		if c.snap == nil && c.dir != "" {
			if s, err := c.readDisk(); err == nil {
				c.snap, c.checked = s, s.AsOf
			}
		}
		if c.snap != nil && c.now().Sub(c.checked) < TTL {
			s := c.snap
			c.mu.Unlock()
			return s, nil
		}
		if wait := c.loading; wait != nil {
			c.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, &upstream.Error{Upstream: Name, Op: "GET " + Folder, Err: ctx.Err()}
			}
		}
		done := make(chan struct{})
		c.loading = done
		c.mu.Unlock()

		raw, s, err := c.download(ctx)
		if err == nil && c.dir != "" {
			// A copy that cannot be written still serves from memory; the next start
			// downloads again.
			_ = c.writeDisk(raw, s.AsOf)
		}
		c.mu.Lock()
		c.loading = nil
		close(done)
		if err == nil {
			c.snap, c.checked = s, s.AsOf
		} else if c.snap != nil {
			c.checked = c.now().Add(retryStale - TTL) // try again in a few minutes, not at every call
		}
		s = c.snap
		c.mu.Unlock()
		if s == nil {
			return nil, err
		}
		return s, nil
	}
}

// download fetches and parses the five files; one failure fails the refresh, so a snapshot
// never mixes two publication dates.
func (c *Client) download(ctx context.Context) (map[string][]byte, *Snapshot, error) {
	raw := map[string][]byte{}
	for _, f := range Files {
		resp, err := c.h.Do(ctx, "GET", Folder+f.File, nil, nil)
		if err != nil {
			return nil, nil, err
		}
		raw[f.File] = resp.Body
	}
	s, err := parseAll(raw, c.now())
	if err != nil {
		return nil, nil, err
	}
	return raw, s, nil
}

func parseAll(raw map[string][]byte, asOf time.Time) (*Snapshot, error) {
	s := &Snapshot{AsOf: asOf.UTC()}
	for _, f := range Files {
		t, err := ParseCSV(raw[f.File])
		if err != nil {
			return nil, upstream.BadAnswer(Name, "GET "+Folder+f.File, 200, "", err)
		}
		s.Entries = append(s.Entries, entries(f.Register, t)...)
	}
	return s, nil
}

func (c *Client) readDisk() (*Snapshot, error) {
	b, err := os.ReadFile(filepath.Join(c.dir, asOfFile))
	if err != nil {
		return nil, err
	}
	asOf, err := time.Parse(time.RFC3339, strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", asOfFile, err)
	}
	raw := map[string][]byte{}
	for _, f := range Files {
		if raw[f.File], err = os.ReadFile(filepath.Join(c.dir, f.File)); err != nil {
			return nil, err
		}
	}
	return parseAll(raw, asOf)
}

// writeDisk replaces the cached files, each through a temporary file and a rename; the date
// is written last, so a copy interrupted midway is older files with the older date or is
// refused at the next start for a missing file.
func (c *Client) writeDisk(raw map[string][]byte, asOf time.Time) error {
	if err := os.MkdirAll(c.dir, 0o750); err != nil {
		return err
	}
	var errs []error
	for _, f := range Files {
		errs = append(errs, writeFile(filepath.Join(c.dir, f.File), raw[f.File]))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return writeFile(filepath.Join(c.dir, asOfFile), []byte(asOf.UTC().Format(time.RFC3339)+"\n"))
}

func writeFile(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o640); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
