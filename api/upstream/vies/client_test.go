package vies

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

const base = "/taxation_customs/vies/rest-api"

func TestCheck(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect(base+"/ms/PL/vat/7740001454", nil, upstreamtest.File(t, "testdata/get_valid_pl.json"))
	s.Expect(base+"/ms/FR/vat/27552032534", nil, upstreamtest.File(t, "testdata/get_valid.json"))
	s.Expect(base+"/ms/PL/vat/7740001455", nil, upstreamtest.File(t, "testdata/get_invalid.json"))
	s.Expect(base+"/check-vat-number", nil, postOf(t, "FR", "79632012100", upstreamtest.File(t, "testdata/post_invalid_fr.json")))
	c := New(s.Client(t, Name))
	g, err := c.Check(context.Background(), "PL", "7740001454")
	if err != nil || !g.Valid || g.Name != "ORLEN SPÓŁKA AKCYJNA" || g.Address != "CHEMIKÓW 7\n09-411 PŁOCK" {
		t.Fatalf("GET = %+v, %v", g, err)
	}
	if g, err := c.Check(context.Background(), "FR", "27552032534"); err != nil || !g.Valid || g.Name != "DANONE" {
		t.Fatalf("GET FR = %+v, %v", g, err)
	}
	// The recorded POST answer: a French number whose key is wrong (79 for SIREN 632012100, whose key is 10).
	p, err := c.CheckPost(context.Background(), "FR", "79632012100")
	if err != nil || p.Valid || p.Name != "" || p.Address != "" || p.RequestDate != "2026-05-13T21:56:18.425Z" {
		t.Fatalf("POST = %+v, %v", p, err)
	}
	inv, err := c.Check(context.Background(), "PL", "7740001455")
	if err != nil || inv.Valid || inv.Name != "" {
		t.Fatalf("invalid = %+v, %v", inv, err)
	}
}

// A userError other than VALID or INVALID leaves the number's validity unknown: an upstream
// failure, never "not valid". A member state down is retried; VIES blocking our address
// (IP_BLOCKED, recorded for a French number, with isValid false) is not.
func TestRefusalIsAFailureNotInvalid(t *testing.T) {
	for _, tt := range []struct {
		cc, number, file string
		retryable        bool
		reason           string // what the client is told VIES answered
	}{
		{"PL", "7740001454", "testdata/get_ms_unavailable.json", true, "MS_UNAVAILABLE"},
		{"FR", "29921822466", "testdata/get_ip_blocked_fr.json", false, "IP_BLOCKED"},
	} {
		t.Run(tt.file, func(t *testing.T) {
			s := upstreamtest.New(t)
			s.Expect(base+"/ms/"+tt.cc+"/vat/"+tt.number, nil, upstreamtest.File(t, tt.file))
			r, err := New(s.Client(t, Name)).Check(context.Background(), tt.cc, tt.number)
			var ue *upstream.Error
			if err == nil || !asErr(err, &ue) || ue.Retryable != tt.retryable {
				t.Fatalf("Check = %+v, %v; want an upstream error, retryable %v", r, err, tt.retryable)
			}
			if msg := apierr.From(err).Error(); !strings.Contains(msg, "vies did not answer: "+tt.reason) {
				t.Errorf("the client is told %q; want VIES's %s named", msg, tt.reason)
			}
		})
	}
}

// postOf answers with h once the POST body names cc and number, and fails the test otherwise.
func postOf(t *testing.T, cc, number string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ CountryCode, VatNumber string }
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&body) != nil || body.CountryCode != cc || body.VatNumber != number {
			t.Errorf("POST %s %+v, want countryCode %s vatNumber %s", r.Method, body, cc, number)
			http.Error(w, "unexpected request", http.StatusTeapot)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// The POST endpoint reports its errors in an errorWrappers envelope (HTTP 200), not in
// userError: a member state down is retryable, a refused input (GB since 2021) is a 400.
func TestPostErrorEnvelope(t *testing.T) {
	for _, tt := range []struct {
		cc, number, file string
		status           int
		retryable        bool
	}{
		{"DE", "129273398", "testdata/post_ms_unavailable.json", 200, true},
		{"GB", "220430231", "testdata/post_invalid_input.json", 400, false},
	} {
		t.Run(tt.file, func(t *testing.T) {
			s := upstreamtest.New(t)
			s.Expect(base+"/check-vat-number", nil, postOf(t, tt.cc, tt.number, upstreamtest.File(t, tt.file)))
			_, err := New(s.Client(t, Name)).CheckPost(context.Background(), tt.cc, tt.number)
			var ue *upstream.Error
			if err == nil || !asErr(err, &ue) || ue.Retryable != tt.retryable || upstream.StatusOf(err) != tt.status {
				t.Fatalf("err = %v (%+v), want status %d retryable %v", err, ue, tt.status, tt.retryable)
			}
		})
	}
}

// A valid French number answered by POST (the recorder kept the fields before name and address).
func TestPostValidFrench(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect(base+"/check-vat-number", nil, postOf(t, "FR", "60815004395", upstreamtest.File(t, "testdata/post_valid_fr.json")))
	p, err := New(s.Client(t, Name)).CheckPost(context.Background(), "FR", "60815004395")
	if err != nil || !p.Valid || p.VATNumber != "60815004395" || p.Name != "" {
		t.Fatalf("POST = %+v, %v", p, err)
	}
}
