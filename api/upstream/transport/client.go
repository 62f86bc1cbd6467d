// Package transport is the connector of transport.data.gouv.fr, the national access point
// for transport data.
package transport

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/wire"
)

// Name is the registry name.
const Name = "transport-data-gouv"

// snapshotTTL: /api/datasets takes no query and returns every dataset (several MB); the
// operator asks for it at most every few hours, so one copy serves every query meanwhile.
const snapshotTTL = time.Hour

// Client reads the catalogue.
type Client struct {
	h   *httpc.Client
	now func() time.Time

	mu    sync.Mutex
	snap  []Dataset
	taken time.Time
}

func New(h *httpc.Client) *Client { return &Client{h: h, now: time.Now} }

func (c *Client) Ready() error { return c.h.Ready() }

// Dataset is one catalogue entry.
type Dataset struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Type      string `json:"type"`
	PageURL   string `json:"page_url"`
	Publisher *struct {
		Name string `json:"name"`
	} `json:"publisher"`
	// CoveredArea has been a list of administrative divisions since 2025; older answers
	// (and caches of them) carry one object with a name.
	CoveredArea wire.List[Area] `json:"covered_area"`
	Resources   []Resource      `json:"resources"`
}

// Area is one administrative division a dataset covers.
type Area struct {
	Type  string `json:"type"` // commune, epci, departement, region, pays…
	Insee string `json:"insee"`
	Nom   string `json:"nom"`
	Name  string `json:"name"` // the pre-2025 single-object shape
}

// Label is the area's name in either shape.
func (a Area) Label() string {
	if a.Nom != "" {
		return a.Nom
	}
	return a.Name
}

// AreaNames joins the names of every covered area.
func (d Dataset) AreaNames() string {
	names := make([]string, 0, len(d.CoveredArea))
	for _, a := range d.CoveredArea {
		if l := a.Label(); l != "" {
			names = append(names, l)
		}
	}
	return strings.Join(names, ", ")
}

// Resource is one file or feed of a dataset.
type Resource struct {
	Title               string `json:"title"`
	URL                 string `json:"url"`
	Format              string `json:"format"`
	Updated             string `json:"updated"`
	EndCalendarValidity string `json:"end_calendar_validity"`
}

// Datasets returns the catalogue, from the snapshot when it is fresh.
func (c *Client) Datasets(ctx context.Context) ([]Dataset, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.snap != nil && c.now().Sub(c.taken) < snapshotTTL {
		return c.snap, nil
	}
	var out []Dataset
	if err := c.h.GetJSON(ctx, "/api/datasets", nil, &out); err != nil {
		return nil, err
	}
	c.snap, c.taken = out, c.now()
	return out, nil
}
