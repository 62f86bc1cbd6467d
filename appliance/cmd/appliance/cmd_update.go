package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/peage/appliance/appliance/config"
	"github.com/peage/appliance/internal/update"
	"github.com/peage/appliance/internal/version"
)

func init() {
	register("update", "install signed releases with a health gate and rollback; sign and keygen for the release side", runUpdate)
}

// Where the image puts things (image/ and systemd/peage-update*.service agree on these).
const (
	defaultUpdateRoot = "/var/lib/peage-update"
	defaultUpdateKeys = update.KeysDir
)

const updateUsage = `usage: appliance update <action> [flags]

on the box (as root):
  status                  current version, installed versions, the last outcome
  keys [-keys DIR]        the release keys this box trusts, with their fingerprints
  install MANIFEST        verify a release (manifest, its .sig, the binary beside it) and switch to it
  run -source URL|DIR     fetch the channel's latest release for this platform and install it if newer
  rollback                switch back to the version that ran before
  recover                 finish an update a crash or power cut interrupted (run at boot)

on the release side (never on the box):
  keygen -out DIR/NAME    make a release key pair: NAME.key (secret) and NAME.pub (ship in the image)
  sign -key K -version V BINARY
                          write BINARY.manifest and BINARY.manifest.sig (-latest: also the channel's latest-OS-ARCH.manifest)
  verify -keys DIR MANIFEST
`

func runUpdate(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(os.Stderr, updateUsage)
		return flag.ErrHelp
	}
	action, args := args[0], args[1:]
	switch action {
	case "keygen":
		return updateKeygen(args)
	case "sign":
		return updateSign(os.Stdout, args)
	case "verify":
		return updateVerify(os.Stdout, args)
	case "keys":
		return updateKeys(os.Stdout, args)
	case "status", "install", "run", "rollback", "recover":
		return updateOnBox(ctx, os.Stdout, action, args)
	}
	fmt.Fprint(os.Stderr, updateUsage)
	return fmt.Errorf("unknown action %q", action)
}

func updateKeygen(args []string) error {
	fs := flag.NewFlagSet("update keygen", flag.ContinueOnError)
	out := fs.String("out", "", "path stem of the key pair: writes STEM.key (mode 0600) and STEM.pub")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("-out is required")
	}
	pub, priv, err := update.GenerateKey()
	if err != nil {
		return err
	}
	// O_EXCL: never overwrite a release key.
	for _, f := range []struct {
		path string
		data []byte
		mode os.FileMode
	}{{*out + ".key", priv, 0o600}, {*out + ".pub", pub, 0o644}} {
		fh, err := os.OpenFile(f.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, f.mode)
		if err != nil {
			return err
		}
		if _, err := fh.Write(f.data); err != nil {
			fh.Close()
			return err
		}
		if err := fh.Close(); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "wrote %s.key (keep it off the box) and %s.pub (ship it in %s)\n", *out, *out, defaultUpdateKeys)
	return nil
}

func updateSign(out io.Writer, args []string) error {
	fs := flag.NewFlagSet("update sign", flag.ContinueOnError)
	keyPath := fs.String("key", "", "release private key (from keygen)")
	ver := fs.String("version", "", "the version the binary reports (its -X .../version.Version)")
	goos := fs.String("os", "linux", "the binary's GOOS")
	goarch := fs.String("arch", runtime.GOARCH, "the binary's GOARCH")
	latest := fs.Bool("latest", false, "also publish it as the channel's latest-OS-ARCH.manifest beside the binary")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 || *keyPath == "" || *ver == "" {
		return errors.New("usage: appliance update sign -key KEY -version V BINARY")
	}
	b, err := os.ReadFile(*keyPath)
	if err != nil {
		return err
	}
	key, err := update.ParsePrivateKey(b)
	if err != nil {
		return fmt.Errorf("%s: %w", *keyPath, err)
	}
	m, err := update.Sign(fs.Arg(0), *ver, *goos, *goarch, key)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, m)
	if *latest {
		dst := filepath.Join(filepath.Dir(m), update.LatestNameFor(*goos, *goarch))
		for _, suffix := range []string{"", ".sig"} {
			data, err := os.ReadFile(m + suffix)
			if err != nil {
				return err
			}
			if err := os.WriteFile(dst+suffix, data, 0o644); err != nil {
				return err
			}
		}
		fmt.Fprintln(out, dst)
	}
	return nil
}

