package proxyd

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/proxyd/client"
)

// ExitError says why the exit is not sellable (down, unreachable echo, wrong country or ASN).
type ExitError struct{ Reason string }

func (e *ExitError) Error() string { return "exit not live: " + e.Reason }

// dialViaSelf opens a tunnel to addr through this very proxy (its listener, its auth, its
// egress policy and dialer), so the exit check travels the path a buyer's bytes take.
func (s *Server) dialViaSelf(ctx context.Context, addr string) (net.Conn, error) {
	pa := s.probeAddr.Load()
	if pa == nil {
		return nil, errors.New("the proxy listener is not running")
	}
	host, port, err := net.SplitHostPort(*pa)
	if err != nil {
		return nil, err
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	auth := base64.StdEncoding.EncodeToString([]byte("probe:" + s.probeKey))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: Basic %s\r\n\r\n", addr, addr, auth)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("CONNECT through the proxy: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		_ = c.Close()
		return nil, fmt.Errorf("CONNECT through the proxy: %s (%s)", resp.Status, resp.Header.Get("Proxy-Status"))
	}
	_ = c.SetDeadline(time.Time{})
	if br.Buffered() > 0 {
		return &bufConn{Conn: c, r: br}, nil
	}
	return c, nil
}

type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufConn) Read(p []byte) (int, error) { return b.r.Read(p) }

func (s *Server) probeClient() *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy: nil,
			DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
				return s.dialViaSelf(ctx, addr)
			},
			DisableKeepAlives: true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// CheckExit fetches the configured echo endpoints through the proxy and compares what they
// see with the expected country and ASN.
func (s *Server) CheckExit(ctx context.Context) (client.Exit, time.Duration, error) {
	if len(s.cfg.EchoURLs) == 0 {
		return client.Exit{}, 0, &ExitError{Reason: "no echo endpoint is configured"}
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.CheckTimeout)
	defer cancel()
	hc := s.probeClient()
	var reasons []string
	for _, u := range s.cfg.EchoURLs {
		start := time.Now()
		ex, err := fetchEcho(ctx, hc, u)
		rtt := time.Since(start)
		if err != nil {
			reasons = append(reasons, err.Error())
			continue
		}
		s.learnExit(ctx, ex.IP)
		if ex.Carrier == "" {
			ex.Carrier = s.cfg.Carrier
		}
		ex.Mobile = ex.Mobile || s.cfg.Mobile
		ex.CheckedAt = s.now().UTC()
		if c := s.cfg.ExpectedCountry; c != "" && !strings.EqualFold(c, ex.Country) {
			return ex, rtt, &ExitError{Reason: fmt.Sprintf("the exit shows country %q, expected %q", ex.Country, c)}
		}
		if len(s.cfg.ExpectedASNs) > 0 && !containsFold(s.cfg.ExpectedASNs, ex.ASN) {
			return ex, rtt, &ExitError{Reason: fmt.Sprintf("the exit shows %s, expected one of %s", ex.ASN, strings.Join(s.cfg.ExpectedASNs, ", "))}
		}
		return ex, rtt, nil
	}
	return client.Exit{}, 0, &ExitError{Reason: strings.Join(reasons, "; ")}
}

// learnExit makes the exit's public address (as the echo saw it) a forbidden target of every
// policy sharing proxyd's learned set: a tunnel to it would hairpin into the home router and
// its port-forwarded LAN hosts. It runs whatever the rest of the check says: a wrong country
// does not make the address any less the box's own.
func (s *Server) learnExit(ctx context.Context, ip string) {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return
	}
	if s.egress.LearnSelf(a) {
		s.log.LogAttrs(ctx, slog.LevelInfo, "proxyd learned the exit's public address; tunnels to it are refused", slog.String(obs.KeyAddr, a.String()))
	}
}

func containsFold(list []string, v string) bool {
	for _, x := range list {
		if strings.EqualFold(x, v) {
			return true
		}
	}
	return false
}

func fetchEcho(ctx context.Context, hc *http.Client, u string) (client.Exit, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return client.Exit{}, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return client.Exit{}, fmt.Errorf("echo %s: %v", req.URL.Host, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return client.Exit{}, fmt.Errorf("echo %s: %v", req.URL.Host, err)
	}
	if resp.StatusCode != http.StatusOK {
		return client.Exit{}, fmt.Errorf("echo %s answered %d", req.URL.Host, resp.StatusCode)
	}
	ex, err := parseEcho(b)
	if err != nil {
		return client.Exit{}, fmt.Errorf("echo %s: %v", req.URL.Host, err)
	}
	ex.Source = req.URL.Host
	return ex, nil
}

