// Package enrol is the public end of a box's enrolment: the gateway's HTTPS route a box
// redeems its one-time token on (no operator credential: the token is the credential), and the
// box's client, which makes its nkey on the box, sends only the public half, and trusts the
// gateway by the CA pin its token carries.
package enrol

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"time"

	"github.com/nats-io/nkeys"

	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/fleet/hub"
	"github.com/peage/appliance/internal/fleet/tunnel"
	"github.com/peage/appliance/internal/netlimit"
	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/internal/ratelimit"
)

// Redeemer spends a token (the hub).
type Redeemer interface {
	Redeem(secret, box, nkeyPub, wgPub string) (fleet.Credentials, error)
}

// Limits bound the redemptions one client (an IPv4 address, an IPv6 /64) may attempt: a
// token is 256 random bits, so this is not what stops a guesser, but it keeps one client from
// making the gateway hash and write for every request it sends.
type Limits struct {
	PerMinute int // default 6
	Burst     int // default 5
	// Now is the limiter's clock (default time.Now).
	Now func() time.Time
}

// maxClients bounds the clients remembered; past it the least recently seen is forgotten.
const maxClients = 10000

// Handler serves POST fleet.EnrolPath: a fleet.EnrolRequest in, the box's credentials (without
// a seed) out, once.
func Handler(r Redeemer, lim Limits, log *slog.Logger) http.Handler {
	if lim.PerMinute <= 0 {
		lim.PerMinute = 6
	}
	if lim.Burst <= 0 {
		lim.Burst = 5
	}
	if lim.Now == nil {
		lim.Now = time.Now
	}
	if log == nil {
		log = obs.Discard()
	}
	h := &handler{r: r, log: log.With(obs.KeyComponent, "fleet-enrol"),
		limiter: ratelimit.New(ratelimit.Config{PerMinute: lim.PerMinute, Burst: lim.Burst, MaxClients: maxClients}, lim.Now)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+fleet.EnrolPath, h.redeem)
	return mux
}

type handler struct {
	r       Redeemer
	log     *slog.Logger
	limiter *ratelimit.Limiter
}

// allow spends one of the client's redemptions, or says how long until one is back.
func (h *handler) allow(remote string) (bool, time.Duration) {
	ap, err := netip.ParseAddrPort(remote)
	if err != nil {
		return false, time.Minute
	}
	return h.limiter.Take(netlimit.ClientOf(ap.Addr().Unmap()).String())
}

func (h *handler) redeem(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if ok, wait := h.allow(r.RemoteAddr); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
		http.Error(w, "too many enrolment attempts", http.StatusTooManyRequests)
		return
	}
	var req fleet.EnrolRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 4<<10)).Decode(&req); err != nil {
		http.Error(w, "body: a JSON enrolment request", http.StatusBadRequest)
		return
	}
	if err := fleet.ValidName(req.Box); err != nil {
		http.Error(w, "box: "+err.Error(), http.StatusBadRequest)
		return
	}
	if !nkeys.IsValidPublicUserKey(req.Nkey) {
		http.Error(w, "nkey: not a public user nkey", http.StatusBadRequest)
		return
	}
	if req.WireGuard != "" {
		if _, err := tunnel.ParseKey(req.WireGuard); err != nil {
			http.Error(w, "wireguard: not a WireGuard public key (32 bytes in base64)", http.StatusBadRequest)
			return
		}
	}
	creds, err := h.r.Redeem(req.Token, req.Box, req.Nkey, req.WireGuard)
	switch {
	case errors.Is(err, hub.ErrTokenRefused):
		h.log.Warn("enrolment token refused", slog.String(obs.KeyAddr, r.RemoteAddr), slog.String(obs.KeyDetail, req.Box))
		http.Error(w, "token: refused (unknown, used, expired or made for another box)", http.StatusForbidden)
		return
	case errors.Is(err, hub.ErrKeyInUse):
		http.Error(w, "nkey: "+err.Error(), http.StatusConflict)
		return
	case errors.Is(err, hub.ErrTunnelKeyInUse):
		http.Error(w, "wireguard: "+err.Error(), http.StatusConflict)
		return
	case errors.Is(err, hub.ErrExternal):
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	case err != nil:
		h.log.Error("enrolment failed", slog.String(obs.KeyErr, err.Error()))
		http.Error(w, "enrolment failed", http.StatusInternalServerError)
		return
	}
	h.log.Info("box enrolled", slog.String(obs.KeyDetail, req.Box), slog.String(obs.KeyAddr, r.RemoteAddr))
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(creds)
}

