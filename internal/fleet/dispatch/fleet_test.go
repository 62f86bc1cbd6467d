package dispatch_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nats.go/micro"

	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/fleet/box"
	"github.com/peage/appliance/internal/fleet/dispatch"
	"github.com/peage/appliance/internal/fleet/fleettest"
	"github.com/peage/appliance/internal/fleet/hub"
	"github.com/peage/appliance/internal/fleet/registry"
	"github.com/peage/appliance/internal/freeport"
	"github.com/peage/appliance/internal/obs"
)

// ttl is the registry's in most tests: short, so that a box that stops announcing itself
// leaves within the test.
const ttl = time.Second

// testFleet is a hub, its registry and dispatcher, and the boxes a test starts: all real
// nats-servers on loopback.
type testFleet struct {
	t        *testing.T
	state    string
	store    string
	leafAddr string
	hub      *hub.Hub
	kv       jetstream.KeyValue
	view     *registry.View
	d        *dispatch.Dispatcher
	stop     context.CancelFunc
	creds    map[string]fleet.Credentials
	ttl      time.Duration
}

func newFleet(t *testing.T) *testFleet { return newFleetTTL(t, ttl) }

func newFleetTTL(t *testing.T, ttl time.Duration) *testFleet {
	dir := t.TempDir()
	f := &testFleet{t: t, state: filepath.Join(dir, "state"), store: filepath.Join(dir, "store"),
		leafAddr: freeport.Addr(t), creds: map[string]fleet.Credentials{}, ttl: ttl}
	f.startHub()
	t.Cleanup(f.stopHub)
	return f
}

func (f *testFleet) startHub() {
	t := f.t
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	h, err := hub.Start(ctx, hub.Config{StateDir: f.state, StoreDir: f.store, LeafAddr: f.leafAddr})
	if err != nil {
		t.Fatal(err)
	}
	f.hub = h
	js, err := jetstream.New(h.Conn())
	if err != nil {
		t.Fatal(err)
	}
	if f.kv, err = registry.Open(ctx, js, f.ttl); err != nil {
		t.Fatal(err)
	}
	run, stop := context.WithCancel(context.Background())
	f.stop = stop
	if err := registry.Register(run, h.Conn(), f.kv, obs.Discard()); err != nil {
		t.Fatal(err)
	}
	if f.view, err = registry.Watch(run, f.kv, f.ttl); err != nil {
		t.Fatal(err)
	}
	if f.d, err = dispatch.New(h.Conn(), f.view, dispatch.Config{}); err != nil {
		t.Fatal(err)
	}
}

func (f *testFleet) stopHub() {
	f.d.Close()
	f.stop()
	f.hub.Close()
}

func (f *testFleet) startBox(name string, exit fleet.Exit, routes map[string]box.Handler) *box.Box {
	f.t.Helper()
	creds, ok := f.creds[name]
	if !ok {
		var err error
		if creds, err = f.hub.Enrol(name); err != nil {
			f.t.Fatal(err)
		}
		f.creds[name] = creds
	}
	return f.startBoxWith(creds, exit, routes)
}

func (f *testFleet) startBoxWith(creds fleet.Credentials, exit fleet.Exit, routes map[string]box.Handler) *box.Box {
	f.t.Helper()
	b, err := box.Start(f.t.Context(), box.Config{
		Credentials: creds, Routes: routes, Exit: exit,
		Heartbeat: 100 * time.Millisecond, ProgressEvery: 100 * time.Millisecond, Reconnect: 50 * time.Millisecond,
	})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(b.Close)
	return b
}

// bucket is the registry stream's info.
func (f *testFleet) bucket() *jetstream.StreamInfo {
	f.t.Helper()
	js, err := jetstream.New(f.hub.Conn())
	if err != nil {
		f.t.Fatal(err)
	}
	s, err := js.Stream(f.t.Context(), "KV_"+registry.Bucket)
	if err != nil {
		f.t.Fatal(err)
	}
	info, err := s.Info(f.t.Context())
	if err != nil {
		f.t.Fatal(err)
	}
	return info
}

func (f *testFleet) live() []string {
	var names []string
	for _, r := range f.view.Boxes() {
		names = append(names, r.Box)
	}
	return names
}

func (f *testFleet) waitLive(names ...string) {
	f.t.Helper()
	fleettest.WaitFor(f.t, "boxes live: "+join(names), func() bool {
		live := f.live()
		for _, n := range names {
			if !slices.Contains(live, n) {
				return false
			}
		}
		return true
	})
}