var asnRE = regexp.MustCompile(`(?i)\bAS(\d+)\b`)

// parseEcho reads the common IP-echo shapes: ipinfo (ip, country, org "AS3215 Orange"),
// ip-api (query, countryCode, as, isp, mobile), ipapi.is (asn{asn, org}), plain {ip, country, asn}.
func parseEcho(b []byte) (client.Exit, error) {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return client.Exit{}, errors.New("answer is not a JSON object")
	}
	str := func(keys ...string) string {
		for _, k := range keys {
			if v, ok := m[k].(string); ok && v != "" {
				return v
			}
		}
		return ""
	}
	ex := client.Exit{IP: str("ip", "query"), Country: strings.ToUpper(str("country_code", "countryCode", "country"))}
	if len(ex.Country) != 2 {
		ex.Country = strings.ToUpper(str("countryCode", "country_code"))
	}
	asText := str("as", "org", "asn")
	switch v := m["asn"].(type) {
	case float64:
		ex.ASN = "AS" + strconv.FormatInt(int64(v), 10)
	case map[string]any:
		if n, ok := v["asn"].(float64); ok {
			ex.ASN = "AS" + strconv.FormatInt(int64(n), 10)
		}
		if o, ok := v["org"].(string); ok && ex.Carrier == "" {
			ex.Carrier = o
		}
	}
	if ex.ASN == "" {
		if sm := asnRE.FindStringSubmatch(asText); sm != nil {
			ex.ASN = "AS" + sm[1]
		}
	}
	if ex.Carrier == "" {
		ex.Carrier = str("carrier", "isp")
	}
	if ex.Carrier == "" {
		ex.Carrier = strings.TrimSpace(asnRE.ReplaceAllString(str("org", "as"), ""))
	}
	if c, ok := m["carrier"].(map[string]any); ok {
		if n, ok := c["name"].(string); ok {
			ex.Carrier = n
		}
		ex.Mobile = true
	}
	if mob, ok := m["mobile"].(bool); ok {
		ex.Mobile = ex.Mobile || mob
	}
	if ex.IP == "" {
		return client.Exit{}, errors.New("answer has no ip")
	}
	return ex, nil
}

// measureSpeed downloads at most SpeedBytes of SpeedURL through the proxy.
func (s *Server) measureSpeed(ctx context.Context, rtt time.Duration) client.Speed {
	sp := client.Speed{RoundTripMS: rtt.Milliseconds(), Method: "echo round trip only (no speed_url configured)", MeasuredAt: s.now().UTC()}
	if s.cfg.SpeedURL == "" {
		return sp
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.CheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.cfg.SpeedURL, nil)
	if err != nil {
		return sp
	}
	start := time.Now()
	resp, err := s.probeClient().Do(req)
	if err != nil {
		sp.Method = "download probe failed: " + err.Error()
		return sp
	}
	defer resp.Body.Close()
	n, _ := io.Copy(io.Discard, io.LimitReader(resp.Body, s.cfg.SpeedBytes))
	el := time.Since(start)
	sp.ProbeBytes = n
	if el > 0 && n > 0 {
		sp.DownBitsPerSec = n * 8 * int64(time.Second) / int64(el)
	}
	sp.Method = fmt.Sprintf("download of %d bytes through the exit", n)
	return sp
}

// Sell checks the exit live and, only then, issues a package.
func (s *Server) Sell(ctx context.Context, gb int) (*client.Sale, error) {
	if s.cfg.PublicHost == "" || s.cfg.PublicPort == 0 {
		return nil, &client.Error{Code: client.CodeUnavailable, Message: "proxyd public_host/public_port are not configured"}
	}
	if gb <= 0 || gb > 1000 {
		return nil, &client.Error{Code: client.CodeBadRequest, Message: "gb must be between 1 and 1000"}
	}
	ex, rtt, err := s.CheckExit(ctx)
	s.rememberExit(ex, err)
	if err != nil {
		return nil, &client.Error{Code: client.CodeExitDown, Message: err.Error()}
	}
	sp := s.measureSpeed(ctx, rtt)
	key, p, err := s.Issue(ctx, gb)
	if err != nil {
		return nil, err
	}
	return &client.Sale{
		Key: key, GB: gb, Bytes: p.Bytes, ValidDays: s.cfg.ValidDays, CreatedAt: p.CreatedAt, ExpiresAt: p.ExpiresAt,
		ProxyHost: s.cfg.PublicHost, ProxyPort: s.cfg.PublicPort, Exit: ex, Speed: sp,
	}, nil
}

