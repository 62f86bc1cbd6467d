package sms_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/routes/sms"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/twilio"
	"github.com/peage/appliance/api/upstream/upstreamtest"
	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/internal/state"
)

var quiet = obs.Discard()

func file(name string) string {
	return filepath.Join("..", "..", "upstream", "twilio", "testdata", name)
}

const acct = "/2010-04-01/Accounts/ACtest"

// clock is a settable time shared by the store and the routes.
type clock struct{ t atomic.Int64 }

func (c *clock) now() time.Time   { return time.Unix(0, c.t.Load()).UTC() }
func (c *clock) set(t time.Time)  { c.t.Store(t.UnixNano()) }
func newClock(t time.Time) *clock { c := &clock{}; c.set(t); return c }
func basic(t *testing.T, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "ACtest" || p != "token" {
			t.Errorf("twilio auth %q:%q", u, p)
		}
		h.ServeHTTP(w, r)
	})
}

type env struct {
	srv   *upstreamtest.Server
	store *state.Store
	r     *sms.Routes
	h     *apitest.Harness
	gate  *apitest.RecordingGate
}

func start(t *testing.T, srv *upstreamtest.Server, dir string, c *clock, key string) *env {
	t.Helper()
	store, err := state.Open(dir, state.Options{Name: "api", Logger: quiet, Now: c.now, NoBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	spec := srv.Spec(t, twilio.Name)
	h, err := httpc.NewPool(map[string]upstream.Spec{twilio.Name: spec}, httpc.Options{Logger: quiet}).Client(twilio.Name)
	if err != nil {
		t.Fatal(err)
	}
	carrier, err := twilio.New(h, key)
	if err != nil {
		t.Fatal(err)
	}
	r := sms.With(carrier, store, quiet, c.now)
	gate := &apitest.RecordingGate{}
	return &env{srv: srv, store: store, r: r, h: apitest.StartFamily(t, catalog.DefaultNames(), r, apitest.Options{Gate: gate}), gate: gate}
}

func (e *env) get(t *testing.T, path string) (int, map[string]any) {
	t.Helper()
	resp, err := e.h.Client.Get(e.h.BaseURL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s", b)
	}
	return resp.StatusCode, m
}

// TestRentReadExpireReleaseAfterRestart rents a number, reads its messages, restarts the
// process after the session ended, and checks the reaper releases the number at the carrier.
func TestRentReadExpireReleaseAfterRestart(t *testing.T) {
	srv := upstreamtest.New(t)
	var deleted atomic.Int32
	srv.Expect(acct+"/AvailablePhoneNumbers/US/Local.json", upstreamtest.Query("SmsEnabled", "true", "PageSize", "1"),
		basic(t, upstreamtest.File(t, file("available_local_read_full.json"))))
	srv.Expect(acct+"/IncomingPhoneNumbers.json", nil, basic(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || r.Method != http.MethodPost || r.PostForm.Get("PhoneNumber") != "+18089251571" {
			t.Errorf("buy %s %v", r.Method, r.PostForm)
		}
		upstreamtest.FileStatus(t, file("incoming_phone_number_create.json"), http.StatusCreated).ServeHTTP(w, r)
	})))
	srv.Expect(acct+"/Messages.json", upstreamtest.Query("To", "+18089255327", "PageSize", "50"), basic(t, upstreamtest.File(t, file("messages_read_full.json"))))
	srv.Expect(acct+"/IncomingPhoneNumbers/PNaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.json", nil, basic(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodDelete {
			t.Errorf("release with %s", r.Method)
		}
		deleted.Add(1)
		w.WriteHeader(http.StatusNoContent)
	})))
	dir := t.TempDir()
	c := newClock(time.Date(2019, 5, 24, 17, 40, 0, 0, time.UTC))
	e := start(t, srv, dir, c, "ACtest:token")

	status, m := e.get(t, "/v1/sms/number")
	if status != 200 {
		t.Fatalf("rent: %d %v", status, m)
	}
	session := m["session"].(string)
	if m["number"] != "+18089255327" || len(session) != 32 || m["expires_at"] != "2019-05-24T18:40:00Z" || m["inbox_url"] == "" {
		t.Fatalf("rent answer %v", m)
	}
	status, m = e.get(t, "/v1/sms/inbox?session="+session)
	if status != 200 {
		t.Fatalf("inbox: %d %v", status, m)
	}
	msgs := m["messages"].([]any)
	if m["count"] != 2.0 || len(msgs) != 2 {
		t.Fatalf("inbox %v", m)
	}
	first := msgs[0].(map[string]any)
	if first["sender"] != "+12019235161" || first["body"] != "testing" || first["received_at"] != "2019-05-24T17:44:50Z" {
		t.Errorf("message %v", first)
	}

	// The process stops; the session ends while it is down; at the next start the reaper
	// releases the number at the carrier and the inbox is gone.
	e.store.Close()
	c.set(time.Date(2019, 5, 24, 19, 0, 0, 0, time.UTC))
	e2 := start(t, srv, dir, c, "ACtest:token")
	if n := e2.r.Reap(context.Background()); n != 1 || deleted.Load() != 1 {
		t.Fatalf("reaped %d, DELETE %d", n, deleted.Load())
	}
	if n, ok := e2.store.SMSNumber(session); !ok || !n.Released {
		t.Errorf("row after reaping %+v", n)
	}
	if n := e2.r.Reap(context.Background()); n != 0 || deleted.Load() != 1 {
		t.Errorf("a released number was released again")
	}
	if status, m := e2.get(t, "/v1/sms/inbox?session="+session); status != 410 {
		t.Errorf("inbox after expiry: %d %v", status, m)
	}
}

