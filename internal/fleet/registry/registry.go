// Package registry keeps the fleet's boxes in a JetStream key-value bucket: the hub writes
// each box's heartbeat under the box's name (the name its permissions pin the heartbeat
// subject to), the bucket's TTL drops a box that stopped announcing itself, and a View
// watching the bucket picks a box for a route by fit, then load.
package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/obs"
)

// Bucket is the registry's key-value bucket; a key is a box's name.
const Bucket = "peage_fleet_boxes"

// ErrNoBox: no live box serves the route within the constraints.
var ErrNoBox = errors.New("no box serves the route")

// Open creates (or adopts, with its entries) the registry bucket, entries living ttl after
// their last heartbeat. Delete markers on expiry let watchers see a box leave.
func Open(ctx context.Context, js jetstream.JetStream, ttl time.Duration) (jetstream.KeyValue, error) {
	cfg := jetstream.KeyValueConfig{
		Bucket:         Bucket,
		Description:    "péage fleet: one entry per box, refreshed by its heartbeat",
		History:        1,
		TTL:            ttl,
		LimitMarkerTTL: ttl,
		Storage:        jetstream.FileStorage,
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, cfg)
	if errors.Is(err, jetstream.ErrLimitMarkerTTLNotSupported) {
		// A joined deployment older than nats-server 2.11: no markers, and the View's own
		// age check is what drops an expired box.
		cfg.LimitMarkerTTL = 0
		kv, err = js.CreateOrUpdateKeyValue(ctx, cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("fleet registry: %w", err)
	}
	return kv, nil
}

// Record reads and checks a heartbeat: the record must name the box the subject names.
func Record(subject string, data []byte) (fleet.Record, error) {
	box := fleet.BoxOfHeartbeat(subject)
	if box == "" {
		return fleet.Record{}, fmt.Errorf("heartbeat on %q: not a box's subject", subject)
	}
	var rec fleet.Record
	if err := json.Unmarshal(data, &rec); err != nil {
		return fleet.Record{}, fmt.Errorf("heartbeat of %s: %w", box, err)
	}
	if rec.Box != box {
		return fleet.Record{}, fmt.Errorf("heartbeat on %s names box %q", subject, rec.Box)
	}
	for _, r := range rec.Routes {
		if err := fleet.ValidName(r); err != nil {
			return fleet.Record{}, fmt.Errorf("heartbeat of %s: route %w", box, err)
		}
	}
	return rec, nil
}

// Register writes the heartbeats arriving on nc into kv until ctx ends. Several gateways may
// run it: they share the work in one queue group.
func Register(ctx context.Context, nc *nats.Conn, kv jetstream.KeyValue, log *slog.Logger) error {
	log = log.With(obs.KeyComponent, "fleet-registry")
	sub, err := nc.QueueSubscribe(fleet.HeartbeatSubjects, "peage-registry", func(m *nats.Msg) {
		rec, err := Record(m.Subject, m.Data)
		if err != nil {
			log.Warn("heartbeat refused", obs.KeyErr, err)
			return
		}
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if rec.Health == fleet.HealthLeaving {
			err = kv.Delete(wctx, rec.Box)
		} else {
			_, err = kv.Put(wctx, rec.Box, m.Data)
		}
		if err != nil && ctx.Err() == nil {
			log.Warn("registry write failed", obs.KeyErr, err)
		}
		// The acknowledgement goes only to the box's own subject: a reply subject chosen by
		// the box could otherwise have the gateway publish anywhere (another box's calls).
		if err == nil && rec.Health != fleet.HealthLeaving && m.Reply == fleet.HeartbeatAckSubject(rec.Box) {
			_ = m.Respond(nil)
		}
	})
	if err != nil {
		return fmt.Errorf("fleet registry: %w", err)
	}
	go func() {
		<-ctx.Done()
		_ = sub.Unsubscribe()
	}()
	return nil
}

// Constraints a call puts on the box that serves it; zero values constrain nothing.
type Constraints struct {
	Country string
	ASN     uint32
}

func (c Constraints) fit(e fleet.Exit) bool {
	return (c.Country == "" || strings.EqualFold(c.Country, e.Country)) && (c.ASN == 0 || c.ASN == e.ASN)
}

type entry struct {
	rec     fleet.Record
	written time.Time // by the server's clock, when the last heartbeat was stored
}

// View is the gateway's live copy of the registry, with the calls it has sent to each box.
type View struct {
	ttl time.Duration
	now func() time.Time

	mu       sync.Mutex
	boxes    map[string]entry
	inflight map[string]int
	suspect  map[string]time.Time // box -> write time of its entry when a call found it gone
	last     map[string]entry     // every box's last entry, kept after it leaves (the operator's view)
	turn     int
	ready    chan struct{}
}

// Watch follows kv until ctx ends; Ready closes once the entries present at the start are in.
func Watch(ctx context.Context, kv jetstream.KeyValue, ttl time.Duration) (*View, error) {
	w, err := kv.WatchAll(ctx)
	if err != nil {
		return nil, fmt.Errorf("fleet registry: watch: %w", err)
	}
	v := &View{ttl: ttl, now: time.Now, boxes: map[string]entry{}, inflight: map[string]int{},
		suspect: map[string]time.Time{}, last: map[string]entry{}, ready: make(chan struct{})}
	go func() {
		defer func() { _ = w.Stop() }()
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-w.Updates():
				if !ok {
					return
				}
				v.apply(e)
			}
		}
	}()
	return v, nil
}