// devKeyPrefix starts the name of the throwaway key a development image build makes when no
// release key is given (image/update-keys.sh): a box trusting it takes releases signed on
// that build machine.
const devKeyPrefix = "dev-throwaway"

// updateKeys lists the trusted release keys, and fails when one does not parse (image/build.sh
// runs it over the keys it ships).
func updateKeys(out io.Writer, args []string) error {
	fs := flag.NewFlagSet("update keys", flag.ContinueOnError)
	keys := fs.String("keys", defaultUpdateKeys, "directory of trusted release keys (*.pub)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	trusted, err := update.LoadPublicKeys(*keys)
	if err != nil {
		return err
	}
	for _, k := range trusted {
		note := ""
		if strings.HasPrefix(k.Name, devKeyPrefix) {
			note = "  DEVELOPMENT KEY: made by a build without UPDATE_KEYS; not a release key"
		}
		fmt.Fprintf(out, "%s  ed25519 %s%s\n", k.Name, k.Fingerprint(), note)
	}
	return nil
}

func updateVerify(out io.Writer, args []string) error {
	fs := flag.NewFlagSet("update verify", flag.ContinueOnError)
	keys := fs.String("keys", defaultUpdateKeys, "directory of trusted release keys (*.pub)")
	bin := fs.String("binary", "", "the binary (default: the manifest's file beside it)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: appliance update verify [-keys DIR] MANIFEST")
	}
	trusted, err := update.LoadPublicKeys(*keys)
	if err != nil {
		return err
	}
	rel, err := update.Verify(fs.Arg(0), *bin, trusted)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "ok: %s %s for %s/%s, %d bytes, sha256 %s, signed by %s\n", rel.Binary,
		rel.Manifest.Version, rel.Manifest.OS, rel.Manifest.Arch, rel.Manifest.Size, rel.Manifest.SHA256, rel.SignedBy)
	return nil
}

// updateOnBox runs the actions that change the box.
func updateOnBox(ctx context.Context, out io.Writer, action string, args []string) error {
	fs := flag.NewFlagSet("update "+action, flag.ContinueOnError)
	root := fs.String("root", defaultUpdateRoot, "update root: versions/, current, update.json")
	keys := fs.String("keys", defaultUpdateKeys, "directory of trusted release keys (*.pub)")
	cfgPath := fs.String("config", defaultConfigPath, "appliance configuration, read for admin.addr (the health endpoint)")
	healthURL := fs.String("health-url", "", "health endpoint [http://<admin.addr>/healthz]")
	target := fs.String("target", "peage.target", "systemd target restarted after a switch")
	var units stringList
	fs.Var(&units, "unit", "unit that must be active after a switch (repeatable) [peage-api, peage-settle, peage-proxyd]")
	bound := fs.Duration("bound", 3*time.Minute, "how long a new version has to become healthy")
	hold := fs.Duration("hold", 20*time.Second, "how long it must then stay healthy")
	keep := fs.Int("keep", 3, "installed versions kept in versions/")
	allowBad := fs.Bool("allow-bad", false, "install a version even though it was rolled back before")
	source := fs.String("source", "", "run: release channel, an http(s) URL or a directory")
	allowDowngrade := fs.Bool("allow-downgrade", false, "run: install the channel's version even if older than the running one")
	if err := fs.Parse(args); err != nil {
		return err
	}
	store := update.Store{Root: *root}
	if action == "status" {
		return updateStatus(out, store)
	}
	if len(units) == 0 {
		units = update.DefaultUnits
	}
	url := *healthURL
	if url == "" {
		url = "http://" + adminAddr(*cfgPath) + "/healthz"
	}
	u := &update.Updater{Store: store, Keep: *keep, AllowBad: *allowBad,
		Log: newLogger(config.Log{Level: "info", Format: "auto"}),
		Gate: update.Gate{Services: &update.Systemd{Target: *target, Units: units},
			Health: update.HTTPHealth{URL: url}, Bound: *bound, Hold: *hold}}
	var (
		outcome update.Outcome
		err     error
	)
	switch action {
	case "recover":
		outcome, err = u.Recover(ctx)
	case "rollback":
		outcome, err = u.Rollback(ctx)
	case "install", "run":
		var rel *update.Release
		if rel, err = updateRelease(ctx, out, action, fs, store, *keys, *source, *allowDowngrade, *allowBad); err != nil || rel == nil {
			return err
		}
		if rel.Download {
			defer os.Remove(rel.Binary)
		}
		outcome, err = u.Apply(ctx, rel)
	}
	var rb *update.RolledBackError
	if errors.As(err, &rb) {
		fmt.Fprintf(out, "rolled back: %s\n", rb.Reason)
		return exitCode(3)
	}
	if err != nil {
		return err
	}
	switch outcome.Result {
	case update.ResultInstalled:
		fmt.Fprintf(out, "%s runs and is healthy\n", outcome.Version)
	default:
		fmt.Fprintln(out, "nothing to do")
	}
	return nil
}