// Serve answers enrolment over TLS on ln until ctx ends.
func Serve(ctx context.Context, ln net.Listener, tlsConfig *tls.Config, h http.Handler) error {
	srv := &http.Server{Handler: h, TLSConfig: tlsConfig, ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	err := srv.ServeTLS(ln, "", "")
	<-done
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Join redeems token at the gateway's enrolment URL (https://host:port) for box with the nkey
// of seed and the WireGuard private key wgKey (base64, "" for none), both made on the box
// (NewSeed, NewTunnelKey) and kept before this call, so that a box whose answer was lost asks
// again with the same keys; only the public halves are sent. It returns the complete
// credentials, the private key in the tunnel peer the gateway answered, if any. The gateway
// is trusted only if its certificate chains to the CA the token pins.
func Join(ctx context.Context, gateway string, token fleet.EnrolToken, box string, seed []byte, wgKey string) (fleet.Credentials, error) {
	if err := fleet.ValidName(box); err != nil {
		return fleet.Credentials{}, fmt.Errorf("box: %w", err)
	}
	u, err := url.Parse(gateway)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return fleet.Credentials{}, fmt.Errorf("gateway %q: want https://host:port of its enrolment listener", gateway)
	}
	kp, err := nkeys.FromSeed(seed)
	if err != nil {
		return fleet.Credentials{}, fmt.Errorf("box seed: %w", err)
	}
	pub, err := kp.PublicKey()
	if err != nil || !nkeys.IsValidPublicUserKey(pub) {
		return fleet.Credentials{}, errors.New("box seed: not a user nkey")
	}
	req := fleet.EnrolRequest{Token: token.Secret, Box: box, Nkey: pub}
	if wgKey != "" {
		k, err := tunnel.ParseKey(wgKey)
		if err != nil {
			return fleet.Credentials{}, fmt.Errorf("box WireGuard key: %w", err)
		}
		req.WireGuard = k.PublicKey().String()
	}
	body, _ := json.Marshal(req)
	post, err := http.NewRequestWithContext(ctx, http.MethodPost, u.JoinPath(fleet.EnrolPath).String(), bytes.NewReader(body))
	if err != nil {
		return fleet.Credentials{}, err
	}
	post.Header.Set("Content-Type", "application/json")
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: pinned(token.CAPin, u.Hostname()), ForceAttemptHTTP2: true}}
	resp, err := client.Do(post)
	if err != nil {
		return fleet.Credentials{}, fmt.Errorf("enrol: %w", err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fleet.Credentials{}, fmt.Errorf("enrol: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fleet.Credentials{}, &RefusedError{Status: resp.StatusCode, Message: string(bytes.TrimSpace(answer))}
	}
	var creds fleet.Credentials
	if err := json.Unmarshal(answer, &creds); err != nil {
		return fleet.Credentials{}, fmt.Errorf("enrol: %w", err)
	}
	if creds.Box != box {
		return fleet.Credentials{}, fmt.Errorf("enrol: the gateway enrolled %q, not %q", creds.Box, box)
	}
	creds.Seed = string(seed)
	if creds.WireGuard != nil {
		if wgKey == "" {
			return fleet.Credentials{}, errors.New("enrol: the gateway answered a tunnel peer for no WireGuard key")
		}
		creds.WireGuard.PrivateKey = wgKey
	}
	if err := creds.Validate(); err != nil {
		return fleet.Credentials{}, fmt.Errorf("enrol: %w", err)
	}
	return creds, nil
}

// NewSeed makes a box's nkey (a user key), its identity on the fleet.
func NewSeed() ([]byte, error) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		return nil, err
	}
	return kp.Seed()
}

// NewTunnelKey makes a box's WireGuard private key (base64), its end of the fleet's proxy
// tunnel.
func NewTunnelKey() (string, error) {
	k, err := tunnel.GenerateKey()
	if err != nil {
		return "", err
	}
	return k.String(), nil
}

// RefusedError is the gateway's refusal of an enrolment.
type RefusedError struct {
	Status  int
	Message string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("enrol: the gateway answered %d %s: %s", e.Status, http.StatusText(e.Status), e.Message)
}

// pinned trusts a server whose chain holds the CA of pin and whose certificate, issued by it,
// names host: the token brings the trust that a box without any CA yet cannot have.
func pinned(pin, host string) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS13,
		// The standard verification is replaced, not skipped: VerifyConnection does it
		// against the pinned CA as the only root.
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("the gateway sent no certificate")
			}
			roots := x509.NewCertPool()
			for _, c := range cs.PeerCertificates[1:] {
				if c.IsCA && fleet.CAPin(c) == pin {
					roots.AddCert(c)
				}
			}
			_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, DNSName: host,
				KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
			if err != nil {
				return fmt.Errorf("the gateway's certificate is not from the fleet CA the token pins: %w", err)
			}
			return nil
		},
	}
}
