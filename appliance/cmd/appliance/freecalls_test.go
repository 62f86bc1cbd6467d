package main

import (
	"testing"
	"time"

	"github.com/peage/appliance/internal/state"
)

// TestFreeCallSurvivesRestart: the day's free call, once taken, stays taken after the store is
// closed and opened again; a given-back call can be taken again.
func TestFreeCallSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	open := func() *state.Store {
		s, err := state.Open(dir, state.Options{Name: "api", NoBackground: true})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	f := durableFreeCalls{s}
	day := state.Day(time.Now())
	if ok, err := f.Take("198.51.100.7", "chain.gas", day); !ok || err != nil {
		t.Fatalf("first take: %v %v", ok, err)
	}
	if ok, _ := f.Take("198.51.100.7", "chain.gas", day); ok {
		t.Fatal("second take granted")
	}
	if ok, _ := f.Take("198.51.100.7", "chain.block", day); !ok {
		t.Fatal("another route's free call refused")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open()
	defer s.Close()
	f = durableFreeCalls{s}
	if ok, _ := f.Take("198.51.100.7", "chain.gas", day); ok {
		t.Fatal("restart granted a second free call")
	}
	if err := f.GiveBack("198.51.100.7", "chain.gas", day); err != nil {
		t.Fatal(err)
	}
	if ok, _ := f.Take("198.51.100.7", "chain.gas", day); !ok {
		t.Fatal("a given-back free call was not granted again")
	}
}
