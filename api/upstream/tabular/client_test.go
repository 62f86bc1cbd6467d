package tabular

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"testing"

	"github.com/peage/appliance/api/upstream/upstreamtest"
)

const dataPath = "/api/resources/" + IRVEResource + "/data/"

func pageQuery(insee string, n int) url.Values {
	return upstreamtest.Query("code_insee_commune__exact", insee, "page_size", "200", "page", strconv.Itoa(n))
}

// The recorded IONITY row of Giberville (14301), its values as the consolidated file's text
// (booleans TRUE/FALSE, numbers as text) and with its numbers typed, as the tabular API may
// serve them: both read alike.
func TestIRVE(t *testing.T) {
	for _, file := range []string{"testdata/irve_14301.json", "testdata/irve_14301_numbers.json"} {
		t.Run(file, func(t *testing.T) {
			s := upstreamtest.New(t)
			s.Expect(dataPath, pageQuery("14301", 1), upstreamtest.File(t, file))
			pdc, truncated, err := New(s.Client(t, Name)).IRVE(context.Background(), "14301")
			if err != nil || len(pdc) != 1 || truncated {
				t.Fatalf("pdc = %d, %v", len(pdc), err)
			}
			p := pdc[0]
			if p.IDStation != "FRIONE417100" || p.Puissance.V != 350 || p.Longitude.V != -0.277238 || p.Latitude.V != 49.166932 {
				t.Errorf("pdc = %+v", p)
			}
			if Bool(p.PriseEF) || !Bool(p.Prise2) || !Bool(p.PriseCCS) || !Bool(p.PriseChademo) || Bool(p.PriseAutre) || Bool(p.Gratuit) {
				t.Errorf("booleans = %+v", p)
			}
		})
	}
}

func TestIRVEParisAlsoReadsArrondissements(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect(dataPath, pageQuery("75056", 1), upstreamtest.File(t, "testdata/empty.json"))
	for i := 1; i <= 20; i++ {
		s.Expect(dataPath, pageQuery(fmt.Sprintf("751%02d", i), 1), upstreamtest.File(t, "testdata/empty.json"))
	}
	if _, _, err := New(s.Client(t, Name)).IRVE(context.Background(), "75056"); err != nil {
		t.Fatal(err)
	}
	if n := len(s.Requests()); n != 21 {
		t.Errorf("%d calls, want 21 (commune + 20 arrondissements)", n)
	}
}

// A commune with more pages than are read is declared truncated, not cut silently.
func TestIRVEPastThePageLimitIsTruncated(t *testing.T) {
	s := upstreamtest.New(t)
	more := upstreamtest.JSON(200, `{"data": [{"id_station_itinerance": "FRX"}], "links": {"next": "https://tabular-api.data.gouv.fr/next"}, "meta": {"total": 5000}}`)
	for p := 1; p <= maxPages; p++ {
		s.Expect(dataPath, pageQuery("44109", p), more)
	}
	pdc, truncated, err := New(s.Client(t, Name)).IRVE(context.Background(), "44109")
	if err != nil || !truncated || len(pdc) != maxPages {
		t.Fatalf("pdc = %d, truncated = %v, %v", len(pdc), truncated, err)
	}
}
