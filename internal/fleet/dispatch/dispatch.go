// Package dispatch is the gateway's call to the fleet: it picks a box for a route from the
// registry, sends the call as a NATS request bounded by the context's deadline, reassembles a
// chunked answer, and retries once on another box when the call has no side effects and the
// first box failed or went away. Its errors are typed so that the edge maps each to an answer
// that charges nothing.
package dispatch

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"

	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/fleet/registry"
)

// The kinds of failure, for errors.Is.
var (
	// ErrNoBox: no live box serves the route within the constraints (503 at the edge).
	ErrNoBox = registry.ErrNoBox
	// ErrBoxFailed: the box answered an error, or went silent or away mid-call (502).
	ErrBoxFailed = errors.New("box failed")
	// ErrTimeout: the call's deadline passed (504).
	ErrTimeout = errors.New("fleet call timed out")
)

// Error is a failed call: which box (if one was picked), and why.
type Error struct {
	Route string
	Box   string
	Kind  error // ErrNoBox, ErrBoxFailed or ErrTimeout
	Cause string
}

func (e *Error) Error() string {
	msg := "fleet: " + e.Route
	if e.Box != "" {
		msg += " on " + e.Box
	}
	msg += ": " + e.Kind.Error()
	if e.Cause != "" {
		msg += ": " + e.Cause
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Kind }

// Request is one call.
type Request struct {
	Body []byte
	// NoSideEffects allows a second attempt on another box when the first fails.
	NoSideEffects bool
}

// Config of a dispatcher.
type Config struct {
	// MaxAnswer bounds the bytes of one answer (default 64 MiB).
	MaxAnswer int
	// SilenceFactor times a box's progress interval, but no less than MinSilence, is the
	// silence after which the box counts as gone (defaults 3 and 1 s: a busy box or link
	// delays a sign of life by more than one interval).
	SilenceFactor int
	MinSilence    time.Duration
}

// Dispatcher sends calls over one gateway connection. Every reply reaches it on one wildcard
// inbox subscription, as nats.go's own requests do, so a call costs no subscription.
type Dispatcher struct {
	nc     *nats.Conn
	view   *registry.View
	cfg    Config
	prefix string
	sub    *nats.Subscription

	mu    sync.Mutex
	calls map[string]*pending
}

type pending struct {
	mu     sync.Mutex
	msgs   []*nats.Msg
	bytes  int
	signal chan struct{}
}

// New subscribes the dispatcher's inbox on nc.
func New(nc *nats.Conn, view *registry.View, cfg Config) (*Dispatcher, error) {
	if cfg.MaxAnswer <= 0 {
		cfg.MaxAnswer = 64 << 20
	}
	if cfg.SilenceFactor <= 0 {
		cfg.SilenceFactor = 3
	}
	if cfg.MinSilence <= 0 {
		cfg.MinSilence = time.Second
	}
	d := &Dispatcher{nc: nc, view: view, cfg: cfg, prefix: nc.NewRespInbox() + ".", calls: map[string]*pending{}}
	sub, err := nc.Subscribe(d.prefix+"*", d.deliver)
	if err != nil {
		return nil, fmt.Errorf("fleet dispatch: %w", err)
	}
	// A chunked answer arrives faster than a slow caller reads it: the pending call holds it.
	_ = sub.SetPendingLimits(-1, -1)
	d.sub = sub
	return d, nil
}

// Close stops receiving replies.
func (d *Dispatcher) Close() { _ = d.sub.Unsubscribe() }

func (d *Dispatcher) deliver(m *nats.Msg) {
	token := m.Subject[len(d.prefix):]
	d.mu.Lock()
	p := d.calls[token]
	d.mu.Unlock()
	if p == nil {
		return // a late reply to a call that has ended
	}
	p.mu.Lock()
	p.msgs = append(p.msgs, m)
	p.bytes += len(m.Data)
	p.mu.Unlock()
	select {
	case p.signal <- struct{}{}:
	default:
	}
}

// Do runs route's call on a box that serves it within c, and returns the answer and the box
// that gave it. A failed call returns an *Error, or a plain error when the gateway's own NATS
// connection refused to send it (closed, or a request over the max payload); a call with side
// effects runs on one box at most.
func (d *Dispatcher) Do(ctx context.Context, route string, c registry.Constraints, req Request) ([]byte, string, error) {
	var tried []string
	var last error
	for attempt := 0; attempt < 2; attempt++ {
		rec, done, err := d.view.Pick(route, c, tried...)
		if err != nil {
			if last != nil {
				return nil, "", last
			}
			return nil, "", &Error{Route: route, Kind: ErrNoBox}
		}
		answer, gone, err := d.call(ctx, rec, route, req.Body)
		done()
		if gone {
			d.view.Gone(rec.Box)
		}
		if err == nil {
			return answer, rec.Box, nil
		}
		last = err
		if !req.NoSideEffects || !errors.Is(err, ErrBoxFailed) || ctx.Err() != nil {
			break
		}
		tried = append(tried, rec.Box)
	}
	return nil, "", last
}

// call runs one attempt; gone reports a box that went silent or is no longer subscribed, as
// opposed to one that answered an error.
func (d *Dispatcher) call(ctx context.Context, rec fleet.Record, route string, body []byte) (answer []byte, gone bool, err error) {
	fail := func(kind error, cause string) error {
		return &Error{Route: route, Box: rec.Box, Kind: kind, Cause: cause}
	}
	if ctx.Err() != nil {
		return nil, false, fail(ErrTimeout, ctx.Err().Error())
	}
	token := nuid.Next()
	p := &pending{signal: make(chan struct{}, 1)}
	d.mu.Lock()
	d.calls[token] = p
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		delete(d.calls, token)
		d.mu.Unlock()
	}()

	msg := nats.NewMsg(fleet.BoxSubject(rec.Box, route))
	msg.Reply = d.prefix + token
	msg.Data = body
	if deadline, ok := ctx.Deadline(); ok {
		msg.Header.Set(fleet.HeaderDeadline, strconv.FormatInt(deadline.UnixMilli(), 10))
	}
	if err := d.nc.PublishMsg(msg); err != nil {
		return nil, false, fmt.Errorf("fleet dispatch: send %s: %w", route, err)
	}

	silence := max(time.Duration(d.cfg.SilenceFactor)*rec.ProgressEvery(), d.cfg.MinSilence)
	quiet := time.NewTimer(silence)
	defer quiet.Stop()
	chunks, length, next := 0, 0, 1
	for {
		select {
		case <-ctx.Done():
			return nil, false, fail(ErrTimeout, ctx.Err().Error())
		case <-quiet.C:
			return nil, true, fail(ErrBoxFailed, "silent for "+silence.String())
		case <-p.signal:
		}
		p.mu.Lock()
		msgs := p.msgs
		p.msgs = nil
		tooBig := p.bytes > d.cfg.MaxAnswer
		p.mu.Unlock()
		if tooBig {
			return nil, false, fail(ErrBoxFailed, "answer over "+strconv.Itoa(d.cfg.MaxAnswer)+" bytes")
		}
		quiet.Reset(silence)
		for _, m := range msgs {
			if m.Header.Get("Status") == "503" { // NATS: no responders, the box is not there
				return nil, true, fail(ErrBoxFailed, "no responders")
			}
			switch status := m.Header.Get(fleet.HeaderStatus); {
			case status == fleet.StatusProgress:
			case status == fleet.StatusError:
				return nil, false, fail(ErrBoxFailed, m.Header.Get(fleet.HeaderError))
			case status == fleet.StatusOK && chunks == 0:
				var err1, err2 error
				chunks, err1 = strconv.Atoi(m.Header.Get(fleet.HeaderChunks))
				length, err2 = strconv.Atoi(m.Header.Get(fleet.HeaderLength))
				if err1 != nil || err2 != nil || chunks < 1 || length < len(m.Data) || length > d.cfg.MaxAnswer {
					return nil, false, fail(ErrBoxFailed, "malformed answer header")
				}
				answer = make([]byte, 0, length)
				answer = append(answer, m.Data...)
			case status == fleet.StatusChunk && chunks > 0:
				if i, err := strconv.Atoi(m.Header.Get(fleet.HeaderChunk)); err != nil || i != next || i >= chunks {
					return nil, false, fail(ErrBoxFailed, "chunk out of order")
				}
				next++
				answer = append(answer, m.Data...)
			default:
				return nil, false, fail(ErrBoxFailed, "unexpected reply "+strconv.Quote(status))
			}
			if chunks > 0 && len(answer) >= length {
				if len(answer) != length {
					return nil, false, fail(ErrBoxFailed, "answer longer than announced")
				}
				return answer, false, nil
			}
		}
	}
}

// DoOn runs route's call on the named box only (a proxy package lives on the box that sold
// it): ErrNoBox when that box is not live or does not serve route, never another box.
func (d *Dispatcher) DoOn(ctx context.Context, box, route string, req Request) ([]byte, error) {
	rec, ok := d.view.Box(box)
	if !ok || !rec.Serves(route) {
		return nil, &Error{Route: route, Box: box, Kind: ErrNoBox}
	}
	answer, gone, err := d.call(ctx, rec, route, req.Body)
	if gone {
		d.view.Gone(box)
	}
	return answer, err
}
