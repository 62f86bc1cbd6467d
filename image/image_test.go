// Package image holds the flashable image's mkosi configuration and scripts (README.md); this
// test checks them statically, without mkosi, QEMU or root: `make test` never builds or boots
// the image (`make image-test` does).
package image

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/peage/appliance/appliance/config"
	"github.com/peage/appliance/internal/unitfile"
	"github.com/peage/appliance/internal/update"
)

func one(t *testing.T, conf map[string]map[string][]string, section, key string) string {
	t.Helper()
	v := conf[section][key]
	if len(v) == 0 {
		t.Fatalf("[%s] %s is not set", section, key)
	}
	return strings.Join(v, " ")
}

func TestMkosiConfig(t *testing.T) {
	conf := unitfile.Read(t, "mkosi.conf")
	want := []struct{ section, key, value string }{
		{"Distribution", "Distribution", "debian"},
		{"Distribution", "Release", "trixie"},
		{"Output", "Format", "disk"},
		{"Output", "ManifestFormat", "json"},
		{"Content", "Bootable", "yes"},
		{"Content", "Bootloader", "systemd-boot"},
		{"Content", "UnifiedKernelImages", "yes"},
		// mkosi 25 hashes a plain value as a password: only hashed:! locks root.
		{"Content", "RootPassword", "hashed:!"},
	}
	for _, w := range want {
		if got := one(t, conf, w.section, w.key); got != w.value {
			t.Errorf("[%s] %s = %q, want %q", w.section, w.key, got, w.value)
		}
	}
	if seed := one(t, conf, "Output", "Seed"); !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`).MatchString(seed) {
		t.Errorf("Seed %q is not a fixed UUID (repart's partition UUIDs would change every build)", seed)
	}
	pkgs := conf["Content"]["Packages"]
	for _, p := range []string{"systemd", "systemd-boot", "systemd-boot-efi", "nftables", "chromium-headless-shell", "curl", "ca-certificates", fontsPackage(t)} {
		if !slices.Contains(pkgs, p) {
			t.Errorf("Packages lacks %s", p)
		}
	}
	if slices.Contains(pkgs, "chromium-sandbox") {
		t.Error("chromium-sandbox is setuid, which the units' NoNewPrivileges blocks: Chromium must use user namespaces")
	}
}

// fontsPackage is the font package ops/setup.d/fonts.sh installs for the test browsers: the box
// renders with the same fonts.
func fontsPackage(t *testing.T) string {
	b, err := os.ReadFile("../ops/setup.d/fonts.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`apt_install (\S+)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("ops/setup.d/fonts.sh installs no package this test can read")
	}
	return string(m[1])
}

func TestArchitectures(t *testing.T) {
	cases := []struct{ file, arch, kernel, console string }{
		{"mkosi.conf.d/10-x86-64.conf", "x86-64", "linux-image-amd64", "console=ttyS0"},
		{"mkosi.conf.d/10-arm64.conf", "arm64", "linux-image-arm64", "console=ttyAMA0"},
	}
	for _, c := range cases {
		conf := unitfile.Read(t, c.file)
		if got := one(t, conf, "Match", "Architecture"); got != c.arch {
			t.Errorf("%s matches %q, want %q", c.file, got, c.arch)
		}
		if !slices.Contains(conf["Content"]["Packages"], c.kernel) {
			t.Errorf("%s does not install %s", c.file, c.kernel)
		}
		// The smoke marker reaches the serial log only if the last console= is the UART.
		cmd := conf["Content"]["KernelCommandLine"]
		if len(cmd) == 0 || !strings.HasPrefix(cmd[len(cmd)-1], c.console) {
			t.Errorf("%s: the last console of %v is not %s", c.file, cmd, c.console)
		}
	}
}

