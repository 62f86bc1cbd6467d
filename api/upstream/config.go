package upstream

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Config is the [upstream] section of the appliance config.
//
//	[upstream]
//	contact = "ops@example.org"
//	[upstream.override.open-meteo]
//	key = "…"
//	[upstream.override.ban]
//	base_url = "https://api-adresse.data.gouv.fr"
//	timeout = "3s"
//	rps = 20
type Config struct {
	// Contact goes into the User-Agent so that an upstream operator can reach us.
	Contact  string              `toml:"contact"`
	Override map[string]Override `toml:"override"`
}

// Override replaces the fields of one Spec that are set.
type Override struct {
	BaseURL string   `toml:"base_url"`
	Timeout Duration `toml:"timeout"`
	RPS     float64  `toml:"rps"`
	Retries *int     `toml:"retries"`
	Key     string   `toml:"key"`
	// KeyFile names a file holding the key, so it stays out of the config file; a relative
	// name is read from $CREDENTIALS_DIRECTORY (systemd LoadCredential=).
	KeyFile string `toml:"key_file"`
}

// Duration reads "5s" style text from config files.
type Duration time.Duration

func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("duration %q: %w", b, err)
	}
	*d = Duration(v)
	return nil
}

func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// DefaultConfig is the empty override set: every upstream at its published address.
func DefaultConfig() Config {
	return Config{Contact: "https://github.com/peage/appliance"}
}

// Resolve applies the overrides to Specs. An override for an unknown upstream is an error, so
// a typo in the config file is caught at start-up rather than silently ignored.
func Resolve(cfg Config) (map[string]Spec, error) {
	out := make(map[string]Spec, len(Specs))
	for _, s := range Specs {
		out[s.Name] = s
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Override)) {
		o := cfg.Override[name]
		s, ok := out[name]
		if !ok {
			return nil, fmt.Errorf("upstream config: no upstream named %q", name)
		}
		if o.KeyFile != "" {
			k, err := readKey(o.KeyFile)
			if err != nil {
				return nil, fmt.Errorf("upstream config: %s: %w", name, err)
			}
			o.Key = k
		}
		if o.Key != "" {
			s.Key = o.Key
			if s.KeyedBaseURL != "" {
				s.BaseURL = s.KeyedBaseURL
			}
		}
		if o.BaseURL != "" {
			s.BaseURL = o.BaseURL
			s.NeedsBaseURL = false
		}
		if o.Timeout > 0 {
			s.Timeout = time.Duration(o.Timeout)
		}
		if o.RPS > 0 {
			s.RPS = o.RPS
		}
		if o.Retries != nil {
			if *o.Retries < 0 || *o.Retries > 5 {
				return nil, fmt.Errorf("upstream config: %s: retries must be 0 to 5", name)
			}
			s.Retries = *o.Retries
		}
		out[name] = s
	}
	return out, nil
}

func readKey(name string) (string, error) {
	if !filepath.IsAbs(name) {
		dir := os.Getenv("CREDENTIALS_DIRECTORY")
		if dir == "" {
			return "", fmt.Errorf("key_file %q is relative and CREDENTIALS_DIRECTORY is not set", name)
		}
		name = filepath.Join(dir, name)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return "", fmt.Errorf("key_file: %w", err)
	}
	k := strings.TrimSpace(string(b))
	if k == "" {
		return "", fmt.Errorf("key_file %s is empty", name)
	}
	return k, nil
}