// rememberExit keeps the latest exit check for Status (a sale's check counts as one).
func (s *Server) rememberExit(ex client.Exit, err error) {
	st := &exitStatus{live: err == nil, at: s.now()}
	if ex.IP != "" {
		st.exit = &ex
	}
	if err != nil {
		st.problem = err.Error()
	}
	s.statusMu.Lock()
	s.exitCache = st
	s.statusMu.Unlock()
}

type exitStatus struct {
	live    bool
	exit    *client.Exit
	problem string
	at      time.Time
}

type reachStatus struct {
	r    client.Reachability
	note string
	at   time.Time
}

// Status reports the exit and the reachability of the proxy port, each re-checked at most
// once per StatusCacheTTL (the free route must not become a way to hammer the echo services).
func (s *Server) Status(ctx context.Context) (*client.Status, error) {
	// One refresh at a time: concurrent callers wait for it and share its answer.
	s.refreshMu.Lock()
	defer s.refreshMu.Unlock()
	s.statusMu.Lock()
	ex, re := s.exitCache, s.reachCache
	s.statusMu.Unlock()
	now := s.now()
	if ex == nil || now.Sub(ex.at) >= s.cfg.StatusCacheTTL {
		e, _, err := s.CheckExit(ctx)
		s.rememberExit(e, err)
		s.statusMu.Lock()
		ex = s.exitCache
		s.statusMu.Unlock()
	}
	if re == nil || now.Sub(re.at) >= s.cfg.StatusCacheTTL {
		r, note := s.reachability(ctx)
		re = &reachStatus{r: r, note: note, at: now}
		s.statusMu.Lock()
		s.reachCache = re
		s.statusMu.Unlock()
	}
	return &client.Status{
		Live: ex.live, Exit: ex.exit, Problem: ex.problem, Reachable: re.r, ReachableNote: re.note,
		ProxyHost: s.cfg.PublicHost, ProxyPort: s.cfg.PublicPort, CheckedAt: ex.at.UTC(),
	}, nil
}

// reachability asks the configured outside probe whether the public port answers. The probe
// is reached directly (it is an outside vantage point, not a target of the proxy).
func (s *Server) reachability(ctx context.Context) (client.Reachability, string) {
	if s.cfg.ReachabilityURL == "" {
		return client.Unknown, "no outside probe is configured (proxyd.reachability_url); the appliance cannot see its own port from the internet"
	}
	if s.cfg.PublicHost == "" {
		return client.Unknown, "proxyd.public_host is not configured"
	}
	u := strings.NewReplacer("{host}", s.cfg.PublicHost, "{port}", strconv.Itoa(s.cfg.PublicPort)).Replace(s.cfg.ReachabilityURL)
	ctx, cancel := context.WithTimeout(ctx, s.cfg.CheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return client.Unknown, "bad reachability_url"
	}
	hc := &http.Client{Transport: &http.Transport{Proxy: nil}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Do(req)
	if err != nil {
		return client.Unknown, "the outside probe did not answer"
	}
	defer resp.Body.Close()
	var v struct {
		Reachable *bool `json:"reachable"`
		Open      *bool `json:"open"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&v) != nil {
		return client.Unknown, "the outside probe gave no usable answer"
	}
	r := v.Reachable
	if r == nil {
		r = v.Open
	}
	switch {
	case r == nil:
		return client.Unknown, "the outside probe gave no usable answer"
	case *r:
		return client.Reachable, "outside probe " + req.URL.Host
	default:
		return client.Unreachable, "outside probe " + req.URL.Host
	}
}

// DevEchoHandler answers like an IP-echo service (ipinfo shape) with a fixed country, ASN and
// carrier, and the caller's address as the IP. `appliance dev` serves it on loopback (listed
// in echo_urls and allow_egress) so a sale works offline through the same path as in
// production; it must never be an echo endpoint of a real appliance.
func DevEchoHandler(country, asn, carrier string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ip, _, _ := net.SplitHostPort(r.RemoteAddr)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"ip": ip, "country": country, "org": asn + " " + carrier})
	})
}
