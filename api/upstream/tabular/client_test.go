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

func TestIRVE(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect(dataPath, pageQuery("44109", 1), upstreamtest.File(t, "testdata/irve.json"))
	pdc, err := New(s.Client(t, Name)).IRVE(context.Background(), "44109")
	if err != nil || len(pdc) != 3 {
		t.Fatalf("pdc = %d, %v", len(pdc), err)
	}
	if !Bool(pdc[1].PriseCCS) || !Bool(pdc[1].PriseChademo) || Bool(pdc[1].PriseAutre) || Bool(pdc[1].Gratuit) {
		t.Errorf("booleans = %+v", pdc[1])
	}
}

func TestIRVEParisAlsoReadsArrondissements(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect(dataPath, pageQuery("75056", 1), upstreamtest.File(t, "testdata/empty.json"))
	for i := 1; i <= 20; i++ {
		s.Expect(dataPath, pageQuery(fmt.Sprintf("751%02d", i), 1), upstreamtest.File(t, "testdata/empty.json"))
	}
	if _, err := New(s.Client(t, Name)).IRVE(context.Background(), "75056"); err != nil {
		t.Fatal(err)
	}
	if n := len(s.Requests()); n != 21 {
		t.Errorf("%d calls, want 21 (commune + 20 arrondissements)", n)
	}
}
