// Package proxyroutes sells residential proxy packages (proxy.1gb, proxy.5gb, proxy.20gb) and
// answers the free checks (free.proxy.status, free.proxy.usage). It talks to proxyd through
// proxyd/client (a Unix-socket client in production, the in-process server in `appliance dev`)
// and never imports the proxy itself.
//
// A sale is the paid call's work: proxyd checks the exit live through its own listener and
// dialer, then issues the key. Any failure is a 503 before the key exists, so nothing is
// charged. The result carries a Revoke method: when settlement fails after the work, the gate
// revokes the key that was just issued.
package proxyroutes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/proxyd/client"
)

// KeyHeader carries the key of /free/proxy/usage (a header keeps it out of URLs and logs).
const KeyHeader = "X-Proxy-Key"

// Routes holds the handlers' dependencies.
type Routes struct {
	svc client.Service
	log *slog.Logger

	// health is the last exit status seen, refreshed in the background by ready.
	health     atomic.Pointer[health]
	refreshing sync.Mutex
}

type health struct {
	err error
	at  time.Time
}

// healthTTL is how long a status answer decides readiness before it is refreshed; a failed
// one only failTTL, so that sales resume soon after the exit (or, on a fleet's gateway, the
// first box with a proxy) comes back.
const (
	healthTTL = 30 * time.Second
	failTTL   = 5 * time.Second
)

// With builds the routes on a proxyd service.
func With(svc client.Service, log *slog.Logger) *Routes {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Routes{svc: svc, log: log}
}

// Bind attaches the handlers to their catalog entries by ID.
func (r *Routes) Bind(c *catalog.Catalog) error { return r.bind(c.Bind) }

// Rebind attaches them in place of the ones bound (a fleet gateway, whose packages live on its
// boxes, over the proxyd of its own host); an entry not bound yet is bound.
func (r *Routes) Rebind(c *catalog.Catalog) error {
	return r.bind(func(id string, h catalog.Handler, ready func() error) error {
		if e := c.Entry(id); e != nil && e.Handler != nil {
			return c.Override(id, h, ready)
		}
		return c.Bind(id, h, ready)
	})
}

func (r *Routes) bind(bind func(string, catalog.Handler, func() error) error) error {
	for id, gb := range map[string]int{"proxy.1gb": 1, "proxy.5gb": 5, "proxy.20gb": 20} {
		if err := bind(id, r.sell(gb), r.ready); err != nil {
			return err
		}
	}
	r.ready() // the first exit check starts with the daemon, not with the first buyer
	if err := bind("free.proxy.status", r.Status, nil); err != nil {
		return err
	}
	return bind("free.proxy.usage", r.Usage, nil)
}

// Placer is a proxyd that sells where the buyer asks: a fleet's gateway, whose boxes exit in
// several countries and networks.
type Placer interface {
	SellWhere(ctx context.Context, gb int, country string, asn uint32) (*client.Sale, error)
}

// sellWhere sells within the buyer's country and ASN (zero: any). One proxyd has one exit:
// it sells only when its last checked exit is there, and the sale's own live check must agree.
func (r *Routes) sellWhere(ctx context.Context, gb int, country string, asn uint32) (*client.Sale, error) {
	if p, ok := r.svc.(Placer); ok {
		return p.SellWhere(ctx, gb, country, asn)
	}
	if country == "" && asn == 0 {
		return r.svc.Sell(ctx, gb)
	}
	st, err := r.svc.Status(ctx)
	if err != nil {
		return nil, err
	}
	if st.Exit == nil || !exitFits(*st.Exit, country, asn) {
		return nil, &client.Error{Code: client.CodeNoExit, Message: "this proxy's exit is not in " + wanted(country, asn)}
	}
	s, err := r.svc.Sell(ctx, gb)
	if err != nil {
		return nil, err
	}
	if !exitFits(s.Exit, country, asn) {
		_ = r.svc.Revoke(context.WithoutCancel(ctx), s.Key)
		return nil, &client.Error{Code: client.CodeNoExit, Message: "the exit's live check found it outside " + wanted(country, asn)}
	}
	return s, nil
}

func exitFits(e client.Exit, country string, asn uint32) bool {
	return (country == "" || strings.EqualFold(e.Country, country)) &&
		(asn == 0 || strings.TrimPrefix(strings.ToUpper(e.ASN), "AS") == strconv.FormatUint(uint64(asn), 10))
}

func wanted(country string, asn uint32) string {
	w := strings.ToUpper(country)
	if asn != 0 {
		w = strings.TrimSpace(w + " AS" + strconv.FormatUint(uint64(asn), 10))
	}
	return w
}

