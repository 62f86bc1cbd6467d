package upstream

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestKeyFileFromCredentialsDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "open-meteo.key"), []byte("sekret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CREDENTIALS_DIRECTORY", dir)
	specs, err := Resolve(Config{Override: map[string]Override{"open-meteo": {KeyFile: "open-meteo.key"}}})
	if err != nil {
		t.Fatal(err)
	}
	if s := specs["open-meteo"]; s.Key != "sekret" || s.Ready() != nil || s.BaseURL != s.KeyedBaseURL {
		t.Errorf("spec = %+v", s)
	}
	if _, err := Resolve(Config{Override: map[string]Override{"open-meteo": {KeyFile: "missing.key"}}}); err == nil {
		t.Error("a missing key file must fail at start-up")
	}
}

func TestEverySpecIsComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Specs {
		if seen[s.Name] {
			t.Errorf("duplicate upstream %s", s.Name)
		}
		seen[s.Name] = true
		if !strings.HasPrefix(s.BaseURL, "https://") || s.Timeout <= 0 || s.RPS <= 0 || s.Terms == "" {
			t.Errorf("%s: incomplete spec %+v", s.Name, s)
		}
	}
	if !strings.Contains(TermsOf("open-meteo"), "non-commercial") {
		t.Error("open-meteo's terms must say the free tier is non-commercial")
	}
}
