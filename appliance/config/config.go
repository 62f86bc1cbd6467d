// Package config composes the appliance's configuration from each part's own Config struct.
// One format (TOML), one file, every key documented with its default by `appliance config`;
// environment variables PEAGE_<SECTION>_<KEY> override the file. An unknown key or an invalid
// value stops the start with a message naming the key.
package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/clientid"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/server"
	"github.com/peage/appliance/internal/state"
)

// Config is the whole appliance configuration.
type Config struct {
	StateDir string         `toml:"state_dir" doc:"directory of durable state (journals, ledger, keys)"`
	Log      Log            `toml:"log"`
	API      server.Config  `toml:"api"`
	Admin    Admin          `toml:"admin"`
	Payment  paywall.Config `toml:"payment"`
	Routes   catalog.Names  `toml:"routes" doc:"neutral path segments standing for third-party site names"`
	Egress   Egress         `toml:"egress"`
	Inbox    Inbox          `toml:"inbox"`
	Parts                   // each daemon's own section, flattened into the file's top level
}

// Log configures logging.
type Log struct {
	Level  string `toml:"level" doc:"debug, info, warn or error"`
	Format string `toml:"format" doc:"json, text, or auto (text on a terminal)"`
}

// Admin is the operator listener (/healthz, /metrics); it must stay on loopback or a LAN.
type Admin struct {
	Addr string `toml:"addr"`
	// TokenFile is the credential the operator port demands when Addr is not loopback (a bare
	// name is read from $CREDENTIALS_DIRECTORY: systemd's LoadCredential=).
	TokenFile string `toml:"token_file" doc:"credential the operator port demands when admin.addr is not loopback (bearer token, or Basic password); a bare name is read from $CREDENTIALS_DIRECTORY"`
}

// Egress is the outbound policy for user-chosen targets.
type Egress struct {
	Allow []string `toml:"allow" doc:"HOST:PORT pairs that pages, URL routes and proxy tunnels may reach despite being local, that exact pair only (tests and dev; production: none)"`
	Self  []string `toml:"self" doc:"extra addresses or prefixes of the appliance itself (its public IP); refused even when allowed"`
	// InterfaceRefresh bounds how stale the policy's reading of the box's own interface
	// addresses and delegated prefixes may be (they change with DHCP and prefix delegation).
	InterfaceRefresh time.Duration `toml:"interface_refresh" doc:"how often the box's own interface addresses and prefixes are re-read"`
}

// Inbox bounds the webhook inboxes' storage (bodies on disk under the state directory, their
// metadata in memory and in the journal).
type Inbox struct {
	// BudgetBytes is what the events of all inboxes may hold together on disk. /v1/callbacks
	// costs 0.005 USDC and an inbox holds up to 100 × 64 KiB, so 2.5 USDC buys 500 inboxes
	// able to hold 3.05 GiB of bodies: the default (8 GiB) is more than twice that, so that
	// sum cannot exhaust it. At start it is lowered to the free disk less a margin.
	BudgetBytes int64 `toml:"budget_bytes" doc:"bytes the events of all webhook inboxes may hold together on disk (lowered at start to what the disk can hold); each inbox sold reserves its 7 MiB quota from it until it expires, and inboxes are sold while one more quota fits"`
}

// Default is the embedded default: everything on loopback.
func Default() Config {
	return Config{
		StateDir: "/var/lib/peage",
		Log:      Log{Level: "info", Format: "auto"},
		API:      server.DefaultConfig(),
		Admin:    Admin{Addr: "127.0.0.1:8403", TokenFile: "operator-token"},
		Payment:  paywall.DefaultConfig(),
		Routes:   catalog.DefaultNames(),
		Egress:   Egress{InterfaceRefresh: 30 * time.Second},
		Inbox:    Inbox{BudgetBytes: state.DefaultInboxBudget},
		Parts:    DefaultParts(),
	}
}

// Load reads path (if not empty) over the defaults, applies the environment, and validates.
func Load(path string, env []string) (Config, error) {
	cfg := Default()
	if path != "" {
		md, err := toml.DecodeFile(path, &cfg)
		if err != nil {
			return cfg, fmt.Errorf("config %s: %w", path, err)
		}
		if und := md.Undecoded(); len(und) > 0 {
			keys := make([]string, len(und))
			for i, k := range und {
				keys[i] = k.String()
			}
			return cfg, fmt.Errorf("config %s: unknown key %s", path, strings.Join(keys, ", "))
		}
	}
	if err := applyEnv(&cfg, env); err != nil {
		return cfg, err
	}
	if f := cfg.Payment.FacilitatorURL; f != "" {
		if cfg.Settlement.Facilitator != "" && cfg.Settlement.Facilitator != f {
			return cfg, errors.New("config keys payment.facilitator_url and settlement.facilitator name different facilitators; set one")
		}
		cfg.Settlement.Facilitator = f
	}
	return cfg, cfg.Validate()
}

