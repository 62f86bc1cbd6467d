// Package sms serves /v1/sms/number and /v1/sms/inbox: a phone number rented from the carrier
// (Twilio, api/upstream/twilio) for one session of SessionTTL, and the messages it received.
//
// The session is a row of the journaled store (internal/state, SMSNumber) written before the
// number is handed out, with its expiry. The reaper releases every number whose session has
// ended and is not yet released, once at start and then every ReapEvery, so a restart never
// leaks a rented number (a number bought and then lost before its row was written is released
// at once). A number whose payment does not arrive is released (Revoke). Messages are pulled
// from the carrier's message log (no inbound webhook, so there is no signature to verify).
// Unconfigured, both routes stay listed, unavailable (503 before any 402).
package sms

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/url"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream/twilio"
	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/internal/state"
)

// Defaults.
const (
	SessionTTL = time.Hour
	ReapEvery  = time.Minute
	// pageSize is how many of the newest messages to the number one inbox read asks for.
	pageSize = 50
)

// Carrier is what the routes need of the carrier connector.
type Carrier interface {
	Ready() error
	AvailableLocal(ctx context.Context, country string, n int) ([]twilio.Available, error)
	Buy(ctx context.Context, number string) (*twilio.Incoming, error)
	Release(ctx context.Context, sid string) error
	MessagesTo(ctx context.Context, number string, n int) ([]twilio.Message, error)
}

// Routes holds the handlers.
type Routes struct {
	carrier Carrier
	store   *state.Store
	log     *slog.Logger
	now     func() time.Time
	// Country is where numbers are rented (ISO 3166 alpha-2).
	Country string
}

// With builds the family.
func With(c Carrier, store *state.Store, log *slog.Logger, now func() time.Time) *Routes {
	if now == nil {
		now = time.Now
	}
	return &Routes{carrier: c, store: store, log: log, now: now, Country: "US"}
}

// Bind attaches both handlers, ready once the carrier is configured.
func (r *Routes) Bind(c *catalog.Catalog) error {
	return errors.Join(c.Bind("sms.number", r.number, r.carrier.Ready), c.Bind("sms.inbox", r.inbox, r.carrier.Ready))
}

// Number is the answer of /v1/sms/number. It releases the number when its payment fails.
type Number struct {
	Session   string `json:"session"`
	Number    string `json:"number"`
	Country   string `json:"country"`
	Provider  string `json:"provider"`
	CreatedAt string `json:"created_at"`
	ExpiresAt string `json:"expires_at"`
	InboxURL  string `json:"inbox_url"`
	release   func(context.Context) error
}

// Revoke releases the number: its payment did not arrive.
func (n *Number) Revoke(ctx context.Context) error { return n.release(ctx) }

func newSession() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (r *Routes) number(ctx context.Context, req *catalog.Request) (any, error) {
	offers, err := r.carrier.AvailableLocal(ctx, r.Country, 1)
	if err != nil {
		return nil, err
	}
	if len(offers) == 0 {
		return nil, apierr.Upstream(twilio.Name, nil, "the carrier has no SMS-capable number to rent in %s right now; nothing was charged", r.Country)
	}
	in, err := r.carrier.Buy(ctx, offers[0].PhoneNumber)
	if err != nil {
		return nil, err
	}
	now := r.now().UTC()
	row := state.SMSNumber{Session: newSession(), Provider: twilio.Name, NumberSID: in.SID, Number: in.PhoneNumber,
		CreatedAt: now, ExpiresAt: now.Add(SessionTTL)}
	if err := r.store.PutSMSNumber(row); err != nil {
		// Without its row the number would never be released: give it back now.
		if rerr := r.carrier.Release(context.WithoutCancel(ctx), in.SID); rerr != nil {
			r.log.Error("sms: a rented number could not be recorded nor released; release it by hand",
				slog.String(obs.KeyNumberSID, in.SID), slog.String(obs.KeyErr, rerr.Error()))
		}
		return nil, err
	}
	session := row.Session
	return &Number{Session: session, Number: row.Number, Country: r.Country, Provider: row.Provider,
		CreatedAt: now.Format(time.RFC3339), ExpiresAt: row.ExpiresAt.Format(time.RFC3339),
		InboxURL: req.BaseURL + "/v1/sms/inbox?" + url.Values{"session": {session}}.Encode(),
		release:  func(ctx context.Context) error { return r.release(ctx, row) }}, nil
}

// release gives a session's number back and records it.
func (r *Routes) release(ctx context.Context, n state.SMSNumber) error {
	if err := r.carrier.Release(ctx, n.NumberSID); err != nil {
		return err
	}
	return r.store.MarkSMSReleased(n.Session)
}

// Message is one received SMS.
type Message struct {
	Sender     string `json:"sender"`
	Body       string `json:"body"`
	ReceivedAt string `json:"received_at"`
}

// Inbox is the answer of /v1/sms/inbox.
type Inbox struct {
	Session   string    `json:"session"`
	Number    string    `json:"number"`
	ExpiresAt string    `json:"expires_at"`
	Count     int       `json:"count"`
	Messages  []Message `json:"messages"`
}

func (r *Routes) inbox(ctx context.Context, req *catalog.Request) (any, error) {
	n, ok := r.store.SMSNumber(req.Args.Str("session"))
	if !ok {
		return nil, apierr.NotFound("no SMS session %q", req.Args.Str("session"))
	}
	if n.Released || n.Expired(r.now()) {
		return nil, apierr.Gone("the SMS session ended at %s and its number was given back", n.ExpiresAt.UTC().Format(time.RFC3339))
	}
	msgs, err := r.carrier.MessagesTo(ctx, n.Number, pageSize)
	if err != nil {
		return nil, err
	}
	out := Inbox{Session: n.Session, Number: n.Number, ExpiresAt: n.ExpiresAt.UTC().Format(time.RFC3339), Messages: []Message{}}
	for _, m := range msgs {
		at, ok := m.Sent()
		// Only what arrived during this session: the number may have had an earlier owner.
		if !ok || at.Before(n.CreatedAt.Add(-time.Minute)) {
			continue
		}
		out.Messages = append(out.Messages, Message{Sender: m.From, Body: m.Body, ReceivedAt: at.UTC().Format(time.RFC3339)})
	}
	out.Count = len(out.Messages)
	return out, nil
}

// Reap releases every number whose session has ended and is not released yet. It returns how
// many were released; one that fails is retried at the next pass.
func (r *Routes) Reap(ctx context.Context) int {
	released := 0
	for _, n := range r.store.SMSNumbers() {
		if n.Released || !n.Expired(r.now()) {
			continue
		}
		if err := r.release(ctx, n); err != nil {
			r.log.Warn("sms: releasing an expired number failed; retrying at the next pass",
				slog.String(obs.KeySession, n.Session), slog.String(obs.KeyErr, err.Error()))
			continue
		}
		released++
	}
	return released
}

// RunReaper reaps at once, then every period, until ctx ends. Nothing runs while the carrier
// is unconfigured.
func (r *Routes) RunReaper(ctx context.Context, period time.Duration) {
	if r.carrier.Ready() != nil {
		return
	}
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		r.Reap(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