func TestRevokeReleasesTheNumber(t *testing.T) {
	srv := upstreamtest.New(t)
	var deleted atomic.Int32
	srv.Expect(acct+"/IncomingPhoneNumbers/PNaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.json", nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		deleted.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	srv.Expect(acct+"/AvailablePhoneNumbers/US/Local.json", upstreamtest.Query("SmsEnabled", "true", "PageSize", "1"), upstreamtest.File(t, file("available_local_read_full.json")))
	srv.Expect(acct+"/IncomingPhoneNumbers.json", nil, upstreamtest.FileStatus(t, file("incoming_phone_number_create.json"), http.StatusCreated))
	c := newClock(time.Date(2019, 5, 24, 17, 40, 0, 0, time.UTC))
	e := start(t, srv, t.TempDir(), c, "ACtest:token")
	cat, _ := catalog.Default(catalog.DefaultNames())
	_ = e.r.Bind(cat)
	entry := cat.Entry("sms.number")
	out, err := entry.Handler(context.Background(), &catalog.Request{Route: entry, Args: catalog.Args{}})
	if err != nil {
		t.Fatal(err)
	}
	n := out.(*sms.Number)
	if err := n.Revoke(context.Background()); err != nil || deleted.Load() != 1 {
		t.Fatalf("revoke: %v, DELETE %d", err, deleted.Load())
	}
	if row, _ := e.store.SMSNumber(n.Session); !row.Released {
		t.Errorf("row %+v", row)
	}
}

func TestFailures(t *testing.T) {
	t.Run("unconfigured is 503", func(t *testing.T) {
		e := start(t, upstreamtest.New(t), t.TempDir(), newClock(time.Now()), "")
		if status, m := e.get(t, "/v1/sms/number"); status != 503 {
			t.Errorf("%d %v", status, m)
		}
	})
	t.Run("bad and unknown sessions", func(t *testing.T) {
		srv := upstreamtest.New(t)
		e := start(t, srv, t.TempDir(), newClock(time.Now()), "ACtest:token")
		if status, _ := e.get(t, "/v1/sms/inbox?session=abc"); status != 400 {
			t.Errorf("short session: %d", status)
		}
		if status, _ := e.get(t, "/v1/sms/inbox?session=0123456789abcdef0123456789abcdef"); status != 404 {
			t.Errorf("unknown session: %d", status)
		}
		if n := len(srv.Requests()); n != 0 {
			t.Errorf("%d carrier requests", n)
		}
	})
	t.Run("carrier down is 502, not charged", func(t *testing.T) {
		srv := upstreamtest.New(t)
		srv.Handle(upstreamtest.ServerError())
		e := start(t, srv, t.TempDir(), newClock(time.Now()), "ACtest:token")
		if status, m := e.get(t, "/v1/sms/number"); status != 502 {
			t.Errorf("%d %v", status, m)
		}
		if c, w := e.gate.Counts(); c != 0 || w != 1 {
			t.Errorf("charged %d waived %d", c, w)
		}
	})
}