// Validate checks every value it can; errors name the key.
func (c *Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("config key %s: %s", key, fmt.Sprintf(format, args...)))
	}
	if c.StateDir == "" {
		bad("state_dir", "must be set")
	}
	if _, _, err := net.SplitHostPort(c.API.Addr); err != nil {
		bad("api.addr", "must be HOST:PORT (%v)", err)
	}
	if _, _, err := net.SplitHostPort(c.Admin.Addr); err != nil {
		bad("admin.addr", "must be HOST:PORT (%v)", err)
	}
	if u, err := url.Parse(c.API.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad("api.base_url", "must be an absolute http(s) URL, the public address of the appliance")
	}
	if c.API.MaxBodyBytes < 256<<10 {
		bad("api.max_body_bytes", "must be at least 262144 (a 200 KB page must fit)")
	}
	if _, err := clientid.ParsePrefixes(c.API.TrustedProxies); err != nil {
		bad("api.trusted_proxies", "%v", err)
	}
	if c.API.ClientIPv6Prefix < 1 || c.API.ClientIPv6Prefix > 128 {
		bad("api.client_ipv6_prefix", "must be a prefix length between 1 and 128 (64: one subscriber's subnet)")
	}
	if c.API.FreePerMinute < 0 {
		bad("api.free_per_minute", "must be 0 (no limit) or more")
	}
	if c.API.FreeBurst < 1 {
		bad("api.free_burst", "must be at least 1")
	}
	if c.API.FreeMaxClients < 1 {
		bad("api.free_max_clients", "must be at least 1")
	}
	if c.API.MaxConns < 0 || c.API.MaxConnsPerClient < 0 || c.API.MaxConnsPer56 < 0 || c.API.MaxConnsPer48 < 0 {
		bad("api.max_conns", "max_conns, max_conns_per_client, max_conns_per_56 and max_conns_per_48 must be 0 (unbounded) or positive")
	}
	if c.API.ConnsReservedForPaid < 0 {
		bad("api.conns_reserved_for_paid", "must be 0 or positive")
	}
	if c.API.BodyReadTimeout <= 0 {
		bad("api.body_read_timeout", "must be positive")
	}
	for _, o := range c.API.MCPAllowedOrigins {
		if u, err := url.Parse(o); o != "*" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Trim(u.Path, "/") != "" || u.RawQuery != "") {
			bad("api.mcp_allowed_origins", "%q is not an origin: scheme://host[:port], or \"*\"", o)
		}
	}
	if !evmAddress.MatchString(c.Payment.Asset) {
		bad("payment.asset", "must be a 0x address")
	}
	if c.Payment.PayTo != "" && !evmAddress.MatchString(c.Payment.PayTo) {
		bad("payment.pay_to", "must be a 0x address (only the address: the payout key never lives on the box)")
	}
	if !caip2.MatchString(c.Payment.Network) {
		bad("payment.network", "must be a CAIP-2 id like eip155:8453")
	}
	if c.Payment.MaxTimeoutSeconds < 10 || c.Payment.MaxTimeoutSeconds > 3600 {
		bad("payment.max_timeout_seconds", "must be between 10 and 3600")
	}
	if ra := c.Payment.ReceiverAuthorizer; ra != "" {
		if !evmAddress.MatchString(ra) || strings.Trim(ra[2:], "0") == "" {
			bad("payment.receiver_authorizer", "must be a non-zero 0x address (the settle daemon's batch-settlement receiver authorizer)")
		}
		if c.Settlement.Facilitator != "" {
			bad("payment.receiver_authorizer", "batch-settlement needs the appliance's own settle daemon; leave it empty with settlement.facilitator")
		}
	}
	if f := c.Settlement.Facilitator; f != "" {
		if u, err := url.Parse(f); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("payment.facilitator_url", "must be the absolute http(s) URL of a standard x402 facilitator")
		}
	}
	if d := c.Payment.WithdrawDelaySeconds; d < 900 || d > 30*86_400 {
		bad("payment.withdraw_delay_seconds", "must be between 900 (15 minutes) and 2592000 (30 days)")
	}
	if c.Payment.MinDeposit == 0 {
		bad("payment.min_deposit", "must be positive (atomic units)")
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		bad("log.level", "must be debug, info, warn or error")
	}
	switch c.Log.Format {
	case "json", "text", "auto":
	default:
		bad("log.format", "must be json, text or auto")
	}
	for _, seg := range []struct{ key, v string }{{"routes.classifieds_a", c.Routes.ClassifiedsA}, {"routes.listings_b", c.Routes.ListingsB},
		{"routes.marketplace", c.Routes.Marketplace}, {"routes.actor_marketplace", c.Routes.ActorMarketplace}} {
		if !segment.MatchString(seg.v) {
			bad(seg.key, "must be one lowercase path segment (letters, digits, -)")
		}
	}
	if c.Inbox.BudgetBytes < 1<<20 {
		bad("inbox.budget_bytes", "must be at least 1048576 (1 MiB)")
	}
	if c.Egress.InterfaceRefresh < time.Second || c.Egress.InterfaceRefresh > time.Hour {
		bad("egress.interface_refresh", "must be between 1s and 1h")
	}
	for _, a := range c.Egress.Allow {
		if _, _, err := net.SplitHostPort(a); err != nil {
			bad("egress.allow", "%q must be HOST:PORT", a)
		}
	}
	errs = append(errs, c.Parts.validate()...)
	return errors.Join(errs...)
}

