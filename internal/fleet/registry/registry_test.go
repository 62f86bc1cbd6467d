package registry

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/testclock"
)

func TestHeartbeatMustNameItsOwnBox(t *testing.T) {
	good := fleet.Record{Box: "a", Routes: []string{"web"}, Health: fleet.HealthOK}
	for _, tc := range []struct {
		name    string
		subject string
		rec     any
		ok      bool
	}{
		{"its own", fleet.HeartbeatSubject("a"), good, true},
		{"another box's name", fleet.HeartbeatSubject("b"), good, false},
		{"not a heartbeat subject", "peage.route.web", good, false},
		{"a route name that is a wildcard", fleet.HeartbeatSubject("a"), fleet.Record{Box: "a", Routes: []string{"web.>"}}, false},
		{"not JSON", fleet.HeartbeatSubject("a"), "{", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, _ := json.Marshal(tc.rec)
			if s, isString := tc.rec.(string); isString {
				data = []byte(s)
			}
			rec, err := Record(tc.subject, data)
			if (err == nil) != tc.ok {
				t.Fatalf("Record(%s) = %+v, %v; want ok=%v", tc.subject, rec, err, tc.ok)
			}
		})
	}
}

func TestPickByFitThenLoad(t *testing.T) {
	clock := testclock.At(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	written := clock.Now()
	v := &View{ttl: time.Second, now: clock.Now, inflight: map[string]int{}, boxes: map[string]entry{},
		suspect: map[string]time.Time{}}
	for _, rec := range []fleet.Record{
		{Box: "de-busy", Routes: []string{"web", "lookup"}, Exit: fleet.Exit{Country: "DE", ASN: 3320}, Health: fleet.HealthOK, Load: 3},
		{Box: "de-idle", Routes: []string{"web", "lookup"}, Exit: fleet.Exit{Country: "DE", ASN: 3320}, Health: fleet.HealthOK},
		{Box: "fr", Routes: []string{"lookup"}, Exit: fleet.Exit{Country: "FR", ASN: 3215}, Health: fleet.HealthOK, Load: 1},
		{Box: "leaving", Routes: []string{"web", "lookup"}, Health: fleet.HealthLeaving},
		{Box: "exit-unknown", Routes: []string{"unblock"}, Health: fleet.HealthOK},
	} {
		v.boxes[rec.Box] = entry{rec: rec, written: written}
	}
	for _, tc := range []struct {
		name    string
		route   string
		c       Constraints
		exclude []string
		want    string
	}{
		{"least loaded", "web", Constraints{}, nil, "de-idle"},
		{"excluded after a failure", "web", Constraints{}, []string{"de-idle"}, "de-busy"},
		{"country first, load second", "lookup", Constraints{Country: "FR"}, nil, "fr"},
		{"ASN", "web", Constraints{ASN: 3320}, nil, "de-idle"},
		{"no box of that country serves it", "web", Constraints{Country: "FR"}, nil, ""},
		{"no box serves it", "pdf", Constraints{}, nil, ""},
		{"an exit not known is in no country", "unblock", Constraints{Country: "FR"}, nil, ""},
		{"an exit not known, no country asked", "unblock", Constraints{}, nil, "exit-unknown"},
		{"country in lower case", "lookup", Constraints{Country: "fr"}, nil, "fr"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, done, err := v.Pick(tc.route, tc.c, tc.exclude...)
			if tc.want == "" {
				if !errors.Is(err, ErrNoBox) {
					t.Fatalf("picked %q, %v; want ErrNoBox", rec.Box, err)
				}
				return
			}
			if err != nil || rec.Box != tc.want {
				t.Fatalf("picked %q, %v; want %s", rec.Box, err, tc.want)
			}
			done()
		})
		t.Run(tc.name+"/serving", func(t *testing.T) {
			if got := v.ServingWithin(tc.route, tc.c); got != (tc.want != "" || tc.exclude != nil) {
				t.Fatalf("ServingWithin(%s, %+v) = %v", tc.route, tc.c, got)
			}
		})
	}

	// Calls this gateway sent count as load until done: the idle box takes a call, then the
	// two least loaded alternate, and the busy box (load 3) gets none.
	v.turn = 0
	var picked []string
	var dones []func()
	for range 5 {
		rec, done, err := v.Pick("lookup", Constraints{})
		if err != nil {
			t.Fatal(err)
		}
		picked = append(picked, rec.Box)
		dones = append(dones, done)
	}
	if want := []string{"de-idle", "fr", "de-idle", "fr", "de-idle"}; !slices.Equal(picked, want) {
		t.Fatalf("picked %v, want %v", picked, want)
	}
	for _, done := range dones {
		done()
		done() // a second call changes nothing
	}
	if len(v.inflight) != 0 {
		t.Fatalf("calls still counted in flight: %v", v.inflight)
	}

	// A box a call found gone is passed over until a newer heartbeat of it is in.
	v.Gone("de-idle")
	for range 3 {
		if rec, done, err := v.Pick("web", Constraints{}); err != nil || rec.Box != "de-busy" {
			t.Fatalf("with de-idle gone: %q, %v", rec.Box, err)
		} else {
			done()
		}
	}
	v.putLocked(v.boxes["de-idle"].rec, written) // the same heartbeat again: still gone
	if rec, done, _ := v.Pick("web", Constraints{}); rec.Box != "de-busy" {
		t.Fatalf("de-idle back without a newer heartbeat")
	} else {
		done()
	}
	clock.Add(100 * time.Millisecond)
	v.putLocked(v.boxes["de-idle"].rec, clock.Now())
	if rec, done, err := v.Pick("web", Constraints{}); err != nil || rec.Box != "de-idle" {
		t.Fatalf("after de-idle's next heartbeat: %q, %v", rec.Box, err)
	} else {
		done()
	}

	// A box whose last heartbeat is older than the TTL is out, marker or not.
	clock.Add(time.Second)
	if rec, _, err := v.Pick("lookup", Constraints{}); !errors.Is(err, ErrNoBox) {
		t.Fatalf("picked %q with every heartbeat a TTL old", rec.Box)
	}
}

