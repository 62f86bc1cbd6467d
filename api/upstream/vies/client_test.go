package vies

import (
	"context"
	"testing"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

const base = "/taxation_customs/vies/rest-api"

func TestCheck(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect(base+"/ms/PL/vat/7740001454", nil, upstreamtest.File(t, "testdata/get_valid_pl.json"))
	s.Expect(base+"/ms/FR/vat/27552032534", nil, upstreamtest.File(t, "testdata/get_valid.json"))
	s.Expect(base+"/ms/PL/vat/7740001455", nil, upstreamtest.File(t, "testdata/get_invalid.json"))
	s.Expect(base+"/check-vat-number", nil, upstreamtest.File(t, "testdata/post_valid.json"))
	c := New(s.Client(t, Name))
	g, err := c.Check(context.Background(), "PL", "7740001454")
	if err != nil || !g.Valid || g.Name != "ORLEN SPÓŁKA AKCYJNA" || g.Address != "CHEMIKÓW 7\n09-411 PŁOCK" {
		t.Fatalf("GET = %+v, %v", g, err)
	}
	if g, err := c.Check(context.Background(), "FR", "27552032534"); err != nil || !g.Valid || g.Name != "SA DANONE" {
		t.Fatalf("GET FR = %+v, %v", g, err)
	}
	p, err := c.CheckPost(context.Background(), "FR", "27552032534")
	if err != nil || !p.Valid || p.Address == "" {
		t.Fatalf("POST = %+v, %v", p, err)
	}
	inv, err := c.Check(context.Background(), "PL", "7740001455")
	if err != nil || inv.Valid || inv.Name != "" {
		t.Fatalf("invalid = %+v, %v", inv, err)
	}
}

func TestMemberStateUnavailableIsAFailureNotInvalid(t *testing.T) {
	s := upstreamtest.New(t)
	s.Expect(base+"/ms/PL/vat/7740001454", nil, upstreamtest.File(t, "testdata/get_ms_unavailable.json"))
	_, err := New(s.Client(t, Name)).Check(context.Background(), "PL", "7740001454")
	var ue *upstream.Error
	if err == nil || !asErr(err, &ue) || !ue.Retryable {
		t.Fatalf("err = %v, want a retryable upstream error", err)
	}
}
