package image

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// TestRolePresets applies each role's presets as mkosi does after mkosi.postinst.chroot
// (`systemctl --root preset-all`) to a root holding the repository's units, and checks that
// multi-user.target wants the role's target and no other role's, and no other role's daemon is
// enabled. Without them preset-all enabled all three targets, which conflict: the single image
// booted the gateway, which stopped the API.
func TestRolePresets(t *testing.T) {
	systemctl, err := exec.LookPath("systemctl")
	if err != nil {
		t.Fatal("systemctl is missing: run ops/setup.d/systemd.sh (Debian package systemd)")
	}
	var units []string
	for _, pattern := range []string{"*.service", "*.target", "*.slice", "*.socket", "*.timer"} {
		m, err := filepath.Glob(filepath.Join("../systemd", pattern))
		if err != nil {
			t.Fatal(err)
		}
		units = append(units, m...)
	}
	roles := []struct{ role, target, daemon string }{
		{"single", "peage.target", "peage-api.service"},
		{"gateway", "peage-gateway.target", "peage-gateway.service"},
		{"box", "peage-box.target", "peage-join.service"},
	}
	for _, c := range roles {
		t.Run(c.role, func(t *testing.T) {
			root := t.TempDir()
			copyInto(t, filepath.Join(root, "usr/lib/systemd/system"), units...)
			preset, err := os.ReadFile("roles/" + c.role + ".preset")
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(root, "usr/lib/systemd/system-preset/10-peage-role.preset"), preset)
			if out, err := exec.Command(systemctl, "--root="+root, "preset-all").CombinedOutput(); err != nil {
				t.Fatalf("systemctl preset-all: %v\n%s", err, out)
			}
			wants, _ := filepath.Glob(filepath.Join(root, "etc/systemd/system/multi-user.target.wants/peage*.target"))
			var targets []string
			for _, w := range wants {
				targets = append(targets, filepath.Base(w))
			}
			if !slices.Equal(targets, []string{c.target}) {
				t.Errorf("multi-user.target wants %v after preset-all, want only %s", targets, c.target)
			}
			// The smoke check waits for every enabled daemon to be active.
			for _, other := range roles {
				enabled, _ := filepath.Glob(filepath.Join(root, "etc/systemd/system/*.wants", other.daemon))
				if other.role != c.role && len(enabled) > 0 {
					t.Errorf("role %s's daemon %s is enabled (%v)", other.role, other.daemon, enabled)
				}
			}
		})
	}
}

func copyInto(t *testing.T, dir string, files ...string) {
	t.Helper()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, filepath.Base(f)), b)
	}
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
