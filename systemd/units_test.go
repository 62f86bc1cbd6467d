// Package units_test checks the systemd units shipped in this directory: `systemd-analyze
// verify` is clean, `systemd-analyze security --offline=yes` scores each service at most 2.0
// and as the README's table says, and each unit agrees with the code's defaults (socket
// paths, credential names, Type=notify). systemd-analyze comes from ops/setup.d/systemd.sh.
package units_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/peage/appliance/appliance/config"
	"github.com/peage/appliance/internal/credential"
	"github.com/peage/appliance/internal/receipt"
	"github.com/peage/appliance/internal/unitfile"
	"github.com/peage/appliance/proxyd"
	"github.com/peage/appliance/settle"
)

// maxExposure is the most `systemd-analyze security` may score a service (issue 20).
const maxExposure = 2.0

func analyze(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Fatal("systemd-analyze is missing: run ops/setup.d/systemd.sh (Debian package systemd)")
	}
	return p
}

// staged copies the units to a temporary directory with ExecStart= pointing at an executable
// that exists here (verify checks the binary), and returns the copies' paths by name.
func staged(t *testing.T) map[string]string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The image's two paths of the binary: the updater's current symlink and the factory copy.
	binaries := strings.NewReplacer("/usr/bin/appliance", self, "/usr/lib/peage/appliance", self)
	units, _ := filepath.Glob("peage*")
	dir := t.TempDir()
	out := map[string]string{}
	for _, u := range units {
		if strings.HasSuffix(u, ".go") {
			continue
		}
		b, err := os.ReadFile(u)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, u)
		if err := os.WriteFile(p, []byte(binaries.Replace(string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
		out[u] = p
	}
	if len(out) < 6 {
		t.Fatalf("only %d units found", len(out))
	}
	return out
}

// TestUnitsVerify: systemd-analyze verify says nothing about any unit.
func TestUnitsVerify(t *testing.T) {
	sa := analyze(t)
	units := staged(t)
	args := []string{"verify", "--man=no"}
	for _, p := range units {
		args = append(args, p)
	}
	out, err := exec.Command(sa, args...).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}

var overall = regexp.MustCompile(`Overall exposure level for (\S+): (\d+\.\d)`)

// readmeScores reads the score table of README.md ("| `peage-api.service` | 1.9 | ...").
func readmeScores(t *testing.T) map[string]float64 {
	t.Helper()
	f, err := os.Open("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	row := regexp.MustCompile("^\\| `(peage[^`]*\\.service)` \\| (\\d+\\.\\d) \\|")
	scores := map[string]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := row.FindStringSubmatch(sc.Text()); m != nil {
			scores[m[1]], _ = strconv.ParseFloat(m[2], 64)
		}
	}
	return scores
}

// TestUnitsSecurity: every service scores at most 2.0 offline (systemd-analyze's own
// --threshold check) and the README states each score as measured.
func TestUnitsSecurity(t *testing.T) {
	sa := analyze(t)
	readme := readmeScores(t)
	for name, p := range staged(t) {
		if !strings.HasSuffix(name, ".service") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			out, err := exec.Command(sa, "security", "--offline=yes", "--threshold="+strconv.Itoa(int(maxExposure*10)), p).CombinedOutput()
			m := overall.FindStringSubmatch(string(out))
			if m == nil {
				t.Fatalf("no overall score in:\n%s", out)
			}
			score, _ := strconv.ParseFloat(m[2], 64)
			if err != nil || score > maxExposure {
				t.Fatalf("%s scores %.1f (%v), want at most %.1f:\n%s", name, score, err, maxExposure, out)
			}
			if want, ok := readme[name]; !ok || want != score {
				t.Errorf("README.md says %s scores %v (listed: %v); systemd-analyze says %.1f", name, want, ok, score)
			}
		})
	}
}

// TestUnitsMatchTheCode: what the units promise is what the daemons do and expect.
func TestUnitsMatchTheCode(t *testing.T) {
	cfg := config.Default()
	settleSock, proxydSock := settle.DefaultConfig().Socket, proxyd.DefaultConfig().AdminSocket
	cases := []struct {
		unit string
		want map[string]string
	}{
		{"peage-api.service", map[string]string{
			"Type": "notify", "NotifyAccess": "main", "WatchdogSec": "30s", "Slice": "peage-browsers.slice",
			"User": "peage-api", "Group": "peage", "StateDirectory": "peage-api", "Environment": "PEAGE_STATE_DIR=/var/lib/peage-api",
			"LoadCredential": cfg.Admin.TokenFile + ":" + credential.Dir + "/" + credential.OperatorToken + " " +
				cfg.Payment.ReceiptKeys + ":" + credential.Dir + "/" + receipt.CredentialName,
			"Requires": "peage-firstboot.service", "EnvironmentFile": "-/etc/peage/setup.env",
		}},
		{"peage-settle.service", map[string]string{
			"Type": "notify", "NotifyAccess": "main", "WatchdogSec": "30s",
			"User": "peage-settle", "Group": "peage", "StateDirectory": "peage-settle", "Environment": "PEAGE_STATE_DIR=/var/lib/peage-settle",
			"RuntimeDirectory": strings.TrimPrefix(filepath.Dir(settleSock), "/run/"), "RuntimeDirectoryMode": "0750",
			"LoadCredential": settle.DefaultConfig().HotKeyFile + ":" + credential.Dir + "/" + credential.SettleHotKey,
			"Requires":       "peage-firstboot.service", "EnvironmentFile": "-/etc/peage/setup.env",
		}},
		{"peage-proxyd.service", map[string]string{
			"Type": "notify", "NotifyAccess": "main", "WatchdogSec": "30s",
			"User": "peage-proxyd", "Group": "peage", "StateDirectory": "peage-proxyd",
			"Environment":      "PEAGE_STATE_DIR=/var/lib/peage-proxyd GODEBUG=" + proxyd.MonitorGODEBUG,
			"RuntimeDirectory": strings.TrimPrefix(filepath.Dir(proxydSock), "/run/"), "RuntimeDirectoryMode": "0750",
			"EnvironmentFile": "-/etc/peage/setup.env",
		}},
		// The fleet's two daemons run as the API's user (which the firewall confines) in its
		// state directory, one role per machine.
		{"peage-gateway.service", map[string]string{
			"Type": "notify", "NotifyAccess": "main", "WatchdogSec": "30s", "Slice": "peage.slice",
			"ExecStart": "/usr/bin/appliance gateway --config /etc/peage/appliance.toml",
			"User":      "peage-api", "Group": "peage", "StateDirectory": "peage-api", "Environment": "PEAGE_STATE_DIR=/var/lib/peage-api",
			"LoadCredential": cfg.Admin.TokenFile + ":" + credential.Dir + "/" + credential.OperatorToken + " " +
				cfg.Payment.ReceiptKeys + ":" + credential.Dir + "/" + receipt.CredentialName,
			"Conflicts": "peage-api.service peage-join.service", "WantedBy": "peage-gateway.target",
		}},
		{"peage-join.service", map[string]string{
			"Type": "notify", "NotifyAccess": "main", "WatchdogSec": "30s", "Slice": "peage-browsers.slice",
			"ExecStart": "/usr/bin/appliance join --config /etc/peage/appliance.toml",
			"User":      "peage-api", "Group": "peage", "StateDirectory": "peage-api", "Environment": "PEAGE_STATE_DIR=/var/lib/peage-api",
			"LoadCredential": "", "Conflicts": "peage-api.service peage-gateway.service", "WantedBy": "peage-box.target",
		}},
		{"peage-gateway.target", map[string]string{
			"Wants":     "peage-firstboot.service peage-gateway.service peage-settle.service peage-proxyd.service",
			"Conflicts": "peage.target peage-box.target",
		}},
		{"peage-box.target", map[string]string{
			"Wants": "peage-firstboot.service peage-join.service peage-proxyd.service", "Conflicts": "peage.target peage-gateway.target",
		}},
		{"peage-firstboot.service", map[string]string{
			"Type": "oneshot", "RemainAfterExit": "yes", "ExecStart": "/usr/bin/appliance firstboot",
			"Before": "peage-api.service peage-settle.service peage-proxyd.service", "PrivateNetwork": "yes",
		}},
		{"peage-browsers.slice", map[string]string{"MemoryHigh": "3G", "MemoryMax": "4G", "MemorySwapMax": "0"}},
	}
	for _, c := range cases {
		got := unitfile.Flat(t, c.unit)
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%s: %s=%q, want %q", c.unit, k, got[k], v)
			}
		}
	}
	sysusers, err := os.ReadFile("sysusers.d/peage.conf")
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"peage-api", "peage-settle", "peage-proxyd"} {
		if !regexp.MustCompile(`(?m)^u ` + u + `\s+-:peage\s`).Match(sysusers) {
			t.Errorf("sysusers.d/peage.conf does not make %s in group peage", u)
		}
	}
}
