package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/peage/appliance/internal/update"
	"github.com/peage/appliance/internal/version"
)

// TestUpdateReleaseSide: keygen, sign and verify as a release manager runs them, and verify
// refusing a binary changed after signing or a key that did not sign.
func TestUpdateReleaseSide(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	os.Mkdir(keys, 0o755)
	if err := updateKeygen([]string{"-out", filepath.Join(keys, "release")}); err != nil {
		t.Fatal(err)
	}
	if err := updateKeygen([]string{"-out", filepath.Join(keys, "release")}); err == nil {
		t.Fatal("keygen overwrote an existing key")
	}
	if fi, err := os.Stat(filepath.Join(keys, "release.key")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("private key mode: %v, %v", fi, err)
	}
	bin := filepath.Join(dir, "appliance_v1.2.3")
	os.WriteFile(bin, []byte("a binary"), 0o755)
	var out bytes.Buffer
	if err := updateSign(&out, []string{"-key", filepath.Join(keys, "release.key"), "-version", "v1.2.3", "-latest", bin}); err != nil {
		t.Fatal(err)
	}
	latest := filepath.Join(dir, "latest-linux-"+runtime.GOARCH+".manifest")
	if want := bin + ".manifest\n" + latest + "\n"; out.String() != want {
		t.Fatalf("sign printed %q, want %q", out.String(), want)
	}
	// The private key is not a trusted key: only *.pub files are read.
	trusted := filepath.Join(dir, "trusted")
	os.Mkdir(trusted, 0o755)
	pub, _ := os.ReadFile(filepath.Join(keys, "release.pub"))
	os.WriteFile(filepath.Join(trusted, "release.pub"), pub, 0o644)
	cases := []struct {
		name, manifest, keys, want string
		tamper                     func()
	}{
		{"signed release", bin + ".manifest", trusted, "ok: " + bin + " v1.2.3", nil},
		{"channel's latest", latest, trusted, "ok: " + bin + " v1.2.3", nil},
		{"untrusted key", bin + ".manifest", func() string {
			d := filepath.Join(dir, "other")
			os.Mkdir(d, 0o755)
			updateKeygen([]string{"-out", filepath.Join(d, "other")})
			return d
		}(), "signature does not verify", nil},
		{"binary changed", bin + ".manifest", trusted, "bytes, the manifest says", func() {
			os.WriteFile(bin, []byte("a binary, patched"), 0o755)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.tamper != nil {
				tc.tamper()
			}
			var out bytes.Buffer
			err := updateVerify(&out, []string{"-keys", tc.keys, tc.manifest})
			got := out.String()
			if err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, tc.want) {
				t.Fatalf("verify: %q, want %q", got, tc.want)
			}
		})
	}
}

// TestUpdateKeys: `update keys` lists what a box trusts with fingerprints, flags the throwaway
// key of a development build, and fails on a directory image/build.sh must not ship.
func TestUpdateKeys(t *testing.T) {
	pub, priv, err := update.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	key, err := update.ParsePublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	fp := update.PublicKey{Key: key}.Fingerprint()
	cases := []struct {
		name  string
		files map[string][]byte
		want  []string // lines of the listing, or the error's text
		fails bool
	}{
		{"release key", map[string][]byte{"release.pub": pub},
			[]string{"release.pub  ed25519 " + fp + "\n"}, false},
		{"development build", map[string][]byte{"dev-throwaway.pub": pub},
			[]string{"dev-throwaway.pub  ed25519 " + fp + "  DEVELOPMENT KEY"}, false},
		{"private key named .pub", map[string][]byte{"release.pub": priv},
			[]string{"release.pub: not a key file starting with \"peage-update-ed25519-pub\""}, true},
		{"no key", map[string][]byte{"release.key": priv}, []string{"no release key (*.pub)"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var out bytes.Buffer
			err := updateKeys(&out, []string{"-keys", dir})
			got := out.String()
			if tc.fails {
				if err == nil {
					t.Fatalf("listed %q, want an error", got)
				}
				got = err.Error()
			} else if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("got %q, want %q in it", got, w)
				}
			}
		})
	}
}

// TestUpdateStatusOfFreshBox: status on a box whose current is the image's factory binary.
func TestUpdateStatusOfFreshBox(t *testing.T) {
	root := t.TempDir()
	if err := os.Symlink("/usr/lib/peage/appliance", filepath.Join(root, "current")); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := updateOnBox(context.Background(), &out, "status", []string{"-root", root}); err != nil {
		t.Fatal(err)
	}
	if want := "current:   /usr/lib/peage/appliance (factory binary)\n"; out.String() != want {
		t.Fatalf("status: %q, want %q", out.String(), want)
	}
}

// TestUpdateGateReadsTheRealHealthz: the gate's health reader understands the operator
// listener's /healthz of the real daemon (status, and the version the binary was linked with).
func TestUpdateGateReadsTheRealHealthz(t *testing.T) {
	d := startDev(t)
	r, err := update.HTTPHealth{URL: "http://" + d.admin + "/healthz"}.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != "ok" || !r.Runs(version.Version) || r.Runs(version.Version+"-other") {
		t.Fatalf("report %+v (binary version %q)", r, version.Version)
	}
}