func (f *testFleet) waitGone(name string) {
	f.t.Helper()
	fleettest.WaitFor(f.t, name+" out of the rotation", func() bool { return !slices.Contains(f.live(), name) })
}

func (f *testFleet) do(route string, c registry.Constraints, req dispatch.Request) ([]byte, string, error) {
	ctx, cancel := context.WithTimeout(f.t.Context(), 10*time.Second)
	defer cancel()
	return f.d.Do(ctx, route, c, req)
}

func join(names []string) string {
	var b bytes.Buffer
	for i, n := range names {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(n)
	}
	return b.String()
}

func named(name string) box.Handler {
	return func(_ context.Context, req []byte) ([]byte, error) { return append([]byte(name+":"), req...), nil }
}

func TestCallsSpreadOverTheBoxesThatServeARoute(t *testing.T) {
	f := newFleet(t)
	f.startBox("a", fleet.Exit{Country: "DE", ASN: 3320}, map[string]box.Handler{"web": named("a"), "lookup": named("a")})
	f.startBox("b", fleet.Exit{Country: "DE", ASN: 3320}, map[string]box.Handler{"web": named("b"), "lookup": named("b")})
	f.startBox("c", fleet.Exit{Country: "FR", ASN: 3215}, map[string]box.Handler{"lookup": named("c")}) // no browser
	f.waitLive("a", "b", "c")

	for _, tc := range []struct {
		route string
		c     registry.Constraints
		want  []string
	}{
		{"web", registry.Constraints{}, []string{"a", "b"}},
		{"lookup", registry.Constraints{}, []string{"a", "b", "c"}},
		{"lookup", registry.Constraints{Country: "FR"}, []string{"c"}},
		{"web", registry.Constraints{ASN: 3320}, []string{"a", "b"}},
	} {
		served := map[string]int{}
		for range 12 {
			answer, boxName, err := f.do(tc.route, tc.c, dispatch.Request{Body: []byte("q")})
			if err != nil {
				t.Fatalf("%s %+v: %v", tc.route, tc.c, err)
			}
			if string(answer) != boxName+":q" {
				t.Fatalf("%s: answer %q from %s", tc.route, answer, boxName)
			}
			served[boxName]++
		}
		for name := range served {
			if !slices.Contains(tc.want, name) {
				t.Fatalf("%s %+v reached %s: %v", tc.route, tc.c, name, served)
			}
		}
		if len(served) != len(tc.want) {
			t.Fatalf("%s %+v spread over %v, want every one of %v", tc.route, tc.c, served, tc.want)
		}
	}

	// micro's discovery reaches every box through its leaf link: $SRV.PING.peage-box.
	nc := f.hub.Conn()
	pings, err := nc.SubscribeSync(nc.NewInbox())
	if err != nil {
		t.Fatal(err)
	}
	subject, _ := micro.ControlSubject(micro.PingVerb, fleet.ServiceName, "")
	if err := nc.PublishRequest(subject, pings.Subject, nil); err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for len(found) < 3 {
		msg, err := pings.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatalf("pinged boxes %v: %v", found, err)
		}
		var ping micro.Ping
		if err := json.Unmarshal(msg.Data, &ping); err != nil || ping.Name != fleet.ServiceName {
			t.Fatalf("ping answer %s: %v", msg.Data, err)
		}
		found[ping.Metadata["box"]] = true
	}
	if !found["a"] || !found["b"] || !found["c"] {
		t.Fatalf("pinged boxes %v", found)
	}

	// The route's queue group, which NATS balances itself, reaches only the boxes serving it.
	for range 12 {
		msg, err := f.hub.Conn().Request(fleet.RouteSubject("web"), []byte("q"), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if answer := string(msg.Data); answer != "a:q" && answer != "b:q" {
			t.Fatalf("the web queue group answered %q", answer)
		}
	}

	for _, tc := range []struct {
		route string
		c     registry.Constraints
	}{
		{"web", registry.Constraints{Country: "FR"}}, // the French box has no browser
		{"pdf", registry.Constraints{}},
	} {
		_, _, err := f.do(tc.route, tc.c, dispatch.Request{})
		if !errors.Is(err, dispatch.ErrNoBox) {
			t.Fatalf("%s %+v: %v, want ErrNoBox", tc.route, tc.c, err)
		}
	}
}

