// Package loyers is the connector of the "Carte des loyers" (ministry of housing and ANIL):
// the modelled asking rent per m² of every commune, charges included, unfurnished, one CSV
// per dwelling type and edition on static.data.gouv.fr. A file is read whole (about 5 MB,
// 35 000 communes), kept a day, and one refresh is shared by concurrent callers.
package loyers

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/wire"
)

// Name is the registry name.
const Name = "carte-loyers"

// Edition is the edition read, and the files of its two tables under the base URL.
const Edition = "2025"

// Files of the 2025 edition (rents as of Q3 2025), by dwelling type.
var Files = map[string]string{
	"appartement": "/20251211-145010/pred-app-mef-dhup.csv",
	"maison":      "/20251211-145039/pred-mai-mef-dhup.csv",
}

// Rent is one commune's modelled rent.
type Rent struct {
	Insee    string
	Commune  string
	PerM2    float64 // €/m²/month, charges included
	Low      float64 // 95 % prediction interval
	High     float64
	Level    string // commune (enough listings in the commune) or maille (a group of communes)
	Listings int    // listings observed in the commune
}

// Client reads and keeps the tables.
type Client struct {
	h   *httpc.Client
	now func() time.Time

	mu     sync.Mutex
	tables map[string]*table
}

type table struct {
	at    time.Time
	rents map[string]Rent
	done  chan struct{} // closed when the refresh in flight ends
	err   error
}

// keep is how long a table is served before it is read again.
const keep = 24 * time.Hour

func New(h *httpc.Client) *Client { return &Client{h: h, now: time.Now, tables: map[string]*table{}} }

func (c *Client) Ready() error { return c.h.Ready() }

// ErrNoRent means the table has no row for the commune.
var ErrNoRent = errors.New("the rent map has no row for this commune")

// Rent is the rent of a dwelling of typ (appartement or maison) in insee (arrondissement
// codes in Paris, Lyon and Marseille, as the tables have them).
func (c *Client) Rent(ctx context.Context, typ, insee string) (Rent, error) {
	path, ok := Files[typ]
	if !ok {
		return Rent{}, fmt.Errorf("loyers: no table for %q", typ)
	}
	rents, err := c.table(ctx, path)
	if err != nil {
		return Rent{}, err
	}
	r, ok := rents[insee]
	if !ok {
		return Rent{}, ErrNoRent
	}
	return r, nil
}

// table returns the parsed file at path, reading it when absent or older than keep; callers
// arriving during a read wait for it. A failed read is not kept.
func (c *Client) table(ctx context.Context, path string) (map[string]Rent, error) {
	c.mu.Lock()
	t := c.tables[path]
	if t != nil {
		select {
		case <-t.done:
			if t.err == nil && c.now().Sub(t.at) < keep {
				c.mu.Unlock()
				return t.rents, nil
			}
			t = nil
		default:
		}
	}
	if t == nil {
		t = &table{done: make(chan struct{})}
		c.tables[path] = t
		go c.refresh(path, t)
	}
	c.mu.Unlock()
	select {
	case <-t.done:
		return t.rents, t.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// refresh reads one file under its own deadline, so that a caller giving up does not fail
// the read for the others.
func (c *Client) refresh(path string, t *table) {
	defer close(t.done)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := c.h.Do(ctx, "GET", path, nil, nil)
	if err != nil {
		t.err = err
		return
	}
	rents, err := Parse(r.Body)
	if err != nil {
		t.err = upstream.BadAnswer(Name, "GET "+path, r.Status, wire.MissingField(err), err)
		return
	}
	t.rents, t.at = rents, c.now()
}

// MissingColumn is a table whose header lacks a column the parser needs.
type MissingColumn = wire.MissingColumn

// Parse reads a table: ';' separated, decimal commas, quoted text, in Windows-1252 or UTF-8.
func Parse(b []byte) (map[string]Rent, error) {
	if !utf8.Valid(b) {
		b = latin1(b)
	}
	rd := csv.NewReader(bytes.NewReader(b))
	rd.Comma, rd.FieldsPerRecord = ';', -1
	head, err := rd.Read()
	if err != nil {
		return nil, fmt.Errorf("rent table header: %w", err)
	}
	col, err := wire.NewHeader(head, "rent table", "INSEE_C", "loypredm2")
	if err != nil {
		return nil, err
	}
	get := col.Get
	out := map[string]Rent{}
	for {
		rec, err := rd.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("rent table line: %w", err)
		}
		insee, v := get(rec, "INSEE_C"), num(get(rec, "loypredm2"))
		if len(insee) != 5 || v <= 0 {
			continue // a row without a rent, or not a commune
		}
		n, _ := strconv.Atoi(get(rec, "nbobs_com"))
		out[insee] = Rent{Insee: insee, Commune: get(rec, "LIBGEO"), PerM2: v, Low: num(get(rec, "lwr.IPm2")), High: num(get(rec, "upr.IPm2")),
			Level: get(rec, "TYPPRED"), Listings: n}
	}
	return out, nil
}

func num(s string) float64 {
	v, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", "."), 64)
	if err != nil {
		return 0
	}
	return v
}

// latin1 decodes Windows-1252 as Latin-1 (the tables' names use no character of 0x80–0x9F).
func latin1(b []byte) []byte {
	var buf bytes.Buffer
	for _, c := range b {
		buf.WriteRune(rune(c))
	}
	return buf.Bytes()
}