// TestSeenKeepsBoxesThatLeft: the operator's list keeps a box after it leaves the rotation
// (found gone, expired, deleted), with its last record and when it was stored, not live.
func TestSeenKeepsBoxesThatLeft(t *testing.T) {
	clock := testclock.At(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	v := &View{ttl: time.Second, now: clock.Now, inflight: map[string]int{}, boxes: map[string]entry{}, suspect: map[string]time.Time{}}
	first := clock.Now()
	for _, name := range []string{"a", "b", "c"} {
		v.putLocked(fleet.Record{Box: name, Routes: []string{"lookup"}, Health: fleet.HealthOK}, first)
	}
	clock.Add(500 * time.Millisecond)
	v.putLocked(fleet.Record{Box: "a", Routes: []string{"lookup"}, Health: fleet.HealthOK, Load: 2}, clock.Now())
	v.Gone("b")
	delete(v.boxes, "c") // its key deleted (a box closing says leaving)
	live := func() map[string]bool {
		out := map[string]bool{}
		for _, s := range v.Seen() {
			out[s.Box] = s.Live
		}
		return out
	}
	if got := live(); !got["a"] || got["b"] || got["c"] || len(got) != 3 {
		t.Fatalf("live %v; want a live, b (found gone) and c (left) listed, not live", got)
	}
	clock.Add(800 * time.Millisecond) // a's heartbeat is now 0.8 s old, b's and c's 1.3 s
	if s := v.Seen(); !s[0].Live || s[0].Load != 2 || !s[0].At.Equal(first.Add(500*time.Millisecond)) || !s[2].At.Equal(first) {
		t.Fatalf("seen %+v", s)
	}
	clock.Add(time.Second)
	if got := live(); got["a"] || len(got) != 3 {
		t.Fatalf("live %v after every heartbeat expired", got)
	}
}