func TestLargeAnswerCrossesInChunks(t *testing.T) {
	f := newFleet(t)
	shot := make([]byte, 5<<20+123) // a 5 MB screenshot, over NATS's 1 MB max payload
	for i := range shot {
		shot[i] = byte(i * 7)
	}
	f.startBox("a", fleet.Exit{}, map[string]box.Handler{"shot": func(context.Context, []byte) ([]byte, error) { return shot, nil }})
	f.waitLive("a")
	answer, _, err := f.do("shot", registry.Constraints{}, dispatch.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(answer, shot) {
		t.Fatalf("answer of %d bytes differs from the %d sent", len(answer), len(shot))
	}
}

// held is a route whose calls wait until the test lets them go, telling which box holds each.
type held struct {
	started chan string
	mu      sync.Mutex
	release map[string]chan struct{}
}

func newHeld() *held {
	return &held{started: make(chan string, 8), release: map[string]chan struct{}{}}
}

func (h *held) gate(name string) chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.release[name] == nil {
		h.release[name] = make(chan struct{})
	}
	return h.release[name]
}

func (h *held) handler(name string) box.Handler {
	return func(ctx context.Context, _ []byte) ([]byte, error) {
		h.started <- name
		select {
		case <-h.gate(name):
			return []byte(name), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func TestBoxKilledMidCall(t *testing.T) {
	for _, tc := range []struct {
		name          string
		noSideEffects bool
	}{
		{"retried on another box", true},
		{"with side effects: a typed error, not retried", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFleet(t)
			h := newHeld()
			boxes := map[string]*box.Box{}
			for _, name := range []string{"a", "b"} {
				boxes[name] = f.startBox(name, fleet.Exit{}, map[string]box.Handler{"slow": h.handler(name)})
			}
			f.waitLive("a", "b")
			type result struct {
				answer []byte
				box    string
				err    error
			}
			done := make(chan result, 1)
			go func() {
				answer, boxName, err := f.do("slow", registry.Constraints{}, dispatch.Request{NoSideEffects: tc.noSideEffects})
				done <- result{answer, boxName, err}
			}()
			victim := <-h.started
			survivor := map[string]string{"a": "b", "b": "a"}[victim]
			close(h.gate(survivor))
			boxes[victim].Server().Shutdown() // the box dies holding the call
			r := <-done
			if tc.noSideEffects {
				if r.err != nil || r.box != survivor || string(r.answer) != survivor {
					t.Fatalf("after %s died: %q from %q, %v; want %s's answer", victim, r.answer, r.box, r.err, survivor)
				}
				return
			}
			var fe *dispatch.Error
			if !errors.Is(r.err, dispatch.ErrBoxFailed) || !errors.As(r.err, &fe) || fe.Box != victim {
				t.Fatalf("after %s died: %q from %q, %v; want ErrBoxFailed naming %s", victim, r.answer, r.box, r.err, victim)
			}
			select {
			case other := <-h.started:
				t.Fatalf("a call with side effects ran again on %s", other)
			default:
			}
		})
	}
}

func TestBusyBoxIsPassedOver(t *testing.T) {
	f := newFleet(t)
	h := newHeld()
	for _, name := range []string{"a", "b"} {
		f.startBox(name, fleet.Exit{}, map[string]box.Handler{"slow": h.handler(name), "lookup": named(name)})
	}
	f.waitLive("a", "b")
	slow := make(chan error, 1)
	go func() {
		_, _, err := f.do("slow", registry.Constraints{}, dispatch.Request{})
		slow <- err
	}()
	busy := <-h.started
	idle := map[string]string{"a": "b", "b": "a"}[busy]
	for range 4 {
		if _, boxName, err := f.do("lookup", registry.Constraints{}, dispatch.Request{}); err != nil || boxName != idle {
			t.Fatalf("with %s holding a call: %s, %v; want %s", busy, boxName, err, idle)
		}
	}
	close(h.gate(busy))
	if err := <-slow; err != nil {
		t.Fatal(err)
	}
}

// A box found gone gets no more calls while its registry entry lives on (a long TTL here):
// one call learns it, the next ones go elsewhere.
func TestBoxFoundGoneIsPassedOverBeforeItsEntryExpires(t *testing.T) {
	f := newFleetTTL(t, time.Minute)
	a := f.startBox("a", fleet.Exit{}, map[string]box.Handler{"lookup": named("a")})
	f.startBox("b", fleet.Exit{}, map[string]box.Handler{"lookup": named("b")})
	f.waitLive("a", "b")
	a.Server().Shutdown()
	failures := 0
	for range 6 { // with side effects, so a call that meets a is not retried
		_, boxName, err := f.do("lookup", registry.Constraints{}, dispatch.Request{})
		var fe *dispatch.Error
		switch {
		case err == nil && boxName == "b":
		case errors.As(err, &fe) && errors.Is(err, dispatch.ErrBoxFailed) && fe.Box == "a":
			failures++
		default:
			t.Fatalf("%s, %v", boxName, err)
		}
	}
	if failures > 1 {
		t.Fatalf("a was picked %d times after it was found gone", failures)
	}
	if !slices.Contains(f.live(), "a") {
		t.Fatal("a's entry expired: the test shows nothing")
	}
}

func TestCallPastItsDeadlineIsATimeout(t *testing.T) {
	f := newFleet(t)
	h := newHeld()
	f.startBox("a", fleet.Exit{}, map[string]box.Handler{"slow": h.handler("a")})
	f.waitLive("a")
	ctx, cancel := context.WithCancel(t.Context())
	go func() { <-h.started; cancel() }() // the caller gives up while the box holds the call
	_, _, err := f.d.Do(ctx, "slow", registry.Constraints{}, dispatch.Request{NoSideEffects: true})
	if !errors.Is(err, dispatch.ErrTimeout) {
		t.Fatalf("%v, want ErrTimeout", err)
	}
}

func TestFailingRouteIsRetriedOnAnotherBox(t *testing.T) {
	f := newFleet(t)
	failing := func(context.Context, []byte) ([]byte, error) { return nil, errors.New("upstream 500") }
	f.startBox("a", fleet.Exit{}, map[string]box.Handler{"lookup": failing})
	f.startBox("b", fleet.Exit{}, map[string]box.Handler{"lookup": named("b")})
	f.waitLive("a", "b")
	for range 4 { // whichever box the pick starts with, b answers
		_, boxName, err := f.do("lookup", registry.Constraints{}, dispatch.Request{NoSideEffects: true})
		if err != nil || boxName != "b" {
			t.Fatalf("%s, %v", boxName, err)
		}
	}
	_, _, err := f.do("lookup", registry.Constraints{Country: ""}, dispatch.Request{})
	for err == nil { // with side effects, a's failure is the answer
		_, _, err = f.do("lookup", registry.Constraints{}, dispatch.Request{})
	}
	if !errors.Is(err, dispatch.ErrBoxFailed) {
		t.Fatalf("%v, want ErrBoxFailed", err)
	}
}

func TestBoxThatDiesLeavesAndRejoins(t *testing.T) {
	f := newFleet(t)
	a := f.startBox("a", fleet.Exit{}, map[string]box.Handler{"lookup": named("a")})
	f.waitLive("a")
	a.Server().Shutdown() // no goodbye: the heartbeats stop
	f.waitGone("a")
	if _, _, err := f.do("lookup", registry.Constraints{}, dispatch.Request{}); !errors.Is(err, dispatch.ErrNoBox) {
		t.Fatalf("with a gone: %v, want ErrNoBox", err)
	}
	f.startBox("a", fleet.Exit{}, map[string]box.Handler{"lookup": named("a")})
	f.waitLive("a")
	if _, boxName, err := f.do("lookup", registry.Constraints{}, dispatch.Request{}); err != nil || boxName != "a" {
		t.Fatalf("after rejoining: %s, %v", boxName, err)
	}
}

func TestBoxClosingLeavesAtOnce(t *testing.T) {
	// A TTL longer than waitFor's deadline: only the box's own leaving can delete its entry.
	f := newFleetTTL(t, time.Minute)
	a := f.startBox("a", fleet.Exit{}, map[string]box.Handler{"lookup": named("a")})
	f.waitLive("a")
	a.Close()
	fleettest.WaitFor(t, "a's entry deleted", func() bool {
		_, err := f.kv.Get(t.Context(), "a")
		return errors.Is(err, jetstream.ErrKeyNotFound)
	})
}

func TestHubRestartKeepsTheRegistry(t *testing.T) {
	f := newFleet(t)
	f.startBox("a", fleet.Exit{}, map[string]box.Handler{"lookup": named("a")})
	f.startBox("b", fleet.Exit{}, map[string]box.Handler{"lookup": named("b")})
	f.waitLive("a", "b")
	before := f.bucket()
	f.stopHub()
	f.startHub() // same state and store dirs, same leaf address; the boxes dial again
	if after := f.bucket(); !after.Created.Equal(before.Created) || after.State.LastSeq < before.State.LastSeq {
		t.Fatalf("the registry's stream was made anew: created %v, last sequence %d; before %v, %d",
			after.Created, after.State.LastSeq, before.Created, before.State.LastSeq)
	}
	// The boxes are back when a heartbeat newer than every one before the restart is in.
	for _, name := range []string{"a", "b"} {
		fleettest.WaitFor(t, name+"'s heartbeat after the restart", func() bool {
			e, err := f.kv.Get(t.Context(), name)
			return err == nil && e.Revision() > before.State.LastSeq
		})
	}
	served := map[string]bool{}
	for range 4 {
		_, boxName, err := f.do("lookup", registry.Constraints{}, dispatch.Request{})
		if err != nil {
			t.Fatal(err)
		}
		served[boxName] = true
	}
	if !served["a"] || !served["b"] {
		t.Fatalf("after the restart the calls reached %v", served)
	}
}

func TestLeafLinkDropsAndComesBack(t *testing.T) {
	f := newFleet(t)
	link := fleettest.NewLine(t, f.leafAddr)
	creds, err := f.hub.Enrol("a")
	if err != nil {
		t.Fatal(err)
	}
	creds.LeafURL = "tls://" + link.Addr() // a's line reaches the hub through the relay
	f.startBoxWith(creds, fleet.Exit{Country: "FR"}, map[string]box.Handler{"lookup": named("a")})
	f.startBox("b", fleet.Exit{Country: "DE"}, map[string]box.Handler{"lookup": named("b")})
	f.waitLive("a", "b")

	link.Cut()
	f.waitGone("a")
	if _, boxName, err := f.do("lookup", registry.Constraints{}, dispatch.Request{}); err != nil || boxName != "b" {
		t.Fatalf("with a's link down: %s, %v", boxName, err)
	}
	if _, _, err := f.do("lookup", registry.Constraints{Country: "FR"}, dispatch.Request{}); !errors.Is(err, dispatch.ErrNoBox) {
		t.Fatalf("with a's link down, a French exit: %v, want ErrNoBox", err)
	}
	link.Restore()
	f.waitLive("a")
	if _, boxName, err := f.do("lookup", registry.Constraints{Country: "FR"}, dispatch.Request{}); err != nil || boxName != "a" {
		t.Fatalf("after a's link came back: %s, %v", boxName, err)
	}
}

// TestBoxKnowsWhetherTheGatewayHearsIt: the registry acknowledges each heartbeat it wrote on
// the box's own subject, so the box tells a link up to a gateway that hears it from a link up
// to one that does not (its registry gone) and from no link; a heartbeat whose reply subject
// names another box's subject gets no answer there.
func TestBoxKnowsWhetherTheGatewayHearsIt(t *testing.T) {
	f := newFleet(t)
	a := f.startBox("a", fleet.Exit{}, map[string]box.Handler{"lookup": named("a")})
	fleettest.WaitFor(t, "a's heartbeat acknowledged", func() bool { return a.Link() == nil })

	// A heartbeat of a sent with a reply subject of the sender's choosing, then one of box z
	// (nothing else answers on z's subject): the registry handles them in order, so once z's
	// is acknowledged a's was handled, and its answer, had there been one, is queued.
	hc := f.hub.Conn()
	other, err := hc.SubscribeSync(fleet.BoxSubjects("b"))
	if err != nil {
		t.Fatal(err)
	}
	acks, err := hc.SubscribeSync(fleet.HeartbeatAckSubject("z"))
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := json.Marshal(a.Record(fleet.HealthOK))
	if err := hc.PublishRequest(fleet.HeartbeatSubject("a"), fleet.BoxSubject("b", "lookup"), rec); err != nil {
		t.Fatal(err)
	}
	z, _ := json.Marshal(fleet.Record{Box: "z", Routes: []string{"lookup"}, Health: fleet.HealthOK})
	if err := hc.PublishRequest(fleet.HeartbeatSubject("z"), fleet.HeartbeatAckSubject("z"), z); err != nil {
		t.Fatal(err)
	}
	if _, err := acks.NextMsg(10 * time.Second); err != nil {
		t.Fatalf("no acknowledgement: %v", err)
	}
	if m, err := other.NextMsg(0); err == nil {
		t.Fatalf("the registry answered on another box's subject %s", m.Subject)
	}

	f.stop() // the registry stops; the hub, and a's link, stay
	fleettest.WaitFor(t, "a unheard while linked", func() bool {
		err := a.Link()
		return a.Connected() && err != nil && strings.Contains(err.Error(), "no heartbeat acknowledged")
	})
	f.stopHub()
	fleettest.WaitFor(t, "a without its link", func() bool {
		err := a.Link()
		return err != nil && strings.Contains(err.Error(), "no link")
	})
	f.startHub()
	fleettest.WaitFor(t, "a heard again", func() bool { return a.Link() == nil })
}
