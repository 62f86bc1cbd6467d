package image

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/peage/appliance/internal/unitfile"
	"github.com/peage/appliance/internal/update"
)

// TestUpdateKeysStaged runs update-keys.sh as build.sh does: the release public keys named by
// UPDATE_KEYS go into the image as they are, a development build ships the throwaway key
// kept outside the repository and says so, and nothing private ever goes in. The appliance
// binary's part (keygen, `update keys`) is /bin/true here: its own test is TestUpdateKeys of
// appliance/cmd/appliance; the keys this test stages are read back with update.ParsePublicKey.
func TestUpdateKeysStaged(t *testing.T) {
	pair := func(dir, stem string) (pub string) {
		t.Helper()
		p, s, err := update.GenerateKey()
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(dir, 0o700)
		os.WriteFile(filepath.Join(dir, stem+".pub"), p, 0o644)
		os.WriteFile(filepath.Join(dir, stem+".key"), s, 0o600)
		return filepath.Join(dir, stem+".pub")
	}
	tmp := t.TempDir()
	release := pair(filepath.Join(tmp, "offline"), "release-2026")
	rotated := filepath.Join(tmp, "pubs")
	os.MkdirAll(rotated, 0o755)
	for _, stem := range []string{"release-2026", "release-2027"} {
		b, _ := os.ReadFile(pair(filepath.Join(tmp, "gen-"+stem), stem))
		os.WriteFile(filepath.Join(rotated, stem+".pub"), b, 0o644)
	}
	devKeys := filepath.Join(tmp, "cache", "dev-update-key")
	pair(devKeys, "dev-throwaway")
	misnamed := filepath.Join(tmp, "release.pem")
	os.WriteFile(misnamed, []byte("x"), 0o644)
	seedAsPub := filepath.Join(tmp, "seed.pub")
	b, _ := os.ReadFile(filepath.Join(tmp, "offline", "release-2026.key"))
	os.WriteFile(seedAsPub, b, 0o644)
	repo, _ := filepath.Abs("..")

	cases := []struct {
		name, updateKeys, devKeys string
		ships                     []string // file names in the staged directory
		stderr                    string   // must appear on stderr (the refusal, or the warning)
		fails                     bool
	}{
		{"one release key", release, devKeys, []string{"release-2026.pub"}, "", false},
		{"rotation: a directory of keys", rotated, devKeys, []string{"release-2026.pub", "release-2027.pub"}, "", false},
		{"development build", "", devKeys, []string{"dev-throwaway.pub"}, "DEVELOPMENT IMAGE", false},
		{"directory holding the signing key", filepath.Join(tmp, "offline"), devKeys, nil, "holds a private key", true},
		{"the signing key itself", filepath.Join(tmp, "offline", "release-2026.key"), devKeys, nil, "name ends in .pub", true},
		{"a private key named .pub", seedAsPub, devKeys, nil, "is a PRIVATE key", true},
		{"not a .pub file", misnamed, devKeys, nil, "name ends in .pub", true},
		{"missing path", filepath.Join(tmp, "nowhere.pub"), devKeys, nil, "neither a .pub file nor a directory", true},
		{"throwaway key inside the repository", "", filepath.Join(repo, "image", "out", "dev-keys-test"), nil, "outside the repository", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "usr/share/peage/update-keys")
			cmd := exec.Command("./update-keys.sh", "/bin/true", dest)
			cmd.Env = append(os.Environ(), "UPDATE_KEYS="+tc.updateKeys, "PEAGE_UPDATE_DEV_KEYS="+tc.devKeys)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			if tc.fails != (err != nil) {
				t.Fatalf("exit %v, want failure %v; stderr:\n%s", err, tc.fails, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, stderr.String())
			}
			if tc.fails {
				if names, _ := filepath.Glob(filepath.Join(dest, "*")); len(names) > 0 {
					t.Errorf("a refused build still staged %v", names)
				}
				return
			}
			if tc.updateKeys != "" && strings.Contains(stderr.String(), "DEVELOPMENT") {
				t.Errorf("a release build warns of a development key:\n%s", stderr.String())
			}
			entries, err := os.ReadDir(dest)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range entries {
				got = append(got, e.Name())
				b, err := os.ReadFile(filepath.Join(dest, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := update.ParsePublicKey(b); err != nil {
					t.Errorf("staged %s is not a public key: %v", e.Name(), err)
				}
			}
			if strings.Join(got, " ") != strings.Join(tc.ships, " ") {
				t.Errorf("staged %v, want %v", got, tc.ships)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(repo, "image", "out", "dev-keys-test")); err == nil {
		t.Error("update-keys.sh made its throwaway key directory inside the repository before refusing it")
	}
}

// TestUpdateKeysWiring: build.sh stages the keys where `appliance update` reads them by
// default (update.KeysDir), and the smoke check proves it on the booted box with the two
// releases image-test hands in, calling verify without -keys.
func TestUpdateKeysWiring(t *testing.T) {
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	build := read("build.sh")
	if want := `update-keys.sh" "$stage/usr/lib/peage/appliance" "$stage` + update.KeysDir + `"`; !strings.Contains(build, want) {
		t.Errorf("build.sh does not stage the keys into %s (want %s)", update.KeysDir, want)
	}
	smoke := read("mkosi.extra/usr/lib/peage/smoke-check")
	verify := regexp.MustCompile(`appliance update verify [^\n]*`).FindAllString(smoke, -1)
	if len(verify) != 2 {
		t.Fatalf("smoke-check runs appliance update verify %d times, want 2 (accept, refuse)", len(verify))
	}
	for _, v := range verify {
		if strings.Contains(v, "-keys") {
			t.Errorf("smoke-check passes -keys (%s): the box must find the shipped keys at their default path", v)
		}
	}
	if !strings.Contains(smoke, "signature does not verify against any") {
		t.Error("smoke-check does not tell a refusal for the key from any other failure")
	}
	if got := one(t, unitfile.Read(t, "mkosi.extra/usr/lib/systemd/system/appliance-smoke.service"), "Service", "ImportCredential"); got != "smoke.update-*" {
		t.Errorf("appliance-smoke.service imports %q, not the releases image-test passes", got)
	}
	test := read("test.sh")
	for _, cred := range []string{"io.systemd.credential.binary:smoke.update-$name.$f="} {
		if !strings.Contains(test, cred) {
			t.Errorf("test.sh does not pass %s", cred)
		}
	}
}
