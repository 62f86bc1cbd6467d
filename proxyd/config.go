package proxyd

import (
	"fmt"
	"net/url"
	"time"
)

// Config is the [proxyd] section of the appliance configuration.
type Config struct {
	// Listen is where buyers connect (CONNECT only).
	Listen string `toml:"listen" doc:"where buyers connect (CONNECT only)"`
	// AdminSocket is the Unix socket of the admin API the api daemon sells through.
	AdminSocket string `toml:"admin_socket" doc:"Unix socket of the admin API the api daemon sells through"`
	// StateDir overrides the appliance's state_dir for proxyd's state (journal named proxyd).
	StateDir string `toml:"state_dir" doc:"overrides the appliance state_dir for proxyd state (journal named proxyd)"`
	// PublicHost and PublicPort are what a sold proxy URL names (the line's public address).
	PublicHost string `toml:"public_host" doc:"public host name or address a sold proxy URL names"`
	PublicPort int    `toml:"public_port" doc:"public port a sold proxy URL names"`
	// Ports lists the destination ports a tunnel may reach on any host (an AllowEgress target
	// also opens its own port, on its host only). Port 25 is refused whatever this says.
	Ports []int `toml:"ports" doc:"destination ports a tunnel may reach on any host (25 is always refused)"`
	// Realm is the Basic realm of the 407 challenge.
	Realm string `toml:"realm" doc:"Basic realm of the 407 challenge"`
	// ValidDays is the life of a package from its sale.
	ValidDays int `toml:"valid_days" doc:"life of a package from its sale, in days"`
	// IdleTimeout closes a tunnel in which no byte moved for this long.
	IdleTimeout time.Duration `toml:"idle_timeout" doc:"a tunnel in which no byte moved for this long is closed"`
	// SweepInterval is how often idle tunnels, expired packages and dirty meters are visited.
	SweepInterval time.Duration `toml:"sweep_interval" doc:"how often idle tunnels, expired packages and moved meters are visited"`
	// DialTimeout bounds resolving and dialling a tunnel's target.
	DialTimeout time.Duration `toml:"dial_timeout" doc:"bound on resolving and dialling a tunnel target"`
	// MaxTunnelsPerKey caps a key's concurrent tunnels; MaxTunnels caps them all.
	MaxTunnelsPerKey int `toml:"max_tunnels_per_key" doc:"concurrent tunnels per key"`
	MaxTunnels       int `toml:"max_tunnels" doc:"concurrent tunnels in all"`
	// MaxPending caps connections still in their CONNECT phase (slow heads). At the cap a new
	// connection closes the one that has waited longest without sending its head; only when
	// every pending connection is being decided (its head, with a key, arrived) is it dropped.
	MaxPending int `toml:"max_pending_connections" doc:"connections still sending their CONNECT head; at the cap a new one closes the one waiting longest"`
	// MaxPendingPerClient caps them per client (an IPv4 address or an IPv6 /64), and
	// MaxPendingPer56 and MaxPendingPer48 per IPv6 /56 and /48 (a home's and a site's
	// delegation), so idle sockets from one network cannot use up MaxPending.
	MaxPendingPerClient int `toml:"max_pending_per_client" doc:"connections per client (IPv4 address or IPv6 /64) still sending their CONNECT head; more get 429"`
	MaxPendingPer56     int `toml:"max_pending_per_56" doc:"connections per IPv6 /56 still sending their CONNECT head; more get 429"`
	MaxPendingPer48     int `toml:"max_pending_per_48" doc:"connections per IPv6 /48 still sending their CONNECT head; more get 429"`
	// HeaderTimeout is how long a connection may take to send its CONNECT head.
	HeaderTimeout time.Duration `toml:"header_timeout" doc:"time a connection has to send its CONNECT head before it is closed"`
	// MeterSlackBytes is the most a buyer's durable meter may lag the bytes really passed:
	// after kill -9 the meter can only be lower than the truth, by at most this much.
	MeterSlackBytes int64 `toml:"meter_slack_bytes" doc:"most a durable meter may lag the bytes really passed (the kill -9 bound)"`
	// SpliceWindowBytes is the largest span copied by the kernel (splice) between two meter
	// updates; near the end of a quota the copy falls back to exact user-space chunks.
	SpliceWindowBytes int64 `toml:"splice_window_bytes" doc:"largest span copied by splice between two meter updates (0: user-space copy only)"`
	// CopyPath is how tunnel bytes are copied: "splice" (kernel, Linux), "buffered" (read and
	// write through a pooled buffer) or "auto": measured at start, the cheaper one in CPU.
	CopyPath string `toml:"copy_path" doc:"tunnel copy: auto (measured at start), splice or buffered"`
	// AuthFailuresPerMinute limits wrong keys per client address before it gets 429.
	AuthFailuresPerMinute int `toml:"auth_failures_per_minute" doc:"wrong keys per client address per minute before 429"`

	// EchoURLs are IP-echo endpoints answering JSON with ip, country and ASN fields (ipinfo,
	// ip-api, ipapi.is style); they are fetched through the proxy itself, in order.
	EchoURLs []string `toml:"echo_urls" doc:"IP-echo endpoints (JSON with ip, country, ASN) fetched through the proxy before a sale"`
	// ExpectedCountry (ISO code) and ExpectedASNs ("AS3215") are what a live exit must show;
	// empty means not compared.
	ExpectedCountry string   `toml:"expected_country" doc:"ISO country code a live exit must show (empty: not compared)"`
	ExpectedASNs    []string `toml:"expected_asns" doc:"ASNs a live exit may show, e.g. AS3215 (empty: not compared)"`
	// Carrier and Mobile describe the line when the echo answer does not.
	Carrier string `toml:"carrier" doc:"carrier name when the echo answer has none"`
	Mobile  bool   `toml:"mobile" doc:"the line is a mobile (4G/5G) line"`
	// SpeedURL, when set, is downloaded through the exit at sale (at most SpeedBytes).
	SpeedURL   string `toml:"speed_url" doc:"file downloaded through the exit at sale for the speed figure (empty: round trip only)"`
	SpeedBytes int64  `toml:"speed_bytes" doc:"most bytes of speed_url downloaded"`
	// ReachabilityURL is an outside probe asked whether the proxy port answers from the
	// internet; "{host}" and "{port}" are replaced. Empty: reachability is reported unknown.
	ReachabilityURL string `toml:"reachability_url" doc:"outside probe asked whether the proxy port answers; {host} and {port} are replaced (empty: unknown)"`
	// StatusCacheTTL bounds how often /free/proxy/status re-checks the exit.
	StatusCacheTTL time.Duration `toml:"status_cache_ttl" doc:"how long /free/proxy/status reuses an exit check"`
	// CheckTimeout bounds one exit check.
	CheckTimeout time.Duration `toml:"check_timeout" doc:"bound on one exit check"`

	// AllowEgress lists HOST:PORT targets allowed although local, their port included
	// (tests and dev only).
	AllowEgress []string `toml:"allow_egress" doc:"HOST:PORT targets a tunnel may reach although local, their port included (tests and dev only)"`
	// Self lists the appliance's public addresses and prefixes (its WAN IP, the home IPv6
	// prefix) that tunnels must never reach.
	Self []string `toml:"self" doc:"public addresses and prefixes of the appliance (WAN IP, home IPv6 prefix) tunnels must never reach"`
}