// ready answers from the last known exit status and refreshes it in the background when it
// is stale, so the catalog and the 402 path never wait on an exit check. Before the first
// answer the routes are unavailable: on a box just set up, nothing is sold (no 402 offered)
// before the exit has shown its country, ASN and reachability once.
func (r *Routes) ready() error {
	h := r.health.Load()
	if h == nil || time.Since(h.at) > healthTTL || h.err != nil && time.Since(h.at) > failTTL {
		if r.refreshing.TryLock() {
			go func() {
				defer r.refreshing.Unlock()
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				r.check(ctx)
			}()
		}
	}
	if h == nil { // first start: nothing is sold before the exit has been checked once
		return errExitUnchecked
	}
	return h.err
}

// CheckExit asks proxyd for the exit's status now and returns what the sales' readiness
// becomes (nil: packages can be sold). The routes do it themselves in the background; a
// caller that must not race the first check (a test, a start-up probe) calls it.
func (r *Routes) CheckExit(ctx context.Context) error {
	r.refreshing.Lock()
	defer r.refreshing.Unlock()
	return r.check(ctx)
}

func (r *Routes) check(ctx context.Context) error {
	st, err := r.svc.Status(ctx)
	nh := &health{at: time.Now()}
	switch {
	case err != nil:
		nh.err = apierr.Unavailable("the proxy daemon does not answer; no package can be sold now")
	case !st.Live:
		nh.err = apierr.Unavailable("the proxy exit is not live (%s); no package can be sold now", st.Problem)
	case st.Reachable == client.Unreachable:
		nh.err = apierr.Unavailable("the proxy port does not answer from the internet (%s); no package can be sold now", st.ReachableNote)
	}
	r.health.Store(nh)
	return nh.err
}

var errExitUnchecked = apierr.Unavailable("the proxy exit has not been checked yet (country, ASN, reachability); it is being checked now")

// Exit is the exit object of the spec's proxy package.
type Exit struct {
	Carrier string `json:"carrier"`
	ASN     string `json:"asn"`
	Mobile  bool   `json:"mobile"`
	Country string `json:"country"`
}

// Sale is the proxy package resource of the spec, plus what a buyer needs to use it well.
type Sale struct {
	Key       string       `json:"key"`
	GB        int          `json:"gb"`
	ValidDays int          `json:"valid_days"`
	Tier      string       `json:"tier"`
	Proxy     string       `json:"proxy"`
	Usage     string       `json:"usage"`
	Exit      Exit         `json:"exit"`
	Bytes     int64        `json:"bytes"`
	ExpiresAt time.Time    `json:"expires_at"`
	Speed     client.Speed `json:"speed"`
	// UsageCheck is the free call that shows used and remaining bytes.
	UsageCheck string `json:"usage_check"`
	Metering   string `json:"metering"`

	svc client.Service
}

// Revoke ends the package; the payment gate calls it when settlement fails after the sale.
func (s *Sale) Revoke(ctx context.Context) error { return s.svc.Revoke(ctx, s.Key) }

// Metering is the one-line statement of what counts, shown with every sale.
const Metering = "Both directions of every tunnel count, byte for byte, as they pass the proxy: " +
	"request and response payload including TLS handshakes and records. CONNECT request and reply " +
	"headers and refused tunnels do not count. 1 GB = 1,073,741,824 bytes. The package ends 30 days " +
	"after sale or when its bytes are spent; a tunnel is cut at the exact byte. One fixed exit " +
	"(sticky by nature); the home line may get a new IP from the ISP."

