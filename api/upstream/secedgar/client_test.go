package secedgar

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

// sec answers as EDGAR does only when the User-Agent names a contact: 403 otherwise.
func sec(t *testing.T, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.UserAgent(), "test@example.org") {
			http.Error(w, "undeclared automated tool", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// paths answers each request whose path ends with one of the pairs' paths (EDGAR's endpoints
// take no query) and fails the test on any other request.
func paths(t *testing.T, pairs ...any) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(pairs); i += 2 {
			if strings.HasSuffix(r.URL.Path, pairs[i].(string)) && r.URL.RawQuery == "" {
				pairs[i+1].(http.Handler).ServeHTTP(w, r)
				return
			}
		}
		t.Errorf("unexpected request %s?%s", r.URL.Path, r.URL.RawQuery)
		http.Error(w, "unexpected request", http.StatusTeapot)
	})
}

func newClient(t *testing.T) (*Client, *upstreamtest.Server, *upstreamtest.Server) {
	data, files := upstreamtest.New(t), upstreamtest.New(t)
	return New(data.Client(t, Name), files.Client(t, FilesName)), data, files
}

func TestTickerFileIsFetchedOnceAndShared(t *testing.T) {
	c, _, files := newClient(t)
	files.Handle(sec(t, paths(t, "/files/company_tickers.json", upstreamtest.File(t, "testdata/company_tickers.json.gz"))))
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			tk, ok, err := c.LookupTicker(context.Background(), "nvda")
			if err != nil || !ok || tk.CIK != 1045810 || tk.Title != "NVIDIA CORP" {
				t.Errorf("NVDA = %+v %v %v", tk, ok, err)
			}
		})
	}
	wg.Wait()
	if _, ok, err := c.LookupTicker(context.Background(), "ZZZZZZ"); ok || err != nil {
		t.Errorf("unknown ticker: ok %v err %v", ok, err)
	}
	if n := len(files.Requests()); n != 1 {
		t.Errorf("ticker file fetched %d times, want 1", n)
	}
	if got, err := c.TickersOf(context.Background(), 320193); err != nil || len(got) == 0 || got[0] != "AAPL" {
		t.Errorf("TickersOf(Apple) = %v, %v", got, err)
	}
}

func TestSubmissionsAndFactsPaths(t *testing.T) {
	c, data, _ := newClient(t)
	data.Handle(sec(t, paths(t,
		"/submissions/CIK0000320193.json", upstreamtest.File(t, "testdata/submissions_CIK0000320193.json"),
		"/api/xbrl/companyfacts/CIK0000320193.json", upstreamtest.File(t, "testdata/companyfacts_CIK0000320193.json.gz"),
		"/submissions/CIK0000000001.json", upstreamtest.FileStatus(t, "testdata/submissions_not_found.xml", http.StatusNotFound),
	)))
	sub, err := c.Submissions(context.Background(), 320193)
	if err != nil || sub.Name != "Apple Inc." || len(sub.Filings.Recent.Form) != len(sub.Filings.Recent.AccessionNumber) {
		t.Fatalf("submissions = %v, %v", sub.Name, err)
	}
	cf, err := c.CompanyFacts(context.Background(), 320193)
	if err != nil || cf.EntityName != "Apple Inc." || len(cf.Facts["us-gaap"]) == 0 {
		t.Fatalf("facts = %v, %v", cf.EntityName, err)
	}
	if _, err := c.Submissions(context.Background(), 1); !upstream.IsNotFound(err) {
		t.Errorf("unknown CIK err = %v, want 404", err)
	}
}

// TestReadyNeedsAContactAddress: the default contact (a URL) leaves the connector unready,
// since SEC refuses requests whose User-Agent names no contact.
func TestReadyNeedsAContactAddress(t *testing.T) {
	spec, _ := upstream.Lookup(Name)
	fspec, _ := upstream.Lookup(FilesName)
	for _, tt := range []struct {
		contact string
		ready   bool
	}{{"", false}, {"https://github.com/peage/appliance", false}, {"ops@example.org", true}} {
		d, _ := httpc.New(spec, httpc.Options{Contact: tt.contact})
		f, _ := httpc.New(fspec, httpc.Options{Contact: tt.contact})
		err := New(d, f).Ready()
		if (err == nil) != tt.ready || (err != nil && !errors.Is(err, upstream.ErrNotConfigured)) {
			t.Errorf("contact %q: Ready() = %v, want ready %v", tt.contact, err, tt.ready)
		}
	}
}