var (
	evmAddress = regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`)
	caip2      = regexp.MustCompile(`^[a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$`)
	segment    = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,40}$`)
)

// applyEnv sets fields from PEAGE_<SECTION>_<KEY> variables (upper-cased toml keys joined by _).
func applyEnv(target any, env []string) error {
	vars := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "PEAGE_") {
			vars[k] = v
		}
	}
	if len(vars) == 0 {
		return nil
	}
	used := map[string]bool{}
	err := walk(reflect.ValueOf(target), "", func(key string, f reflect.Value) error {
		name := "PEAGE_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
		v, ok := vars[name]
		if !ok {
			return nil
		}
		used[name] = true
		if err := setText(f, v); err != nil {
			return fmt.Errorf("environment %s (config key %s): %w", name, key, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for k := range vars {
		if !used[k] {
			return fmt.Errorf("environment %s names no config key", k)
		}
	}
	return nil
}

// walk visits every leaf field with its dotted toml key.
func walk(v reflect.Value, prefix string, visit func(key string, f reflect.Value) error) error {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		v = v.Elem()
	}
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := strings.Split(sf.Tag.Get("toml"), ",")[0]
		if tag == "-" || !sf.IsExported() {
			continue
		}
		f := v.Field(i)
		if sf.Anonymous && tag == "" {
			if err := walk(f, prefix, visit); err != nil {
				return err
			}
			continue
		}
		key := tag
		if key == "" {
			key = strings.ToLower(sf.Name)
		}
		if prefix != "" {
			key = prefix + "." + key
		}
		if f.Kind() == reflect.Struct && f.Type() != reflect.TypeOf(time.Duration(0)) {
			if err := walk(f, key, visit); err != nil {
				return err
			}
			continue
		}
		if err := visit(key, f); err != nil {
			return err
		}
	}
	return nil
}

func setText(f reflect.Value, s string) error {
	if f.Type() == reflect.TypeOf(time.Duration(0)) {
		d, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		f.SetInt(int64(d))
		return nil
	}
	switch f.Kind() {
	case reflect.String:
		f.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return err
		}
		f.SetBool(b)
	case reflect.Int, reflect.Int64, reflect.Int32:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return err
		}
		f.SetInt(n)
	case reflect.Uint, reflect.Uint64, reflect.Uint32:
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return err
		}
		f.SetUint(n)
	case reflect.Float64:
		n, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return err
		}
		f.SetFloat(n)
	case reflect.Slice:
		if f.Type().Elem().Kind() != reflect.String {
			return fmt.Errorf("unsupported list type")
		}
		var items []string
		for _, it := range strings.Split(s, ",") {
			if it = strings.TrimSpace(it); it != "" {
				items = append(items, it)
			}
		}
		f.Set(reflect.ValueOf(items))
	default:
		return fmt.Errorf("unsupported type %s", f.Type())
	}
	return nil
}

// Document renders the effective configuration as TOML with every key (the reference shown by
// `appliance config`), so the file format is documented by the code that reads it.
func Document(c Config) (string, error) {
	var b strings.Builder
	b.WriteString("# péage appliance configuration (TOML). Every key with its current value;\n")
	b.WriteString("# environment variables PEAGE_<SECTION>_<KEY> override the file (e.g. PEAGE_API_ADDR).\n\n")
	if err := toml.NewEncoder(&b).Encode(c); err != nil {
		return "", err
	}
	return b.String(), nil
}
