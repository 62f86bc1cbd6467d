// Package secedgar is the connector of SEC EDGAR: the ticker file of www.sec.gov (ticker →
// CIK, cached), and the submissions and XBRL company facts of data.sec.gov. Both hosts are
// called through httpc clients whose User-Agent names the operator's contact, as SEC's
// fair-access policy requires; their token buckets add up to less than SEC's 10 requests per
// second for the whole appliance.
package secedgar

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/peage/appliance/api/upstream/httpc"
)

// Name is the registry name of data.sec.gov; FilesName that of www.sec.gov.
const (
	Name      = "sec-edgar"
	FilesName = "sec-edgar-files"
)

// tickerTTL is how long the ticker file is trusted; SEC regenerates it about once a day.
const tickerTTL = 24 * time.Hour

// retryStale is the pause before refreshing again a ticker file whose refresh failed.
const retryStale = 5 * time.Minute

// Client reads EDGAR.
type Client struct {
	data, files *httpc.Client
	now         func() time.Time

	mu      sync.Mutex
	tickers map[string]Ticker // by upper-case ticker
	byCIK   map[int64][]string
	loaded  time.Time
	loading chan struct{} // closed when the load in flight ends
}

// New builds the connector over the data.sec.gov and www.sec.gov clients.
func New(data, files *httpc.Client) *Client {
	return &Client{data: data, files: files, now: time.Now}
}

// Ready is nil once upstream.contact is an e-mail address (SEC refuses anonymous clients).
func (c *Client) Ready() error {
	if err := c.data.Ready(); err != nil {
		return err
	}
	return c.files.Ready()
}

// Ticker is one row of SEC's company_tickers.json.
type Ticker struct {
	CIK    int64  `json:"cik_str"`
	Ticker string `json:"ticker"`
	Title  string `json:"title"`
}

// LookupTicker returns the row of a ticker (case-insensitive), false when SEC lists none.
// The ticker file is fetched once and cached for a day; concurrent callers share one fetch.
func (c *Client) LookupTicker(ctx context.Context, ticker string) (Ticker, bool, error) {
	if err := c.loadTickers(ctx); err != nil {
		return Ticker{}, false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.tickers[strings.ToUpper(ticker)]
	return t, ok, nil
}

// TickersOf lists the tickers SEC's file gives for a CIK, main ticker first.
func (c *Client) TickersOf(ctx context.Context, cik int64) ([]string, error) {
	if err := c.loadTickers(ctx); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byCIK[cik], nil
}

func (c *Client) loadTickers(ctx context.Context) error {
	for {
		c.mu.Lock()
		if c.tickers != nil && c.now().Sub(c.loaded) < tickerTTL {
			c.mu.Unlock()
			return nil
		}
		if wait := c.loading; wait != nil {
			c.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		done := make(chan struct{})
		c.loading = done
		c.mu.Unlock()

		var rows map[string]Ticker
		err := c.files.GetJSON(ctx, "/files/company_tickers.json", nil, &rows)
		c.mu.Lock()
		c.loading = nil
		close(done)
		if err == nil {
			c.tickers = make(map[string]Ticker, len(rows))
			c.byCIK = make(map[int64][]string, len(rows))
			// The file lists a company's main ticker first: keep the row order per CIK.
			for i := range len(rows) {
				r, ok := rows[strconv.Itoa(i)]
				if !ok {
					continue
				}
				c.tickers[strings.ToUpper(r.Ticker)] = r
				c.byCIK[r.CIK] = append(c.byCIK[r.CIK], r.Ticker)
			}
			c.loaded = c.now()
		} else if c.tickers != nil {
			c.loaded = c.now().Add(retryStale - tickerTTL) // try again in a few minutes, not at every call
		}
		c.mu.Unlock()
		// A failed refresh keeps serving yesterday's file rather than failing every call.
		if err != nil && c.tickers == nil {
			return err
		}
		return nil
	}
}

// CIK10 is the zero-padded 10-digit form data.sec.gov uses in file names.
func CIK10(cik int64) string { return fmt.Sprintf("%010d", cik) }

// Submissions is data.sec.gov/submissions/CIK##########.json. The recent filings are
// column-oriented: parallel arrays, one index per filing.
type Submissions struct {
	CIK                  string   `json:"cik"`
	EntityType           string   `json:"entityType"`
	SIC                  string   `json:"sic"`
	SICDescription       string   `json:"sicDescription"`
	Name                 string   `json:"name"`
	Tickers              []string `json:"tickers"`
	Exchanges            []string `json:"exchanges"`
	EIN                  string   `json:"ein"`
	Category             string   `json:"category"`
	FiscalYearEnd        string   `json:"fiscalYearEnd"`
	StateOfIncorporation string   `json:"stateOfIncorporation"`
	Phone                string   `json:"phone"`
	Addresses            map[string]struct {
		Street1        string `json:"street1"`
		Street2        string `json:"street2"`
		City           string `json:"city"`
		StateOrCountry string `json:"stateOrCountry"`
		ZipCode        string `json:"zipCode"`
	} `json:"addresses"`
	FormerNames []struct {
		Name string `json:"name"`
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"formerNames"`
	Filings struct {
		Recent struct {
			AccessionNumber       []string `json:"accessionNumber"`
			FilingDate            []string `json:"filingDate"`
			ReportDate            []string `json:"reportDate"`
			Form                  []string `json:"form"`
			PrimaryDocument       []string `json:"primaryDocument"`
			PrimaryDocDescription []string `json:"primaryDocDescription"`
		} `json:"recent"`
	} `json:"filings"`
}

// Submissions reads a company's identity and recent filings; an unknown CIK is an
// *upstream.Error with Status 404.
func (c *Client) Submissions(ctx context.Context, cik int64) (*Submissions, error) {
	var out Submissions
	err := c.data.GetJSON(ctx, "/submissions/CIK"+CIK10(cik)+".json", nil, &out)
	return &out, err
}

// Fact is one reported value of a concept.
type Fact struct {
	Start string  `json:"start"` // empty for instants (balance-sheet values)
	End   string  `json:"end"`
	Val   float64 `json:"val"`
	Accn  string  `json:"accn"`
	FY    int     `json:"fy"`
	FP    string  `json:"fp"`
	Form  string  `json:"form"`
	Filed string  `json:"filed"`
	Frame string  `json:"frame"`
}

// Concept is one XBRL concept with its values by unit ("USD", "USD/shares").
type Concept struct {
	Label string            `json:"label"`
	Units map[string][]Fact `json:"units"`
}

// CompanyFacts is data.sec.gov/api/xbrl/companyfacts/CIK##########.json.
type CompanyFacts struct {
	CIK        int64                         `json:"cik"`
	EntityName string                        `json:"entityName"`
	Facts      map[string]map[string]Concept `json:"facts"` // taxonomy → concept → values
}

// CompanyFacts reads every XBRL fact a company filed.
func (c *Client) CompanyFacts(ctx context.Context, cik int64) (*CompanyFacts, error) {
	var out CompanyFacts
	err := c.data.GetJSON(ctx, "/api/xbrl/companyfacts/CIK"+CIK10(cik)+".json", nil, &out)
	return &out, err
}