func (r *Routes) sell(gb int) catalog.Handler {
	return func(ctx context.Context, req *catalog.Request) (any, error) {
		s, err := r.sellWhere(ctx, gb, req.Args.Str("country"), uint32(req.Args.Int("asn")))
		if err != nil {
			switch {
			case client.IsCode(err, client.CodeNoExit):
				return nil, &apierr.Error{Code: apierr.CodeUnavailable, Cause: err,
					Message: "no proxy exit matches the country and asn asked, so no package was sold and nothing was charged: " + noExitDetail(err)}
			case client.IsCode(err, client.CodeExitDown):
				return nil, &apierr.Error{Code: apierr.CodeUnavailable, Cause: err,
					Message: "the proxy exit could not be verified live, so no package was sold and nothing was charged; retry later"}
			default:
				return nil, &apierr.Error{Code: apierr.CodeUnavailable, Cause: err,
					Message: "the proxy could not issue a package right now; nothing was charged"}
			}
		}
		addr := net.JoinHostPort(s.ProxyHost, strconv.Itoa(s.ProxyPort))
		proxyURL := fmt.Sprintf("http://buyer:%s@%s", s.Key, addr)
		base := req.BaseURL
		r.log.LogAttrs(ctx, slog.LevelInfo, "proxy package sold", slog.Int(obs.KeyGB, gb), slog.String(obs.KeyExitASN, s.Exit.ASN))
		out := &Sale{
			Key: s.Key, GB: s.GB, ValidDays: s.ValidDays, Tier: "residential", Proxy: proxyURL,
			Usage:      fmt.Sprintf("curl --proxy '%s' https://ipinfo.io/json", proxyURL),
			Exit:       Exit{Carrier: s.Exit.Carrier, ASN: s.Exit.ASN, Mobile: s.Exit.Mobile, Country: s.Exit.Country},
			Bytes:      s.Bytes,
			ExpiresAt:  s.ExpiresAt,
			Speed:      s.Speed,
			UsageCheck: fmt.Sprintf("curl -H '%s: %s' %s/free/proxy/usage", KeyHeader, s.Key, base),
			Metering:   Metering,
			svc:        r.svc,
		}
		if s.Box == "" {
			return out, nil
		}
		// Sold on a fleet's box: the answer names it, and so does the ledger.
		body, err := json.Marshal(out)
		if err != nil {
			_ = out.Revoke(context.WithoutCancel(ctx))
			return nil, err
		}
		return &catalog.Raw{ContentType: "application/json", Header: map[string]string{catalog.HeaderBox: s.Box},
			Body: body, OnRevoke: out.Revoke}, nil
	}
}

func noExitDetail(err error) string {
	var ce *client.Error
	if errors.As(err, &ce) {
		return ce.Message
	}
	return err.Error()
}

// UsageResult is the free usage check's answer.
type UsageResult struct {
	Bytes     int64     `json:"bytes"`
	Used      int64     `json:"used"`
	Remaining int64     `json:"remaining"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
	State     string    `json:"state"`
	Tunnels   int       `json:"open_tunnels"`
	Metering  string    `json:"metering"`
}

// Usage answers used, remaining and expiry for the key in the X-Proxy-Key header.
func (r *Routes) Usage(ctx context.Context, req *catalog.Request) (any, error) {
	key := ""
	if req.Header != nil {
		key = req.Header.Get(KeyHeader)
	}
	if key == "" {
		return nil, apierr.BadRequest("send the package key in the %s header (never in the URL)", KeyHeader)
	}
	u, err := r.svc.Usage(ctx, key)
	if err != nil {
		if client.IsCode(err, client.CodeUnknownKey) {
			return nil, apierr.NotFound("no proxy package has this key")
		}
		return nil, &apierr.Error{Code: apierr.CodeUnavailable, Cause: err, Message: "the proxy daemon does not answer right now"}
	}
	return &UsageResult{Bytes: u.Bytes, Used: u.Used, Remaining: u.Remaining, CreatedAt: u.CreatedAt,
		ExpiresAt: u.ExpiresAt, State: u.State, Tunnels: u.Tunnels, Metering: Metering}, nil
}

// StatusResult is /free/proxy/status.
type StatusResult struct {
	Live    bool    `json:"live"`
	Exit    *Exit   `json:"exit"`
	Carrier *string `json:"carrier"` // null without a live exit
	Problem string  `json:"problem,omitempty"`
	// Reachable says whether the proxy port answers from the internet: a boolean as the spec
	// asks "whether", null when no outside probe could tell.
	Reachable *bool `json:"reachable"`
	// ReachableNote says which outside probe answered, or why reachability is unknown.
	ReachableNote string    `json:"reachable_note"`
	Proxy         string    `json:"proxy"`
	CheckedAt     time.Time `json:"checked_at"`
}

// Status reports the exit, its carrier and whether the proxy port is reachable from outside.
func (r *Routes) Status(ctx context.Context, _ *catalog.Request) (any, error) {
	st, err := r.svc.Status(ctx)
	if err != nil {
		return nil, &apierr.Error{Code: apierr.CodeUnavailable, Cause: err, Message: "the proxy daemon does not answer right now"}
	}
	out := &StatusResult{Live: st.Live, Problem: st.Problem, ReachableNote: st.ReachableNote, CheckedAt: st.CheckedAt}
	if st.Reachable == client.Reachable || st.Reachable == client.Unreachable {
		reachable := st.Reachable == client.Reachable
		out.Reachable = &reachable
	}
	if st.ProxyHost != "" {
		out.Proxy = "http://" + net.JoinHostPort(st.ProxyHost, strconv.Itoa(st.ProxyPort))
	}
	if st.Exit != nil {
		out.Exit = &Exit{Carrier: st.Exit.Carrier, ASN: st.Exit.ASN, Mobile: st.Exit.Mobile, Country: st.Exit.Country}
		out.Carrier = &st.Exit.Carrier
	}
	return out, nil
}