// updateRelease finds and verifies the release to install; nil when there is nothing newer.
func updateRelease(ctx context.Context, out io.Writer, action string, fs *flag.FlagSet, store update.Store,
	keyDir, source string, allowDowngrade, allowBad bool) (*update.Release, error) {
	trusted, err := update.LoadPublicKeys(keyDir)
	if err != nil {
		return nil, err
	}
	if action == "install" {
		if fs.NArg() != 1 {
			return nil, errors.New("usage: appliance update install MANIFEST")
		}
		return update.Verify(fs.Arg(0), "", trusted)
	}
	if source == "" {
		return nil, errors.New("run needs -source (a release channel URL or directory)")
	}
	rel, err := update.Fetch(ctx, source, trusted, store, nil)
	if err != nil {
		return nil, err
	}
	cur, err := store.Current()
	if err != nil {
		return nil, err
	}
	running := store.VersionOf(cur)
	if running == "" {
		running = version.Version // the image's factory binary is this one
	}
	rec, err := store.Load()
	if err != nil {
		return nil, err
	}
	v := rel.Manifest.Version
	skip := ""
	switch {
	case v == running:
		skip = "already runs " + v
	case !allowBad && slices.Contains(rec.Bad, v):
		skip = v + " was rolled back before"
	case !allowDowngrade && update.CompareVersions(v, running) < 0:
		skip = fmt.Sprintf("channel has %s, older than the running %s", v, running)
	}
	if skip != "" {
		if rel.Download {
			os.Remove(rel.Binary)
		}
		fmt.Fprintln(out, "nothing to do:", skip)
		return nil, nil
	}
	return rel, nil
}

func updateStatus(out io.Writer, store update.Store) error {
	cur, err := store.Current()
	if err != nil {
		return err
	}
	v := store.VersionOf(cur)
	switch {
	case cur == "":
		fmt.Fprintf(out, "current:   none (%s/current is missing: tmpfiles.d/peage-update.conf makes it)\n", store.Root)
	case v == "":
		fmt.Fprintf(out, "current:   %s (factory binary)\n", cur)
	default:
		fmt.Fprintf(out, "current:   %s (%s)\n", cur, v)
	}
	installed, err := store.Installed()
	if err != nil {
		return err
	}
	for _, p := range installed {
		fmt.Fprintf(out, "installed: %s\n", store.VersionOf(p))
	}
	rec, err := store.Load()
	if err != nil {
		return err
	}
	if rec.Pending != nil {
		fmt.Fprintf(out, "pending:   %s, %s since %s\n", rec.Pending.Version, rec.Pending.Phase, rec.Pending.Started.Format(time.RFC3339))
	}
	if len(rec.Bad) > 0 {
		fmt.Fprintf(out, "rolled back before: %s\n", strings.Join(rec.Bad, ", "))
	}
	if rec.Last != "" {
		fmt.Fprintf(out, "last:      %s\n", rec.Last)
	}
	return nil
}

// adminAddr is admin.addr of the configuration file, or the default when the file or the key
// is absent. Only that key is read: the updater must work on a box whose configuration
// would not validate yet (first boot).
func adminAddr(path string) string {
	var f struct {
		Admin struct {
			Addr string `toml:"addr"`
		} `toml:"admin"`
	}
	if _, err := toml.DecodeFile(path, &f); err == nil && f.Admin.Addr != "" {
		return f.Admin.Addr
	}
	return config.Default().Admin.Addr
}