// DefaultConfig is the production default.
func DefaultConfig() Config {
	return Config{
		Listen:                "0.0.0.0:8118",
		AdminSocket:           "/run/peage-proxyd/proxyd.sock",
		PublicPort:            8118,
		Ports:                 []int{443, 80},
		Realm:                 "peage proxy",
		ValidDays:             30,
		IdleTimeout:           5 * time.Minute,
		SweepInterval:         5 * time.Second,
		DialTimeout:           10 * time.Second,
		MaxTunnelsPerKey:      64,
		MaxTunnels:            8000,
		MaxPending:            1024,
		MaxPendingPerClient:   32,
		MaxPendingPer56:       64,
		MaxPendingPer48:       128,
		HeaderTimeout:         10 * time.Second,
		MeterSlackBytes:       4 << 20,
		SpliceWindowBytes:     256 << 10,
		CopyPath:              copyAuto,
		AuthFailuresPerMinute: 30,
		EchoURLs:              []string{"https://ipinfo.io/json", "http://ip-api.com/json/?fields=query,countryCode,as,isp,mobile"},
		ExpectedCountry:       "FR",
		SpeedBytes:            4 << 20,
		StatusCacheTTL:        time.Minute,
		CheckTimeout:          15 * time.Second,
	}
}

func (c *Config) validate() error {
	if c.ValidDays <= 0 {
		return fmt.Errorf("proxyd: valid_days must be positive")
	}
	if c.MaxTunnelsPerKey <= 0 || c.MaxTunnels <= 0 || c.MaxPending <= 0 || c.MaxPendingPerClient <= 0 ||
		c.MaxPendingPer56 <= 0 || c.MaxPendingPer48 <= 0 {
		return fmt.Errorf("proxyd: max_tunnels, max_tunnels_per_key, max_pending_connections and max_pending_per_client, _56 and _48 must be positive")
	}
	if c.HeaderTimeout <= 0 {
		return fmt.Errorf("proxyd: header_timeout must be positive")
	}
	if c.MeterSlackBytes < 64<<10 {
		return fmt.Errorf("proxyd: meter_slack_bytes must be at least 64 KiB")
	}
	if c.SpliceWindowBytes < 0 || c.SpliceWindowBytes > c.MeterSlackBytes/2 {
		return fmt.Errorf("proxyd: splice_window_bytes must be between 0 and meter_slack_bytes/2")
	}
	switch c.CopyPath {
	case copyAuto, copySplice, copyBuffered:
	default:
		return fmt.Errorf("proxyd: copy_path must be auto, splice or buffered, not %q", c.CopyPath)
	}
	if c.IdleTimeout <= 0 || c.SweepInterval <= 0 || c.DialTimeout <= 0 || c.CheckTimeout <= 0 {
		return fmt.Errorf("proxyd: idle_timeout, sweep_interval, dial_timeout and check_timeout must be positive")
	}
	for _, p := range c.Ports {
		if p <= 0 || p > 65535 {
			return fmt.Errorf("proxyd: port %d out of range", p)
		}
	}
	for _, u := range append(append([]string{}, c.EchoURLs...), c.SpeedURL, c.ReachabilityURL) {
		if u == "" {
			continue
		}
		if pu, err := url.Parse(u); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") {
			return fmt.Errorf("proxyd: %q is not an http(s) URL", u)
		}
	}
	return nil
}
