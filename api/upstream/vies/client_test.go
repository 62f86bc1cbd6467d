package vies

import (
	"context"
	"testing"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestGetAndPostNameValidityDifferently(t *testing.T) {
	s := upstreamtest.New(t)
	c := New(s.Client(t, Name))
	s.Handle(upstreamtest.File(t, "testdata/get_valid.json"))
	g, err := c.Check(context.Background(), "FR", "27552032534")
	if err != nil || !g.Valid || g.Name != "SA DANONE" {
		t.Fatalf("GET = %+v, %v", g, err)
	}
	if p := s.Last().URL.Path; p != "/taxation_customs/vies/rest-api/ms/FR/vat/27552032534" {
		t.Errorf("path = %s", p)
	}
	s.Handle(upstreamtest.File(t, "testdata/post_valid.json"))
	p, err := c.CheckPost(context.Background(), "FR", "27552032534")
	if err != nil || !p.Valid || p.Address == "" {
		t.Fatalf("POST = %+v, %v", p, err)
	}
	s.Handle(upstreamtest.File(t, "testdata/get_invalid.json"))
	inv, err := c.Check(context.Background(), "DE", "12345678901")
	if err != nil || inv.Valid || inv.Name != "" {
		t.Fatalf("invalid = %+v, %v", inv, err)
	}
}

func TestMemberStateUnavailableIsAFailureNotInvalid(t *testing.T) {
	s := upstreamtest.New(t)
	s.Handle(upstreamtest.File(t, "testdata/get_ms_unavailable.json"))
	_, err := New(s.Client(t, Name)).Check(context.Background(), "DE", "123456789")
	var ue *upstream.Error
	if err == nil || !asErr(err, &ue) || !ue.Retryable {
		t.Fatalf("err = %v, want a retryable upstream error", err)
	}
}
