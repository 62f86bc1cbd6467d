// Package us serves the US company routes over SEC EDGAR: /v1/us/company, /v1/us/filings,
// /v1/us/financials and /v1/us/snapshot. A ticker is turned into a CIK with SEC's own ticker
// file (cached a day by the connector). The routes are unavailable (503 before any 402) until
// upstream.contact is an e-mail address, which SEC requires in every User-Agent.
package us

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/llm"
	"github.com/peage/appliance/api/upstream/secedgar"
)

// Parts are the family's collaborators.
type Parts struct {
	// Pool is the process-wide client pool: every caller of SEC shares its token buckets.
	Pool *httpc.Pool
	// Model writes /v1/us/brief; nil leaves that route unavailable.
	Model *llm.Client
}

// Routes holds the handlers.
type Routes struct {
	sec   *secedgar.Client
	model *llm.Client
}

// With builds the family; the pool must know both SEC hosts.
func With(d Parts) (*Routes, error) {
	data, err := d.Pool.Client(secedgar.Name)
	if err != nil {
		return nil, err
	}
	files, err := d.Pool.Client(secedgar.FilesName)
	if err != nil {
		return nil, err
	}
	return &Routes{sec: secedgar.New(data, files), model: d.Model}, nil
}

// Bind attaches the four handlers.
func (r *Routes) Bind(c *catalog.Catalog) error {
	var errs []error
	for id, h := range map[string]catalog.Handler{
		"us.company": r.company, "us.filings": r.filings, "us.financials": r.financials, "us.snapshot": r.snapshot,
	} {
		errs = append(errs, c.Bind(id, h, r.sec.Ready))
	}
	errs = append(errs, c.Bind("us.brief", r.brief, func() error {
		if err := r.sec.Ready(); err != nil {
			return err
		}
		return r.modelReady()
	}))
	return errors.Join(errs...)
}

// source names where every answer comes from.
const source = "SEC EDGAR (data.sec.gov)"

// tickerLabelWait bounds the wait for the ticker file on calls by CIK.
const tickerLabelWait = 3 * time.Second

// company is who a request is about.
type company struct {
	cik    int64
	ticker string // "" when asked by CIK and SEC's ticker file is not loaded or lists none
}

func (r *Routes) resolve(ctx context.Context, req *catalog.Request) (company, error) {
	if t := req.Args.Str("ticker"); t != "" {
		row, ok, err := r.sec.LookupTicker(ctx, t)
		if err != nil {
			return company{}, err
		}
		if !ok {
			return company{}, apierr.NotFound("SEC's ticker file lists no ticker %s", strings.ToUpper(t))
		}
		return company{cik: row.CIK, ticker: row.Ticker}, nil
	}
	cik, err := strconv.ParseInt(req.Args.Str("cik"), 10, 64)
	if err != nil || cik <= 0 {
		return company{}, apierr.BadParam("cik", "cik must be a positive number of up to 10 digits")
	}
	c := company{cik: cik}
	// The ticker only labels the answer: a ticker file that cannot be read in a moment
	// leaves it out rather than failing or holding up a call by CIK.
	lctx, cancel := context.WithTimeout(ctx, tickerLabelWait)
	defer cancel()
	if ts, err := r.sec.TickersOf(lctx, cik); err == nil && len(ts) > 0 {
		c.ticker = ts[0]
	}
	return c, nil
}

// notFound turns EDGAR's 404 (it answers an S3 NoSuchKey for a CIK it does not know) into ours.
func notFound(err error, cik int64, what string) error {
	if upstream.IsNotFound(err) {
		return apierr.NotFound("SEC EDGAR has no %s for CIK %s", what, secedgar.CIK10(cik))
	}
	return err
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
