package fr

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

// TestFreeCallsLeavePaidCallsTheirUpstream (issue 34, suspected item: confirmed) runs the
// real server over the free trial /free/entreprise and the paid /v1/fr/entreprise, which
// share recherche-entreprises and its token bucket (here 2 banked, one more every 100 s).
// Free calls from many clients (the per-client free limit is off, as for a flood from many
// /64s) used to take every token, and the paid call behind them was refused at once (429:
// its token would come after its deadline). Free calls now take at most half of the bucket
// (half its rate and burst), so the paid call is served; free calls past their share get
// 429 busy.
func TestFreeCallsLeavePaidCallsTheirUpstream(t *testing.T) {
	specs := map[string]upstream.Spec{}
	var recherche *upstreamtest.Server
	for _, s := range upstream.Specs {
		srv := upstreamtest.New(t)
		spec := srv.Spec(t, s.Name)
		if s.Name == "recherche-entreprises" {
			recherche = srv
			spec.RPS, spec.Burst = 0.01, 2
		}
		specs[s.Name] = spec
	}
	recherche.Handle(upstreamtest.File(t, "../../upstream/rechercheentreprises/testdata/search_la_poste.json"))
	r, err := With(Parts{Upstreams: specs, Now: func() time.Time { return now }, HTTP: httpc.Options{Contact: "test@example.org", Logger: quiet}})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Bind(cat); err != nil {
		t.Fatal(err)
	}
	h := apitest.Start(t, cat, apitest.Options{CheckShapes: true, Gate: &apitest.RecordingGate{}})
	get := func(path string, hdr ...string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", h.BaseURL+path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := h.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	var free []int
	for range 4 {
		st, b := get("/free/entreprise?q=la+poste")
		if st != 200 && (st != 429 || !strings.Contains(b, `"busy"`)) {
			t.Fatalf("a free call: %d %s, want 200 or 429 busy", st, b)
		}
		free = append(free, st)
	}
	if free[0] != 200 || free[3] != 429 {
		t.Fatalf("free calls answered %v, want the first served and the last refused", free)
	}
	if st, b := get("/v1/fr/entreprise?q=la+poste", "PAYMENT-SIGNATURE", "e30="); st != 200 {
		t.Fatalf("the paid call after the free ones (%v): %d %s, want 200", free, st, b)
	}
}