// Ready is closed once the view holds the bucket's entries of when it started.
func (v *View) Ready() <-chan struct{} { return v.ready }

func (v *View) apply(e jetstream.KeyValueEntry) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if e == nil { // the end of the initial values
		select {
		case <-v.ready:
		default:
			close(v.ready)
		}
		return
	}
	if e.Operation() != jetstream.KeyValuePut {
		delete(v.boxes, e.Key())
		delete(v.suspect, e.Key())
		return
	}
	var rec fleet.Record
	if json.Unmarshal(e.Value(), &rec) != nil || rec.Box != e.Key() {
		return
	}
	v.putLocked(rec, e.Created())
}

func (v *View) putLocked(rec fleet.Record, written time.Time) {
	v.boxes[rec.Box] = entry{rec: rec, written: written}
	if v.last == nil {
		v.last = map[string]entry{}
	}
	v.last[rec.Box] = v.boxes[rec.Box]
	if at, ok := v.suspect[rec.Box]; ok && written.After(at) {
		delete(v.suspect, rec.Box) // a heartbeat since: the box is back
	}
}

// Gone marks a box a call found gone (silent, or no longer subscribed): the pick passes it
// over until a newer heartbeat of it is in, rather than send it more calls until its entry
// expires.
func (v *View) Gone(box string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if e, ok := v.boxes[box]; ok {
		v.suspect[box] = e.written
	}
}

// live reports whether the entry's last heartbeat is within the TTL: the bucket's delete
// marker may come a little after, and the pick must not wait for it.
func (v *View) live(e entry) bool { return v.now().Sub(e.written) < v.ttl }

// Boxes lists the live boxes' records, by name.
func (v *View) Boxes() []fleet.Record {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []fleet.Record
	for _, e := range v.boxes {
		if v.live(e) {
			out = append(out, e.rec)
		}
	}
	slices.SortFunc(out, func(a, b fleet.Record) int { return strings.Compare(a.Box, b.Box) })
	return out
}

// Seen is a box as the view last saw it: its last record, when that was stored, and whether
// it is in the rotation now (live, healthy, not found gone).
type Seen struct {
	fleet.Record
	At   time.Time
	Live bool
}

// Seen lists every box the view has held since it started, by name; a box that left keeps its
// last record, not Live.
func (v *View) Seen() []Seen {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make([]Seen, 0, len(v.last))
	for name, e := range v.last {
		cur, in := v.boxes[name]
		_, gone := v.suspect[name]
		out = append(out, Seen{Record: e.rec, At: e.written, Live: in && !gone && v.live(cur) && cur.rec.Health == fleet.HealthOK})
	}
	slices.SortFunc(out, func(a, b Seen) int { return strings.Compare(a.Box, b.Box) })
	return out
}

// Serving reports whether some live, healthy box serves route (and is not found gone): the
// gateway lists such a route available. Unlike Pick it counts nothing in flight.
func (v *View) Serving(route string) bool { return v.ServingWithin(route, Constraints{}) }

// ServingWithin is Serving for the boxes that fit c: a route every call of which needs an
// exit in one country is available only while a box there serves it.
func (v *View) ServingWithin(route string, c Constraints) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	for name, e := range v.boxes {
		if _, gone := v.suspect[name]; !gone && v.live(e) && e.rec.Health == fleet.HealthOK && e.rec.Serves(route) && c.fit(e.rec.Exit) {
			return true
		}
	}
	return false
}

// Pick chooses a live, healthy box serving route within c and not in exclude: the least
// loaded (its announced load plus the calls this gateway sent it since), ties taken in turn.
// The pick counts as a call in flight until done is called.
func (v *View) Pick(route string, c Constraints, exclude ...string) (rec fleet.Record, done func(), err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	var best []fleet.Record
	bestLoad := 0
	for name, e := range v.boxes {
		if _, gone := v.suspect[name]; gone || !v.live(e) || e.rec.Health != fleet.HealthOK || !e.rec.Serves(route) ||
			!c.fit(e.rec.Exit) || slices.Contains(exclude, name) {
			continue
		}
		load := e.rec.Load + v.inflight[name]
		switch {
		case len(best) == 0 || load < bestLoad:
			best, bestLoad = []fleet.Record{e.rec}, load
		case load == bestLoad:
			best = append(best, e.rec)
		}
	}
	if len(best) == 0 {
		return fleet.Record{}, nil, ErrNoBox
	}
	slices.SortFunc(best, func(a, b fleet.Record) int { return strings.Compare(a.Box, b.Box) })
	rec = best[v.turn%len(best)]
	v.turn++
	v.inflight[rec.Box]++
	var once sync.Once
	return rec, func() {
		once.Do(func() {
			v.mu.Lock()
			defer v.mu.Unlock()
			if v.inflight[rec.Box]--; v.inflight[rec.Box] <= 0 {
				delete(v.inflight, rec.Box)
			}
		})
	}, nil
}

// Box is the record of a live box by name: a call for a package it holds goes to it alone.
func (v *View) Box(name string) (fleet.Record, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	e, ok := v.boxes[name]
	if !ok || !v.live(e) {
		return fleet.Record{}, false
	}
	return e.rec, true
}
