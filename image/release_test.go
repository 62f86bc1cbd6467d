package image

import (
	"debug/buildinfo"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/peage/appliance/internal/testenv"
)

// TestReleaseBinary builds the shipped binary for this machine's architecture as the image and
// `make release` do (ops/release.sh) and reads the file itself: one static executable (the image
// has no shared C library for it, the updater swaps one file), built with cgo so that
// go-ethereum recovers signatures with libsecp256k1 (docs/gas.md: a third of the pure-Go
// secp256k1's CPU), with name resolution and user lookup kept in Go, and it runs.
func TestReleaseBinary(t *testing.T) {
	testenv.Needs(t, testenv.Builds)
	bin := filepath.Join(t.TempDir(), "appliance")
	build := exec.Command("../ops/release.sh", runtime.GOARCH, bin)
	build.Env = append(os.Environ(), "VERSION=v0.0.0-releasetest")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("ops/release.sh: %v\n%s", err, out)
	}

	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary names a program interpreter: it is dynamically linked")
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("the binary loads shared libraries %v (%v)", libs, err)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(syms, func(s elf.Symbol) bool { return s.Name == "secp256k1_ecdsa_recover" }) {
		t.Error("libsecp256k1's secp256k1_ecdsa_recover is not linked in: signatures would be recovered in pure Go")
	}

	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if settings["CGO_ENABLED"] != "1" {
		t.Errorf("built with CGO_ENABLED=%q, want 1", settings["CGO_ENABLED"])
	}
	if tags := strings.Split(settings["-tags"], ","); !slices.Contains(tags, "netgo") || !slices.Contains(tags, "osusergo") {
		t.Errorf("built with tags %q: without netgo and osusergo a static glibc would be asked for NSS modules it cannot load", settings["-tags"])
	}

	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "v0.0.0-releasetest") {
		t.Errorf("appliance version: %v, %q", err, out)
	}
}

// TestShippedBinariesAgree: the image and `make release` get their binary from ops/release.sh
// and build none of their own, so the image and its updates are one program.
func TestShippedBinariesAgree(t *testing.T) {
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if build := read("build.sh"); !strings.Contains(build, `"$repo/ops/release.sh" "$arch" "$stage/usr/lib/peage/appliance"`) || strings.Contains(build, "go build") {
		t.Error("build.sh does not stage the binary ops/release.sh builds, or builds one of its own")
	}
	if !regexp.MustCompile(`(?m)^release:.*\n\t.*ops/release\.sh \$\(ARCH\) bin/appliance_`).MatchString(read("../Makefile")) {
		t.Error("make release does not build bin/appliance_VERSION_GOARCH with ops/release.sh")
	}
}