// TestDefaultConfig loads the configuration the image of role single ships with the appliance's own loader, and
// checks that each daemon's socket lies in the runtime directory its unit gives it and that the
// settle key is looked up under the name the unit loads it as.
func TestDefaultConfig(t *testing.T) {
	cfg, err := config.Load("roles/single.toml", nil)
	if err != nil {
		t.Fatalf("the shipped config does not load: %v", err)
	}
	if cfg.Payment.PayTo != "" {
		t.Errorf("payment.pay_to %q is baked into the image; the operator sets it", cfg.Payment.PayTo)
	}
	settle := unitfile.Read(t, "../systemd/peage-settle.service")["Service"]
	proxyd := unitfile.Read(t, "../systemd/peage-proxyd.service")["Service"]
	cases := []struct {
		key, socket string
		unit        map[string][]string
	}{
		{"settle.socket", cfg.Settle.Socket, settle},
		{"proxyd.admin_socket", cfg.Proxyd.AdminSocket, proxyd},
	}
	for _, c := range cases {
		var dirs []string
		for _, d := range c.unit["RuntimeDirectory"] {
			dirs = append(dirs, "/run/"+d)
		}
		if !slices.Contains(dirs, filepath.Dir(c.socket)) {
			t.Errorf("%s %s is not in its unit's RuntimeDirectory %v (the rest of /run is read-only to it)", c.key, c.socket, dirs)
		}
	}
	var ids []string
	for _, lc := range settle["LoadCredential"] {
		id, _, _ := strings.Cut(lc, ":")
		ids = append(ids, id)
	}
	if !slices.Contains(ids, cfg.Settle.HotKeyFile) {
		t.Errorf("settle.hot_key_file %q is none of peage-settle.service's credentials %v", cfg.Settle.HotKeyFile, ids)
	}
	// What image-test hands the box (settle/devchain/cmd/devchain's settings) completes it.
	env := []string{"PEAGE_PAYMENT_NETWORK=eip155:1337", "PEAGE_PAYMENT_ASSET=0x5FbDB2315678afecb367f032d93F642f64180aa3",
		"PEAGE_PAYMENT_PAY_TO=0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "PEAGE_SETTLE_RPC_URL=http://10.0.2.2:8545"}
	cfg, err = config.Load("roles/single.toml", env)
	if err != nil {
		t.Fatalf("with image-test's settings: %v", err)
	}
	if err := cfg.SettlePayment().Validate(); err != nil {
		t.Errorf("with image-test's settings the API would not start: %v", err)
	}
}

// TestNoSecretsBaked: the overlay carries no key or credential; they are made or handed to the
// box at first boot.
func TestNoSecretsBaked(t *testing.T) {
	secret := regexp.MustCompile(`(?i)(^|/)(credentials|credstore[^/]*)(/|$)|\.key$|hot-key$|private`)
	err := filepath.WalkDir("mkosi.extra", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if secret.MatchString(path) {
			t.Errorf("%s looks like a secret baked into the image", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSmokeSwitch: the smoke check runs only when image-test's kernel command line asks for it,
// powers the box off either way, and prints to the console the test reads.
func TestSmokeSwitch(t *testing.T) {
	unit := unitfile.Read(t, "mkosi.extra/usr/lib/systemd/system/appliance-smoke.service")
	checks := []struct{ section, key, want string }{
		{"Unit", "ConditionKernelCommandLine", "appliance.smoke=1"},
		{"Unit", "SuccessAction", "poweroff-force"},
		{"Unit", "FailureAction", "poweroff-force"},
		{"Service", "StandardOutput", "journal+console"},
		{"Service", "ExecStart", "/usr/lib/peage/smoke-check"},
	}
	for _, c := range checks {
		if got := one(t, unit, c.section, c.key); got != c.want {
			t.Errorf("appliance-smoke.service [%s] %s = %q, want %q", c.section, c.key, got, c.want)
		}
	}
	for _, script := range []string{"mkosi.extra/usr/lib/peage/smoke-check", "mkosi.extra/usr/lib/peage/boot-credentials", "mkosi.postinst.chroot"} {
		st, err := os.Stat(script)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode()&0o111 == 0 {
			t.Errorf("%s is not executable", script)
		}
	}
	b, err := os.ReadFile("mkosi.extra/usr/lib/peage/smoke-check")
	if err != nil {
		t.Fatal(err)
	}
	for _, marker := range []string{"APPLIANCE-SMOKE-OK", "APPLIANCE-SMOKE-FAIL", "/healthz", "--failed", "MemAvailable"} {
		if !strings.Contains(string(b), marker) {
			t.Errorf("smoke-check never mentions %s", marker)
		}
	}
}

// TestRoles: each role of `make image ROLE=...` has its default config, which loads with the
// appliance's own loader and bakes no secret; the postinst enables the role's target, which
// exists and conflicts with the other roles'; each daemon the target wants finds its socket in
// its unit's runtime directory; and what the operator hands the machine as peage.env
// completes it (the gateway's public names, the box's enrolment).
func TestRoles(t *testing.T) {
	build, err := os.ReadFile("build.sh")
	if err != nil {
		t.Fatal(err)
	}
	postinst, err := os.ReadFile("mkosi.postinst.chroot")
	if err != nil {
		t.Fatal(err)
	}
	makefile, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(makefile), `ROLE="$(ROLE)" image/build.sh`) || !regexp.MustCompile(`(?m)^ROLE \?= single$`).Match(makefile) {
		t.Error("make image does not pass ROLE (default single) to build.sh")
	}
	accepted := regexp.MustCompile(`(?m)^(\S+(?: \| \S+)*)\) ;;$`).FindSubmatch(build)
	files, _ := filepath.Glob("roles/*.toml")
	var roles []string
	for _, f := range files {
		roles = append(roles, strings.TrimSuffix(filepath.Base(f), ".toml"))
	}
	if accepted == nil || strings.Join(strings.Split(string(accepted[1]), " | "), " ") != strings.Join([]string{"single", "gateway", "box"}, " ") ||
		!slices.Equal(slices.Sorted(slices.Values(roles)), []string{"box", "gateway", "single"}) {
		t.Fatalf("build.sh accepts roles %q; roles/ holds %v", accepted, roles)
	}
	cases := []struct {
		role, target, daemon string
		env                  []string
		check                func(t *testing.T, cfg config.Config)
	}{
		{"single", "peage.target", "api", nil, func(t *testing.T, cfg config.Config) {}},
		{"gateway", "peage-gateway.target", "gateway", []string{"PEAGE_FLEET_LEAF_HOSTS=gateway.example"}, func(t *testing.T, cfg config.Config) {
			if !slices.Equal(cfg.Fleet.LeafHosts, []string{"gateway.example"}) {
				t.Errorf("fleet.leaf_hosts from peage.env: %v", cfg.Fleet.LeafHosts)
			}
			// Boxes reach both listeners through the firewall's fleet_ports.
			nft, err := os.ReadFile("../ops/nftables/peage.nft")
			if err != nil {
				t.Fatal(err)
			}
			ports := regexp.MustCompile(`define fleet_ports = \{ (\d+), (\d+) \}`).FindSubmatch(nft)
			for _, addr := range []string{cfg.Fleet.LeafAddr, cfg.Fleet.EnrolAddr} {
				if ports == nil || !strings.HasSuffix(addr, ":"+string(ports[1])) && !strings.HasSuffix(addr, ":"+string(ports[2])) {
					t.Errorf("%s is not on the firewall's fleet_ports", addr)
				}
			}
		}},
		{"box", "peage-box.target", "join", []string{"PEAGE_FLEET_BOX=line-1", "PEAGE_FLEET_GATEWAY=https://gateway.example:7423",
			"PEAGE_FLEET_TOKEN=t.p", "PEAGE_FLEET_COUNTRY=FR"}, func(t *testing.T, cfg config.Config) {
			if cfg.Fleet.Box != "line-1" || cfg.Fleet.Gateway != "https://gateway.example:7423" || cfg.Fleet.Token != "t.p" {
				t.Errorf("the box's enrolment from peage.env: %+v", cfg.Fleet)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.role, func(t *testing.T) {
			path := "roles/" + c.role + ".toml"
			cfg, err := config.Load(path, nil)
			if err != nil {
				t.Fatalf("%s does not load: %v", path, err)
			}
			if cfg.Payment.PayTo != "" || cfg.Fleet.Token != "" || cfg.Fleet.Credentials != "" {
				t.Errorf("%s bakes in what the operator hands the machine (pay_to %q, fleet.token %q, fleet.credentials %q)",
					path, cfg.Payment.PayTo, cfg.Fleet.Token, cfg.Fleet.Credentials)
			}
			if !regexp.MustCompile(`(?m)^` + c.role + `\) target=` + regexp.QuoteMeta(c.target) + ` ;;$`).Match(postinst) {
				t.Errorf("mkosi.postinst.chroot does not enable %s for role %s", c.target, c.role)
			}
			target := unitfile.Read(t, "../systemd/"+c.target)
			wants := strings.Fields(strings.Join(target["Unit"]["Wants"], " "))
			if !slices.Contains(wants, "peage-"+c.daemon+".service") {
				t.Errorf("%s does not want peage-%s.service: %v", c.target, c.daemon, wants)
			}
			exec := unitfile.Read(t, "../systemd/peage-"+c.daemon+".service")["Service"]["ExecStart"]
			if strings.Join(exec, " ") != "/usr/bin/appliance "+c.daemon+" --config /etc/peage/appliance.toml" {
				t.Errorf("peage-%s.service runs %v", c.daemon, exec)
			}
			// peage.target predates the roles; the fleet's targets conflict with it and each other.
			conflicts := strings.Fields(strings.Join(target["Unit"]["Conflicts"], " "))
			for _, other := range cases {
				if c.target != "peage.target" && other.target != c.target && !slices.Contains(conflicts, other.target) {
					t.Errorf("%s does not conflict with %s", c.target, other.target)
				}
			}
			sockets := map[string]string{"peage-settle.service": cfg.Settle.Socket, "peage-proxyd.service": cfg.Proxyd.AdminSocket}
			for _, unit := range wants {
				socket, ok := sockets[unit]
				if !ok {
					continue
				}
				var dirs []string
				for _, d := range unitfile.Read(t, "../systemd/"+unit)["Service"]["RuntimeDirectory"] {
					dirs = append(dirs, "/run/"+d)
				}
				if !slices.Contains(dirs, filepath.Dir(socket)) {
					t.Errorf("%s: %s's socket %s is not in its RuntimeDirectory %v", path, unit, socket, dirs)
				}
			}
			checkUpdater(t, c.role, c.target, wants, postinst)
			cfg, err = config.Load(path, c.env)
			if err != nil {
				t.Fatalf("%s with %v: %v", path, c.env, err)
			}
			c.check(t, cfg)
		})
	}
}

// checkUpdater: after a switch the updater restarts the role's target and checks the daemons
// it wants (its defaults are the single appliance's: a role's drop-ins say otherwise), and no
// role masks its updates (a box's join answers /healthz on its operator port since
// 2026-11-29, which the gate proves a version by).
func checkUpdater(t *testing.T, role, target string, wants []string, postinst []byte) {
	t.Helper()
	if regexp.MustCompile(`(?m)^\s*systemctl mask .*peage-update`).Match(postinst) {
		t.Errorf("mkosi.postinst.chroot masks the updates (role %s)", role)
	}
	var daemons []string
	for _, u := range wants {
		if u != "peage-firstboot.service" {
			daemons = append(daemons, u)
		}
	}
	switch role {
	case "single":
		if target != "peage.target" || !slices.Equal(slices.Sorted(slices.Values(update.DefaultUnits)), slices.Sorted(slices.Values(daemons))) {
			t.Errorf("the updater's defaults (peage.target, %v) are not the single role's (%s, %v)", update.DefaultUnits, target, daemons)
		}
	default:
		for _, unit := range []string{"peage-update.service", "peage-update-gate.service"} {
			dropIn := "roles/" + role + "-units/" + unit + ".d/50-role.conf"
			raw, err := os.ReadFile(dropIn)
			if err != nil {
				t.Fatal(err)
			}
			if !regexp.MustCompile(`(?m)^ExecStart=$`).Match(raw) {
				t.Errorf("%s does not reset ExecStart before its own", dropIn)
			}
			line := " " + strings.Join(unitfile.Read(t, dropIn)["Service"]["ExecStart"], " ") + " "
			want := []string{" -target " + target + " "}
			for _, d := range daemons {
				want = append(want, " -unit "+d+" ")
			}
			for _, w := range want {
				if !strings.Contains(line, w) {
					t.Errorf("%s: %q lacks%s", dropIn, line, w)
				}
			}
		}
	}
}
